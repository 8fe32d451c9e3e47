"""Shipped data and its lookups: model presets, the GPU catalog, the price book."""
