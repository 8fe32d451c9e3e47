"""Plan optimization: candidate generation, screening and ranking."""
