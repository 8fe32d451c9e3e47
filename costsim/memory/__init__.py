"""Memory engine: per-GPU bytes for training, fine-tuning and inference; fit verdicts; searches."""
