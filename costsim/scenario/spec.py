"""The whole scenario file (DESIGN §8): calendar, money, models, data, prices, uncertainty,
risk, phases and plans."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from costsim.domain.calendar import MAX_HORIZON_MONTHS
from costsim.domain.currency import MAX_FX_RATE_PER_USD
from costsim.domain.plans import MAX_GPUS
from costsim.domain.pricing import Payment
from costsim.domain.scenario import MAX_BUDGET_USD
from costsim.scenario.spec_common import Date, DistSpec, FixedSpec, Name, Number, Spec, Term, Whole
from costsim.scenario.spec_phases import PhaseSpec
from costsim.scenario.spec_plans import PlanSpec
from costsim.scenario.spec_servers import ServerSpec

# The largest instance price the price-file reader accepts (costsim/catalog/price_file.py).
MAX_INSTANCE_USD_PER_HOUR = 72_000


class ModelSpec(Spec):
    """A model the phases refer to: a shipped preset or a Hugging Face config.json."""

    preset: Name | None = Field(None, description="a preset of `costsim models`")
    arch: Name | None = Field(None, description="path to a config.json (relative to the file)")

    @model_validator(mode="after")
    def _one_source(self) -> ModelSpec:
        if (self.preset is None) == (self.arch is None):
            raise ValueError("give exactly one of preset or arch")
        return self


class DataSpec(Spec):
    """Stored and transferred data, in billed GB (10^9 bytes)."""

    dataset_gb: Number = Field(0.0, ge=0, le=1e9, description="data set stored all horizon")
    checkpoints_retained: Whole = Field(1, ge=0, le=1000, description="checkpoints kept per "
                                        "trained model")
    egress_gb_per_month: Number = Field(0.0, ge=0, le=1e9, description="data sent out monthly")


class DiscountSpec(Spec):
    """A negotiated discount: flat, or for one cloud."""

    discount_pct: Number = Field(ge=0, lt=100, description="off every shipped rental price")
    cloud: Name | None = Field(None, description="the cloud it applies to (none: every cloud)")


class OfferingSpec(Spec):
    """A custom offering row (a quote for an instance, your own box priced by the hour)."""

    cloud: Name = Field(description="cloud (a new name adds a provider)")
    region: Name = Field(description="region")
    instance_type: Name = Field(description="instance name")
    gpu: Name = Field(description="GPU name")
    gpus_per_instance: Whole = Field(ge=1, le=72, description="GPUs per instance")
    on_demand_usd_per_hour: Number | None = Field(None, gt=0, le=MAX_INSTANCE_USD_PER_HOUR,
                                                  description="per instance-hour")
    spot_usd_per_hour: Number | None = Field(None, gt=0, le=MAX_INSTANCE_USD_PER_HOUR,
                                             description="per instance-hour")
    vcpus: Whole = Field(0, ge=0, le=10_000, description="vCPUs")
    host_ram_gib: Number = Field(0.0, ge=0, le=1_000_000, description="host RAM")
    gpu_memory_gib: Number = Field(0.0, ge=0, le=100_000, description="GPU memory per "
                                   "instance (0: the GPU's)")
    effective_date: Date = Field(description="date of the price")
    source: Name | None = Field(None, description="where the price comes from")

    @model_validator(mode="after")
    def _a_price(self) -> OfferingSpec:
        if self.on_demand_usd_per_hour is None and self.spot_usd_per_hour is None:
            raise ValueError("needs on_demand_usd_per_hour or spot_usd_per_hour")
        return self


class QuoteSpec(Spec):
    """A reserved price from a sales quote, per instance; it wins over the table estimate."""

    cloud: Name = Field(description="cloud")
    gpu: Name = Field(description="GPU name")
    term: Term = Field(description="1y or 3y")
    payment: Payment = Field(Payment.NO_UPFRONT, description="payment plan")
    upfront_usd: Number = Field(0.0, ge=0, le=1e10, description="paid at the start, per "
                                "instance")
    recurring_usd_per_hour: Number = Field(0.0, ge=0, le=MAX_INSTANCE_USD_PER_HOUR,
                                           description="per instance-hour, used or not")
    region: Name | None = Field(None, description="region (none: all of the cloud's)")
    instance_type: Name | None = Field(None, description="instance (none: every instance of "
                                       "the GPU)")
    effective_date: Date = Field(description="date of the quote")


class PricesSpec(Spec):
    """Price changes on top of the shipped book."""

    overrides: list[DiscountSpec] = Field(default_factory=list, max_length=1000,
                                          description="negotiated discounts")
    offerings: list[OfferingSpec] = Field(default_factory=list, max_length=10_000,
                                          description="custom offering rows")
    quotes: list[QuoteSpec] = Field(default_factory=list, max_length=10_000,
                                    description="quoted reservations")
    price_file: Name | None = Field(None, description="a CSV in the `costsim prices "
                                    "--price-file` format (relative to the file)")
    gpu_price_change_pct: dict[Name, Annotated[Number, Field(ge=-95, le=500)]] = Field(
        default_factory=dict, description="GPU → % change of its rental prices, in [-95, 500]")
    allow_flags: list[Name] = Field(default_factory=list, max_length=20,
                                    description="blocking price flags whose rows may be chosen "
                                    "(docs/pricing.md); none: never")


def _fixed(value: float) -> FixedSpec:
    return FixedSpec(dist="fixed", value=value)


class UncertaintySpec(Spec):
    """What Monte Carlo varies (a number means fixed; factors must stay > 0)."""

    throughput_error: DistSpec | None = Field(None, description="factor on predicted "
                                              "throughput, replacing every default error (none: "
                                              "log-sd 0.111, predicted training and serving "
                                              "their larger out-of-sample errors)")
    demand_growth_pct_per_month: DistSpec | None = Field(None, description="replaces each "
                                                         "serving load's growth, %/month")
    failure_rate_scale: DistSpec = Field(_fixed(1.0), description="factor on hardware "
                                         "failure rates")
    allin_loss_scale: DistSpec = Field(_fixed(1.0), description="factor on the all-in loss")
    price_drift_pct_per_year: DistSpec = Field(_fixed(0.0), description="%/year change of rental "
                                               "prices from each price's effective_date")
    spot_hazard_scale: DistSpec = Field(_fixed(1.0), description="factor on spot interruptions")
    job_arrivals_scale: DistSpec = Field(_fixed(1.0), description="factor on experiment arrivals")
    training_tokens_scale: DistSpec = Field(_fixed(1.0), description="factor on training tokens")


class RiskSpec(Spec):
    """Limits a recommended plan must respect (none: no limit)."""

    max_p_over_budget: Number | None = Field(None, ge=0, le=1, description="probability")
    max_p_deadline_missed: Number | None = Field(None, ge=0, le=1, description="probability")
    min_slo_attainment: Number | None = Field(None, ge=0, le=1, description="share of hours")


class TrainingRunSpec(Spec):
    """A measured training run's file with what the file does not say (a log names no model,
    GPU or GPU count); the file's own values win."""

    path: Name = Field(description="the file, relative to the scenario file")
    model: Name | None = Field(None, description="a model of this scenario, a preset or a "
                               "config.json path (relative to the scenario file)")
    gpu: Name | None = Field(None, description="the GPU (any accepted name)")
    gpus: Whole | None = Field(None, ge=1, le=1_000_000, description="the run's GPU count")
    seq_len: Whole | None = Field(None, ge=1, le=10_000_000, description="tokens per sequence")
    precision: Name | None = Field(None, description="compute precision (default: the GPU's)")
    framework: Name | None = Field(None, description="training code (default: the log "
                                   "format's, else megatron-lm)")


class ServingFileSpec(Spec):
    """A serving profile with what the file itself does not say (a benchmark JSON never names
    the GPU): each value fills what the file leaves empty."""

    path: Name = Field(description="the file, relative to the scenario")
    model: Name | None = Field(None, description="a model of `models:`, a preset, or a "
                                                 "config.json path relative to the scenario")
    gpu: Name | None = Field(None, description="GPU name (any accepted, incl. nvidia-smi's)")
    tp: Whole | None = Field(None, ge=1, le=64, description="GPUs per replica")
    engine: Name | None = Field(None, description="vllm, vllm-v0, tensorrt-llm, sglang, "
                                                  "llama.cpp, torch-compile, hf-transformers "
                                                  "or tgi")
    precision: Name | None = Field(None, description="compute dtype (default: the GPU's)")
    quant: Name | None = Field(None, description="weight storage (default none)")


class MeasurementsSpec(Spec):
    """Files of what the team measured (DESIGN §12), relative to the scenario file."""

    serving: list[Name | ServingFileSpec] = Field(
        default_factory=list, max_length=100,
        description="serving profiles: the serving CSV, `vllm bench serve --save-result` JSON "
                    "or SGLang `bench_serving` JSON lines; a path, or {path, model, gpu, tp, "
                    "engine, precision, quant} for what the file does not say")
    training: list[Name | TrainingRunSpec] = Field(
        default_factory=list, max_length=100,
        description="training runs: the training CSV, Megatron-LM/NeMo or torchtitan logs, HF "
                    "Trainer `trainer_state.json`; a path, or {path, model, gpu, gpus, "
                    "seq_len, precision, framework} for what a log does not say")


QuotaOption = Literal["on-demand", "spot", "reserved", "reserved-1y-no-upfront",
                      "reserved-1y-partial-upfront", "reserved-1y-all-upfront",
                      "reserved-3y-no-upfront", "reserved-3y-partial-upfront",
                      "reserved-3y-all-upfront"]


class QuotaSpec(Spec):
    """The most GPUs of a type the cloud lets you hold (a service quota), in GPUs."""

    cloud: Name = Field(description="cloud")
    region: Name | None = Field(None, description="region (none: each of the cloud's regions)")
    gpu: Name = Field(description="GPU name")
    option: QuotaOption | None = Field(None, description="on-demand, spot, reserved (every "
                                       "term) or an exact reserved option (none: all options)")
    max_gpus: Whole = Field(ge=0, le=MAX_GPUS, description="GPUs held at once, at most")


class ScenarioSpec(Spec):
    """A scenario file."""

    name: Name = Field(description="the project's name, as reports show it")
    start: Date = Field(description="first day of the calendar")
    horizon_months: Whole = Field(ge=1, le=MAX_HORIZON_MONTHS, description="months simulated")
    budget_usd: Number | None = Field(None, gt=0, le=MAX_BUDGET_USD, description="budget "
                                      "(none: no budget risk)")
    discount_rate_pct_per_year: Number = Field(0.0, ge=-10, le=100, description="for NPV")
    prices: PricesSpec = Field(PricesSpec(), description="price changes")
    uncertainty: UncertaintySpec = Field(UncertaintySpec(),
                                         description="Monte Carlo variables")
    risk: RiskSpec = Field(RiskSpec(), description="risk limits")
    models: dict[Name, ModelSpec] = Field(default_factory=dict, max_length=100,
                                          description="name → model")
    data: DataSpec = Field(DataSpec(), description="data sizes")
    measurements: MeasurementsSpec = Field(MeasurementsSpec(), description="measured serving "
                                           "profiles and training runs (they win over the model)")
    servers: dict[Name, ServerSpec] = Field(default_factory=dict, max_length=100,
                                            description="name → a server of your own (plans' "
                                            "owned entries may name it)")
    phases: list[PhaseSpec] = Field(min_length=1, max_length=1000, description="the project")
    plans: list[PlanSpec] = Field(min_length=1, max_length=1000, description="the candidates")
    quotas: list[QuotaSpec] = Field(default_factory=list, max_length=10_000,
                                    description="GPU quotas: fixed counts over one are "
                                    "infeasible, elastic fleets are capped at them")
    currency: Annotated[str, StringConstraints(strip_whitespace=True, to_upper=True,
                                               pattern=r"^[A-Za-z]{3}$")] | None = Field(
        None, description="the currency reports show: an ISO 4217 code in use (EUR, GBP, "
        "CNY, JPY ...; none: USD); JSON stays in USD; needs fx_rate_per_usd")
    fx_rate_per_usd: Number | None = Field(None, gt=0, le=MAX_FX_RATE_PER_USD,
                                           description="units of `currency` one USD buys "
                                           "(0.92 for EUR at $1 = €0.92); required with "
                                           "currency")

