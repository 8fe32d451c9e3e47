"""Unit constants and converters.

Memory sizes are bytes inside costsim; GiB (2**30) is the unit for memory sizes shown to people,
GB (10**9) only for bandwidth and vendor labels. Time is seconds inside.
"""

from typing import Final

BYTES_PER_KIB: Final = 2**10
BYTES_PER_MIB: Final = 2**20
BYTES_PER_GIB: Final = 2**30
BYTES_PER_GB: Final = 10**9
BYTES_PER_MB: Final = 10**6

SECONDS_PER_MINUTE: Final = 60.0
SECONDS_PER_HOUR: Final = 3600.0
SECONDS_PER_DAY: Final = 86_400.0
HOURS_PER_DAY: Final = 24.0
# Cloud providers bill a "month" as 730 hours (8760 h / 12): AWS and GCP price pages.
HOURS_PER_MONTH: Final = 730.0
HOURS_PER_YEAR: Final = 8760.0

FLOPS_PER_TFLOPS: Final = 1e12


def gib_to_bytes(gib: float) -> int:
    """Return the number of bytes in ``gib`` GiB, rounded to a whole byte."""
    return round(gib * BYTES_PER_GIB)


def bytes_to_gib(n_bytes: float) -> float:
    """Return ``n_bytes`` expressed in GiB (2**30 bytes)."""
    return n_bytes / BYTES_PER_GIB


def bytes_to_gb(n_bytes: float) -> float:
    """Return ``n_bytes`` expressed in GB (10**9 bytes)."""
    return n_bytes / BYTES_PER_GB
