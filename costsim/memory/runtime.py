"""Runtime overhead constants and the headroom policy (memory-estimators.md §3.10 and §6).

Every number below is a published default or the middle of a published range, never a value
fitted to a validation case.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from costsim.units import BYTES_PER_GIB


class Verdict(StrEnum):
    """Does the configuration fit the GPU?"""

    FITS = "fits"  # total ≤ usable × (1 − margin)
    TIGHT = "tight"  # within the margin below usable
    OOM = "oom"  # total > usable


VERDICT_BY_CODE = (Verdict.FITS, Verdict.TIGHT, Verdict.OOM)


@dataclass(frozen=True, slots=True, kw_only=True)
class HeadroomPolicy:
    """How much of a GPU a plan may use, and the runtime costs added to every estimate.

    * ``train_utilization`` 0.95 and ``infer_utilization`` 0.90: usable = capacity × cap. 0.90 is
      vLLM's ``gpu_memory_utilization`` default; 0.95 for training follows the survey's proposal
      (§6) — the remaining 5 % covers memory outside PyTorch's allocator (NCCL, cuBLAS
      workspaces) that no term below models.
    * ``tight_margin`` 0.05: the band below usable reported as ``tight`` (§6).
    * ``cuda_context_bytes`` 1 GiB: CUDA context and kernels; published figures 0.3–2 GiB
      (asmirnov calculator), 0.5–1 GB (gpu_poor README), 1343 MiB measured on a V100 (HF docs);
      1 GiB is the middle of the survey's 0.5–1.3 GiB range.
    * ``fragmentation_fraction`` 0.10 of the allocated bytes (training) or of the activations
      (inference): the caching allocator's reserved-but-unused memory, published range 5–10 %
      (Megatron adds 5 %; the ZeRO paper reports OOM with 30 % free in extreme cases). The upper
      end is taken because a feasibility verdict should err toward "does not fit". Inference
      applies it to activations only: engines preallocate the weights and a paged KV pool
      (PagedAttention wastes < 4 % of KV memory, Kwon et al. 2023).
    * ``zero_bucket_elements`` 5e8 × 2 B: DeepSpeed's default allgather/reduce bucket, as the
      EleutherAI cookbook counts it; capped at the rank's trainable parameters.
    * ``zero3_max_live_params`` 1e9: DeepSpeed ``stage3_max_live_parameters`` default; the
      gathered working set is two layers (current + prefetched) or the embedding plus one layer
      (FSDP / llm-analysis), whichever is larger, capped by it.
    * ``prefill_chunk_tokens`` 8192: tokens processed in one forward pass when serving (vLLM
      chunked-prefill ``max_num_batched_tokens`` order of magnitude); bounds inference
      activations.
    """

    train_utilization: float = 0.95
    infer_utilization: float = 0.90
    tight_margin: float = 0.05
    cuda_context_bytes: int = BYTES_PER_GIB
    fragmentation_fraction: float = 0.10
    zero_bucket_elements: float = 5e8
    zero_bucket_element_bytes: float = 2.0
    zero3_max_live_params: float = 1e9
    prefill_chunk_tokens: int = 8192

    def __post_init__(self) -> None:
        for key in ("train_utilization", "infer_utilization"):
            value = getattr(self, key)
            if not 0.0 < value <= 1.0:
                raise ValueError(f"{key} must be in (0, 1] (got {value})")
        if not 0.0 <= self.tight_margin < 1.0:
            raise ValueError(f"tight_margin must be in [0, 1) (got {self.tight_margin})")
        if self.fragmentation_fraction < 0 or self.cuda_context_bytes < 0:
            raise ValueError("fragmentation_fraction and cuda_context_bytes must be >= 0")


DEFAULT_POLICY = HeadroomPolicy()

# docs/performance.md "Imbalance warnings": a GPU is "far too big" for a job using < 30 % of it;
# training and serving estimates warn below this share of the usable bytes.
LOW_MEMORY_USE = 0.30


def verdict_for(total_bytes: float, usable_bytes: float, margin: float) -> Verdict:
    """``fits`` / ``tight`` / ``oom`` for one total against one usable capacity."""
    if total_bytes > usable_bytes:
        return Verdict.OOM
    if total_bytes > usable_bytes * (1.0 - margin):
        return Verdict.TIGHT
    return Verdict.FITS
