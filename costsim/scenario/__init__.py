"""Scenario files: YAML text → validated frozen domain objects (yaml and pydantic only here)."""
