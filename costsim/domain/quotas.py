"""GPU quotas: the most GPUs of a type a cloud lets the buyer hold (DESIGN §13 ``quotas:``).

A cloud's service quota caps what can be provisioned whatever the plan wants: AWS counts
on-demand and spot GPU instances against per-region limits, GCP and Azure per-region GPU
quotas per family. costsim states them in GPUs. A quota applies to a pool when its cloud and
GPU match and its region and option match or are left open; where several apply, the smallest
binds (every one must hold).
"""

from __future__ import annotations

from dataclasses import dataclass

from costsim.domain.plans import MAX_GPUS
from costsim.domain.pricing import PurchaseOption
from costsim.errors import ScenarioError

# the option words a quota may name: an exact purchase option, or `reserved` for all six
QUOTA_OPTIONS = ("on-demand", "spot", "reserved", *(o.value for o in PurchaseOption
                                                     if o.is_reserved))


@dataclass(frozen=True, slots=True, kw_only=True)
class Quota:
    """At most ``max_gpus`` GPUs of ``gpu`` on ``cloud`` (in ``region``: None for all of the
    cloud's regions, each capped on its own) bought as ``option`` (None: every option but
    owned, which no cloud quota covers). ``index`` is its place in the file's ``quotas:``."""

    cloud: str
    gpu: str
    max_gpus: int
    region: str | None = None
    option: str | None = None
    index: int = 0

    def __post_init__(self) -> None:
        if not 0 <= self.max_gpus <= MAX_GPUS:
            raise ScenarioError("", f"quotas.{self.index}.max_gpus",
                                f"must be 0..{MAX_GPUS} GPUs, got {self.max_gpus}")
        if self.option is not None and self.option not in QUOTA_OPTIONS:
            raise ScenarioError("", f"quotas.{self.index}.option",
                                f"must be one of {', '.join(QUOTA_OPTIONS)}, got "
                                f"'{self.option}'")

    def applies(self, *, cloud: str, region: str, gpu: str, option: PurchaseOption) -> bool:
        """Whether this quota counts a pool of ``gpu`` on ``cloud``/``region`` as ``option``."""
        if option is PurchaseOption.OWNED:
            return False
        if self.cloud.lower() != cloud.lower() or self.gpu != gpu:
            return False
        if self.region is not None and self.region.lower() != region.lower():
            return False
        if self.option is None:
            return True
        if self.option == "reserved":
            return option.is_reserved
        return self.option == option.value

    def describe(self) -> str:
        """``the quota of 32 GPUs (quotas[0])`` as reasons name it."""
        return f"the quota of {self.max_gpus} GPUs (quotas[{self.index}])"


def binding_quota(quotas: tuple[Quota, ...], *, cloud: str, region: str, gpu: str,
                  option: PurchaseOption) -> Quota | None:
    """The smallest quota that applies to the pool, or None when none does."""
    found = [q for q in quotas if q.applies(cloud=cloud, region=region, gpu=gpu, option=option)]
    return min(found, key=lambda q: (q.max_gpus, q.index)) if found else None
