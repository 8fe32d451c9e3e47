"""What a GPU is: memory, bandwidth, dense compute per dtype, power and interconnect."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from costsim.domain.precision import Dtype

# HGX/DGX baseboards and the largest cloud GPU instances hold 8 GPUs joined by NVLink; a job
# on more GPUs spans several such nodes joined by the cluster network.
GPUS_PER_NODE = 8


class CapacityBasis(StrEnum):
    """Where a GPU's ``capacity_bytes`` comes from (README "GPU catalog")."""

    DRIVER = "driver"  # nvidia-smi memory.total (or the host's report of it) seen in a cited source
    PROVIDER = "provider"  # the cloud provider's API figure for the card
    NOMINAL = "nominal"  # the vendor's "80 GB" label taken as 80 GiB


class FormFactor(StrEnum):
    """How the card is packaged; SXM/OAM parts sit on a baseboard with a GPU-to-GPU fabric."""

    SXM = "sxm"
    PCIE = "pcie"
    OAM = "oam"
    SUPERCHIP = "superchip"


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuSpec:
    """One GPU model. All TFLOPS figures are dense (never the 2:4-sparse headline).

    ``None`` means the GPU has no such mode (bf16 on a V100) or no figure is published.
    """

    name: str
    aliases: tuple[str, ...]
    vendor: str
    generation: str
    capacity_bytes: int
    capacity_basis: CapacityBasis
    memory_label_gb: int
    memory_type: str
    memory_bandwidth_gb_per_s: float
    fp32_tflops: float
    tf32_tflops: float | None
    bf16_tflops: float | None
    fp16_tflops: float
    fp8_tflops: float | None
    int8_tops: float | None
    tdp_w: float
    nvlink_gb_per_s_per_direction: float | None
    pcie_generation: int
    form_factor: FormFactor
    launch_year: int
    source: str
    source_date: str
    notes: str = ""

    def __post_init__(self) -> None:
        if self.capacity_bytes <= 0:
            raise ValueError(f"GPU {self.name}: capacity_bytes must be > 0")
        if self.memory_bandwidth_gb_per_s <= 0 or self.fp16_tflops <= 0 or self.fp32_tflops <= 0:
            raise ValueError(f"GPU {self.name}: bandwidth and compute must be > 0")

    def dense_tflops(self, dtype: Dtype) -> float | None:
        """Dense tensor throughput for ``dtype`` in TFLOPS (TOPS for int8); None if unsupported."""
        match dtype:
            case Dtype.FP32:
                return self.fp32_tflops
            case Dtype.TF32:
                return self.tf32_tflops
            case Dtype.BF16:
                return self.bf16_tflops
            case Dtype.FP16:
                return self.fp16_tflops
            case Dtype.FP8:
                return self.fp8_tflops
            case Dtype.INT8:
                return self.int8_tops
            case _:
                return None

    def supports(self, dtype: Dtype) -> bool:
        """True when the GPU computes natively in ``dtype``."""
        return self.dense_tflops(dtype) is not None

    @property
    def default_precision(self) -> Dtype:
        """bf16 where the GPU has it, else fp16 (the ``--precision`` default)."""
        return Dtype.BF16 if self.bf16_tflops is not None else Dtype.FP16

    @property
    def has_nvlink(self) -> bool:
        """True when GPUs of this model talk over NVLink (or an equivalent fabric)."""
        return bool(self.nvlink_gb_per_s_per_direction)
