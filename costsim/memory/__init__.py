"""Memory engine: per-GPU bytes for training, fine-tuning and inference; fit verdicts; searches.

Entry points (see docs/memory.md): :func:`estimate_training`, :func:`estimate_inference`,
:func:`kv_cache_bytes_per_token`, :func:`max_kv_tokens`, :func:`max_micro_batch`,
:func:`max_batch`, :func:`fitting_layouts`, :func:`smallest_gpu_count`; the vectorized path in
:mod:`costsim.memory.vectorized`.
"""

from costsim.memory.estimate import (
    MemoryEstimate,
    estimate_inference,
    estimate_training,
    kv_cache_bytes_per_token,
    max_kv_tokens,
)
from costsim.memory.runtime import DEFAULT_POLICY, HeadroomPolicy, Verdict
from costsim.memory.search import (
    LayoutFit,
    fitting_layouts,
    jobs_sharing_node,
    max_batch,
    max_micro_batch,
    n_plus_one_fits,
    smallest_gpu_count,
)

__all__ = [
    "DEFAULT_POLICY", "HeadroomPolicy", "LayoutFit", "MemoryEstimate", "Verdict",
    "estimate_inference", "estimate_training", "fitting_layouts", "jobs_sharing_node",
    "kv_cache_bytes_per_token", "max_batch", "max_kv_tokens", "max_micro_batch",
    "n_plus_one_fits", "smallest_gpu_count",
]
