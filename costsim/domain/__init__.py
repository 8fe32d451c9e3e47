"""Frozen value objects and enums shared by two or more layers; no I/O."""
