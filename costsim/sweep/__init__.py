"""Sweeps over scenario variants, locally or on a Dask cluster (dask and pyarrow only here)."""
