"""The scenario file's plans: per-phase GPU use, reservations bought, servers bought."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag, model_validator

from costsim.domain.api_pricing import (
    MAX_OUTPUT_TOKENS_PER_S,
    MAX_REQUESTS_PER_MINUTE,
    MAX_TOKENS_PER_MINUTE,
    MAX_TTFT_S,
)
from costsim.domain.commitments import MAX_BLOCK_DAYS, MAX_USD_PER_HOUR, MIN_BLOCK_DAYS
from costsim.domain.plans import MAX_GPUS, MAX_SERVERS
from costsim.domain.pricing import Payment, PurchaseOption
from costsim.scenario.spec_common import Date, Name, Number, Spec, Term, Whole

# `option: reserved` with `term` and `payment`, or one of the exact option strings.
OptionWord = Literal["on-demand", "spot", "reserved", "owned", "reserved-1y-no-upfront",
                     "reserved-1y-partial-upfront", "reserved-1y-all-upfront",
                     "reserved-3y-no-upfront", "reserved-3y-partial-upfront",
                     "reserved-3y-all-upfront", "api"]
Overflow = Literal["on-demand", "spot"]
# A fleet entry's traffic list has one share per request bucket: at most as many as a phase's
# `requests` list may hold (spec_phases.RequestsSpec).
MAX_TRAFFIC_BUCKETS = 1000


class AutoscaleSpec(Spec):
    """Serving autoscaler bounds (none: the documented defaults of docs/simulator.md)."""

    min: Whole = Field(1, ge=0, le=MAX_GPUS, description="fewest replicas")
    max: Whole | None = Field(None, ge=1, le=MAX_GPUS, description="most replicas (>= min)")
    target_utilization: Number | None = Field(None, ge=0.05, le=1,
                                              description="utilization a replica is sized to")
    scale_up_delay_s: Number | None = Field(None, ge=0, le=86_400,
                                            description="time to add a replica")


class UseEntrySpec(Spec):
    """One GPU type a phase uses, with its purchase option."""

    gpu: Name | None = Field(None, description="GPU name (catalog names, aliases, nvidia-smi "
                             "names); required unless option is api")
    option: OptionWord = Field("on-demand", description="on-demand, spot, reserved (with term "
                               "and payment), owned, an exact reserved-<term>-<payment>, or "
                               "api (a serving phase calls a pay-per-token API, with provider)")
    term: Term | None = Field(None, description="1y or 3y (with option reserved)")
    payment: Payment | None = Field(None, description="with option reserved (default "
                                    "no-upfront)")
    count: Whole | None = Field(None, ge=1, le=MAX_GPUS, description="GPUs, rounded up to "
                                "whole instances (none: elastic, an instance per job/replica)")
    spill: Overflow | None = Field(None, description="where work beyond a reserved/owned "
                                   "count goes")
    fallback: Literal["on-demand"] | None = Field(None, description="takes over when spot "
                                                  "capacity is preempted")
    spot_share: Number | None = Field(None, ge=0, le=1, description="share of an elastic "
                                      "fleet on spot")
    cloud: Name | None = Field(None, description="cloud (none: the plan's, else the cheapest "
                               "non-marketplace one)")
    region: Name | None = Field(None, description="region (none: the plan's, else any)")
    autoscale: AutoscaleSpec | None = Field(None, description="serving replica bounds")
    traffic: list[Annotated[Number, Field(ge=0, le=1)]] | None = Field(
        None, min_length=1, max_length=MAX_TRAFFIC_BUCKETS,
        description="serving: the share (each in [0, 1]) of each request size, in the phase's "
        "`requests` order, this entry serves; over a fleet each size's shares add up to 1, and "
        "every entry gives them or none does (none: each size goes whole to the cheapest entry)")
    provider: Name | None = Field(None, description="with option api: the API provider "
                                  "(docs/pricing.md; costsim/data/api_prices.csv or the price "
                                  "file's API rows)")
    requests_per_minute: Number | None = Field(
        None, gt=0, le=MAX_REQUESTS_PER_MINUTE, description="with option api: the rate limit "
        "in requests per minute (none: the provider's published one, else no limit)")
    tokens_per_minute: Number | None = Field(
        None, gt=0, le=MAX_TOKENS_PER_MINUTE, description="with option api: the rate limit "
        "in prompt + output tokens per minute (none: the provider's published one, else none)")
    ttft_s: Number | None = Field(None, gt=0, le=MAX_TTFT_S, description="with option api: "
                                  "median time to first token (none: the provider's published "
                                  "figure)")
    output_tokens_per_s: Number | None = Field(
        None, gt=0, le=MAX_OUTPUT_TOKENS_PER_S, description="with option api: median output "
        "tokens per second of a request (none: the provider's published figure)")

    @model_validator(mode="after")
    def _api_words(self) -> UseEntrySpec:
        api_keys = [key for key in ("provider", "requests_per_minute", "tokens_per_minute",
                                    "ttft_s", "output_tokens_per_s")
                    if getattr(self, key) is not None]
        if self.option == "api":
            if self.provider is None:
                raise ValueError("option 'api' needs a provider (e.g. together)")
            if self.gpu is not None:
                raise ValueError("option 'api' runs on the provider's hardware; leave gpu out")
        else:
            if api_keys:
                raise ValueError(f"{', '.join(api_keys)} go(es) with option 'api'; option is "
                                 f"'{self.option}'")
            if self.gpu is None:
                raise ValueError("a use entry needs a gpu (or option: api with a provider)")
        return self

    @model_validator(mode="after")
    def _reserved_words(self) -> UseEntrySpec:
        if self.option == "reserved" and self.term is None:
            raise ValueError("option 'reserved' needs a term: 1y or 3y")
        if self.option != "reserved" and (self.term or self.payment):
            exact = self.option.startswith("reserved-")
            word = self.option if exact else f"'{self.option}'"
            raise ValueError(f"term and payment go with option 'reserved'; option {word} "
                             + ("already says both" if exact else "has neither"))
        return self

    def purchase_option(self) -> PurchaseOption:
        """The exact option this entry means."""
        if self.option == "reserved":
            return PurchaseOption.reserved(int(str(self.term)[0]),
                                           self.payment or Payment.NO_UPFRONT)
        return PurchaseOption(self.option)


class FleetSpec(Spec):
    """Several GPU types serving one phase; each request size goes to the cheapest entry, or is
    split by the entries' ``traffic`` shares."""

    fleet: list[UseEntrySpec] = Field(min_length=1, max_length=16,
                                      description="the GPU types of a serving fleet")


def _use_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "fleet" if "fleet" in value else "entry"
    return "fleet" if isinstance(value, FleetSpec) else "entry"


UseSpec = Annotated[
    Annotated[UseEntrySpec, Tag("entry")] | Annotated[FleetSpec, Tag("fleet")],
    Discriminator(_use_kind),
]


class CommitmentSpec(Spec):
    """A reservation the plan buys: the whole obligation is owed."""

    kind: Literal["reservation"] = Field("reservation", description="reservation (1y/3y "
                                         "instances), savings-plan or capacity-block")
    gpu: Name = Field(description="GPU name")
    count: Whole = Field(ge=1, le=MAX_GPUS, description="GPUs, rounded up to whole instances")
    term: Term = Field(description="1y or 3y")
    payment: Payment = Field(Payment.NO_UPFRONT, description="no-upfront, partial-upfront or "
                             "all-upfront")
    start: Date = Field(description="first day of the term (within the horizon)")
    cloud: Name | None = Field(None, description="cloud (none: the cheapest)")
    region: Name | None = Field(None, description="region (none: any)")


class SavingsPlanSpec(Spec):
    """A spend-based savings plan: `usd_per_hour` of discounted spend committed every hour of
    the term; eligible on-demand usage is billed against it, the rest on demand, unused
    commitment is paid and idle (docs/pricing.md)."""

    kind: Literal["savings-plan"] = Field(description="savings-plan")
    cloud: Name = Field(description="the cloud selling the plan (aws, azure, gcp)")
    usd_per_hour: Number = Field(gt=0, le=MAX_USD_PER_HOUR, description="the hourly commitment, "
                                 "in $ at the plan's discounted rates")
    term: Term = Field(description="1y or 3y")
    payment: Payment = Field(Payment.NO_UPFRONT, description="no-upfront, partial-upfront or "
                             "all-upfront (as the cloud sells them)")
    start: Date = Field(description="first day of the term (within the horizon)")
    family: Name | None = Field(None, description="the GPU type an instance-family plan covers "
                                "(AWS EC2 Instance Savings Plan); give this or compute")
    compute: bool | None = Field(None, description="true: a compute plan covering every GPU "
                                 "type on the cloud (AWS Compute Savings Plan, Azure savings "
                                 "plan, GCP flexible CUD); give this or family")

    @model_validator(mode="after")
    def _scope(self) -> SavingsPlanSpec:
        if (self.family is None) == (not self.compute):
            raise ValueError("a savings plan covers one family (family: GPU) or the whole "
                             "cloud (compute: true): give exactly one")
        return self


class CapacityBlockSpec(Spec):
    """GPUs for a fixed window, paid whole up front; training phases on that GPU type inside
    the window run on it (docs/simulator.md)."""

    kind: Literal["capacity-block"] = Field(description="capacity-block")
    gpu: Name = Field(description="GPU name")
    count: Whole = Field(ge=1, le=MAX_GPUS, description="GPUs, rounded up to whole instances")
    cloud: Name = Field(description="the cloud selling the block (aws; gcp calendar mode)")
    start: Date = Field(description="first day of the window (within the horizon)")
    days: Whole = Field(ge=MIN_BLOCK_DAYS, le=MAX_BLOCK_DAYS, description="length of the "
                        "window; the price book narrows it per cloud (AWS 1-182, GCP 1-90)")


def _commitment_kind(value: Any) -> str:
    if isinstance(value, dict):
        kind = value.get("kind", "reservation")
        return kind if isinstance(kind, str) else "reservation"  # an unknown word: tag error
    if isinstance(value, SavingsPlanSpec):
        return "savings-plan"
    return "capacity-block" if isinstance(value, CapacityBlockSpec) else "reservation"


AnyCommitmentSpec = Annotated[
    Annotated[CommitmentSpec, Tag("reservation")]
    | Annotated[SavingsPlanSpec, Tag("savings-plan")]
    | Annotated[CapacityBlockSpec, Tag("capacity-block")],
    Discriminator(_commitment_kind),
]


class OwnedSpec(Spec):
    """Servers the plan buys; parts left out keep the server's bill of materials."""

    server: Name = Field(description="a shipped server (costsim servers) or one of the "
                         "scenario's servers:")
    count: Whole = Field(ge=1, le=MAX_SERVERS, description="servers")
    purchase: Date = Field(description="purchase date (within the horizon)")
    life_years: Number | None = Field(None, ge=0.5, le=15, description="depreciation life "
                                      "(none: the server's)")
    ram_gib: Whole | None = Field(None, ge=1, le=65_536, description="host RAM per server (a "
                                  "training node short of its need makes the plan infeasible)")
    nvme_tb: Number | None = Field(None, gt=0, le=1_000, description="NVMe per server (3.84 TB "
                                   "drives; holds the dataset share and checkpoints)")
    cpu_cores: Whole | None = Field(None, ge=1, le=1_024, description="CPU cores per server "
                                    "(priced per core; under 4 per GPU slows training)")
    nic_gbps: Number | None = Field(None, gt=0, le=12_800, description="compute network per "
                                    "server (whole NICs of the server's model)")


class PlanSpec(Spec):
    """A candidate procurement plan."""

    name: Name = Field(description="the plan's name, as reports show it")
    cloud: Name | None = Field(None, description="cloud for every phase (none: per phase)")
    region: Name | None = Field(None, description="region for every phase")
    use: dict[Name, UseSpec] = Field(min_length=1, description="phase name → how it runs "
                                     "(every phase needs one)")
    commitments: list[AnyCommitmentSpec] = Field(
        default_factory=list, max_length=1000,
        description="reservations, savings plans and capacity blocks bought (by `kind`)")
    owned: list[OwnedSpec] = Field(default_factory=list, max_length=1000,
                                   description="servers bought")
