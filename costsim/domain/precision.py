"""Numeric formats for compute, weights and the KV cache."""

from __future__ import annotations

from enum import StrEnum


class Dtype(StrEnum):
    """A number format; the value is the spelling used on the command line and in files."""

    FP32 = "fp32"
    TF32 = "tf32"
    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"
    INT8 = "int8"
    INT4 = "int4"
    NF4 = "nf4"

    @property
    def bytes_per_element(self) -> float:
        """Storage bytes of one element, without any quantization constants."""
        return _BYTES[self]

    @property
    def is_float16(self) -> bool:
        """True for the two 16-bit float formats."""
        return self in (Dtype.BF16, Dtype.FP16)


# tf32 is a compute mode of fp32 tensors: stored as 4 bytes.
_BYTES: dict[Dtype, float] = {
    Dtype.FP32: 4.0,
    Dtype.TF32: 4.0,
    Dtype.BF16: 2.0,
    Dtype.FP16: 2.0,
    Dtype.FP8: 1.0,
    Dtype.INT8: 1.0,
    Dtype.INT4: 0.5,
    Dtype.NF4: 0.5,
}
