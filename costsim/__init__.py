"""costsim: a cost-optimization simulator for cloud GPU procurement."""

__version__ = "0.1.0"
