"""Validated scenario-file models → the simulator's frozen domain objects.

Names the catalog knows (GPUs, presets, servers, clouds) are checked through :class:`KnownNames`,
which the CLI fills from the catalog: this layer imports only the domain (DESIGN §4). Every
error raised here carries the key path of the file (tuple form); :mod:`costsim.scenario.load`
turns it into ``file:line``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from costsim.domain.api_pricing import ApiUse
from costsim.domain.architecture import Architecture
from costsim.domain.calendar import Calendar
from costsim.domain.commitments import CapacityBlock, SavingsPlan
from costsim.domain.currency import USD, Currency
from costsim.domain.host_parts import NodeParts
from costsim.domain.measurements import (
    Measurements,
    RunDetails,
    ServingFileContext,
    ServingPoint,
    TrainingPoint,
)
from costsim.domain.owned import DeclaredBomLine, ServerDeclaration
from costsim.domain.phases import (
    ExperimentsPhase,
    GenericJob,
    Job,
    LoadProfile,
    ModelJob,
    Phase,
    RequestBucket,
    ServingPhase,
    Slo,
    TrainingPhase,
)
from costsim.domain.plans import Autoscale, Commitment, OwnedPurchase, PhaseUse, Plan, UseEntry
from costsim.domain.pricing import (
    BLOCKING_FLAGS,
    Offering,
    PriceFlag,
    PriceOverrides,
    PurchaseOption,
    QuotedReservation,
)
from costsim.domain.quotas import Quota
from costsim.domain.scenario import DataSizes, RiskLimits, Scenario, ScenarioModel, ScenarioPrices
from costsim.domain.uncertainty import (
    Distribution,
    Fixed,
    LogNormal,
    Normal,
    Triangular,
    Uncertainty,
    Uniform,
)
from costsim.domain.workload import ParallelLayout, Task
from costsim.errors import CatalogError, CostsimError, InputError, suggest
from costsim.scenario import spec_common as sc
from costsim.scenario.spec import (
    MeasurementsSpec,
    PricesSpec,
    QuotaSpec,
    ScenarioSpec,
    ServingFileSpec,
    TrainingRunSpec,
)
from costsim.scenario.spec_phases import (
    ExperimentsSpec,
    GenericJobSpec,
    ServingSpec,
    TrainingSpec,
)
from costsim.scenario.spec_plans import (
    CapacityBlockSpec,
    CommitmentSpec,
    FleetSpec,
    PlanSpec,
    SavingsPlanSpec,
    UseEntrySpec,
)
from costsim.scenario.spec_servers import ServerSpec
from costsim.scenario.yaml_io import KeyPath

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class KnownNames:
    """The catalog's names, passed in by the CLI (``costsim.cli.scenario_names``).

    ``canonical_gpu`` accepts aliases and nvidia-smi names and raises CatalogError;
    ``load_model(preset, arch_path)`` returns the architecture and its reference text.
    """

    canonical_gpu: Callable[[str], str]
    load_model: Callable[[str | None, Path | None], tuple[Architecture, str]]
    servers: frozenset[str]
    clouds: frozenset[str]
    marketplaces: frozenset[str] = frozenset()
    # (cloud, region) pairs of the shipped book; empty: regions are not checked here
    regions: frozenset[tuple[str, str]] = frozenset()
    # True when clouds and regions include the scenario's price file's rows (else a scenario
    # with a price file is not checked for them: the file may add clouds and regions)
    with_price_file: bool = False
    # readers of measurement files (DESIGN §12; costsim.catalog): every point of a file, or
    # an InputError naming the file, row and rule. None: a scenario naming such a file is refused
    read_serving: Callable[[Path, ServingFileContext], tuple[ServingPoint, ...]] | None = None
    read_training: Callable[[Path, RunDetails], tuple[TrainingPoint, ...]] | None = None


class BuildError(Exception):
    """A rule broken at ``path`` of the file (turned into a ScenarioError with file:line)."""

    def __init__(self, path: KeyPath, problem: str, domain_key: str = "") -> None:
        super().__init__(problem)
        self.path, self.problem, self.domain_key = path, problem, domain_key


def catalog_problem(exc: CatalogError) -> str:
    """A catalog error's text without the source it was given."""
    hint = f"; did you mean {' or '.join(repr(s) for s in exc.suggestions)}?" \
        if exc.suggestions else ""
    return f"unknown {exc.kind} '{exc.name}'{hint}"


def make(path: KeyPath, build: Callable[..., T], **kwargs: Any) -> T:
    """``build(**kwargs)``, with a domain error placed at ``path`` (plus the key it names)."""
    try:
        return build(**kwargs)
    except InputError as exc:
        raise BuildError(path, exc.problem, exc.key_path) from None
    except ValueError as exc:  # e.g. ParallelLayout's own checks
        raise BuildError(path, str(exc)) from None


def distribution(spec: Any) -> Distribution:
    """The domain distribution of a `dist:` mapping."""
    if isinstance(spec, sc.FixedSpec):
        return Fixed(value=spec.value)
    if isinstance(spec, sc.NormalSpec):
        return Normal(mean=spec.mean, sd=spec.sd, low=spec.low, high=spec.high)
    if isinstance(spec, sc.LogNormalSpec):
        return LogNormal(sigma=spec.sigma, median=spec.median)
    if isinstance(spec, sc.UniformSpec):
        return Uniform(low=spec.low, high=spec.high)
    assert isinstance(spec, sc.TriangularSpec)
    return Triangular(low=spec.low, mode=spec.mode, high=spec.high)


def _dist(path: KeyPath, spec: Any) -> Distribution:
    return make(path, distribution, spec=spec)


class Builder:
    """Builds one scenario; ``file_dir`` resolves relative paths, ``where`` names a line."""

    def __init__(self, names: KnownNames, file_dir: Path, where: Callable[[KeyPath], str]):
        self.names, self.file_dir, self.where = names, file_dir, where
        self.custom_clouds: set[str] = set()
        self.declared: tuple[ServerDeclaration, ...] = ()
        self.custom_regions: frozenset[tuple[str, str]] = frozenset()
        self.price_file: Path | None = None
        # every file the scenario reads besides itself (arch configs, the price file)
        self.referenced: set[Path] = set()
        self.scenario_models: dict[str, ScenarioModel] = {}

    def gpu(self, path: KeyPath, name: str) -> str:
        try:
            return self.names.canonical_gpu(name)
        except CatalogError as exc:
            raise BuildError(path, catalog_problem(exc)) from None
        except InputError as exc:  # a name that fits several GPUs
            raise BuildError(path, exc.problem) from None

    def cloud(self, path: KeyPath, name: str | None) -> str | None:
        if name is None:
            return None
        cloud = name.lower()
        known = self.names.clouds | self.custom_clouds
        if cloud not in known and self._checks_names():
            hint = suggest(cloud, sorted(known))
            extra = f"; did you mean {' or '.join(repr(h) for h in hint)}?" if hint else ""
            raise BuildError(path, f"unknown cloud '{name}'{extra}")
        return cloud

    def _checks_names(self) -> bool:
        return self.price_file is None or self.names.with_price_file

    def region(self, path: KeyPath, cloud: str | None, name: str | None) -> str | None:
        """``name`` as the book spells it, checked against ``cloud``'s regions (any cloud's
        when None); a price file may add regions, so none are checked when there is one."""
        if name is None or not self.names.regions or not self._checks_names():
            return name
        known = sorted({r for c, r in self.names.regions | self.custom_regions
                        if cloud is None or c == cloud})
        for region in known:
            if region.lower() == name.lower():
                return region
        hint = suggest(name, known)
        extra = f"; did you mean {' or '.join(repr(h) for h in hint)}?" if hint else ""
        where = f"{cloud} region" if cloud else "region"
        raise BuildError(path, f"unknown {where} '{name}'{extra}")

    def scenario(self, spec: ScenarioSpec) -> Scenario:
        for key, items in (("phases", spec.phases), ("plans", spec.plans)):
            first: dict[str, int] = {}
            for index, item in enumerate(items):
                if item.name in first:
                    raise BuildError((key, index, "name"), f"the name '{item.name}' is used "
                                     f"twice (first in {key}[{first[item.name]}])")
                first[item.name] = index
        prices = self.prices(("prices",), spec.prices)
        models = tuple(self.model(("models", name), name, m.preset, m.arch)
                       for name, m in spec.models.items())
        self.scenario_models = {m.name: m for m in models}  # measured runs may name them
        phases = tuple(self.phase(("phases", i), p) for i, p in enumerate(spec.phases))
        self.declared = tuple(self.server(("servers", name), name, s)
                              for name, s in spec.servers.items())
        plans = tuple(self.plan(("plans", i), p) for i, p in enumerate(spec.plans))
        uncertainty = make(("uncertainty",), Uncertainty, **{
            key: None if value is None else _dist(("uncertainty", key), value)
            for key, value in spec.uncertainty})
        return make((), Scenario, name=spec.name,
                    calendar=make(("horizon_months",), Calendar, start=spec.start,
                                  horizon_months=spec.horizon_months),
                    models=models, phases=phases, plans=plans, budget_usd=spec.budget_usd,
                    discount_rate_pct_per_year=spec.discount_rate_pct_per_year,
                    data=make(("data",), DataSizes, **dict(spec.data)), prices=prices,
                    uncertainty=uncertainty, risk=make(("risk",), RiskLimits, **dict(spec.risk)),
                    measurements=self.measurements(("measurements",), spec),
                    servers=self.declared,
                    quotas=tuple(self.quota(("quotas", i), i, q)
                                 for i, q in enumerate(spec.quotas)),
                    currency=self.currency(spec))

    @staticmethod
    def currency(spec: ScenarioSpec) -> Currency:
        """The display currency (USD when the file names none); the rate goes with it."""
        if spec.currency is None:
            if spec.fx_rate_per_usd is not None:
                raise BuildError(("fx_rate_per_usd",), "goes with currency (the ISO 4217 "
                                 "code it converts to), and currency is missing")
            return USD
        if spec.currency != "USD" and spec.fx_rate_per_usd is None:
            raise BuildError(("fx_rate_per_usd",), f"is required with currency "
                             f"{spec.currency} (how many {spec.currency} one USD buys), and "
                             "it is missing")
        return make(("currency",), Currency, code=spec.currency,
                    fx_rate_per_usd=1.0 if spec.fx_rate_per_usd is None
                    else spec.fx_rate_per_usd)

    def server(self, path: KeyPath, name: str, s: ServerSpec) -> ServerDeclaration:
        """A declared server; its name may not hide a shipped one."""
        if name in self.names.servers:
            raise BuildError(path, f"the server name '{name}' is a shipped server's (costsim "
                             "servers lists them); give yours another name")
        lines = ((DeclaredBomLine(kind="other", item="server (capex_usd)",
                                  amount_usd=float(s.capex_usd), source=s.source or "capex_usd",
                                  estimate=False),)
                 if s.capex_usd is not None else
                 tuple(DeclaredBomLine(kind=b.kind, item=b.item, amount_usd=b.amount_usd,
                                       source=b.source, estimate=b.estimate,
                                       effective_date=("" if b.effective_date is None
                                                       else b.effective_date.isoformat()))
                       for b in s.bom or ()))
        parts = make(path, NodeParts, cpu_cores=s.cpu_cores, ram_gib=s.ram_gib,
                     nvme_tb=s.nvme_tb, nic_gbps=s.nic_gbps)
        return make(path, ServerDeclaration, name=name, gpu=self.gpu((*path, "gpu"), s.gpu),
                    gpu_count=s.gpu_count, interconnect=s.interconnect, parts=parts, bom=lines,
                    power_kw=s.power_kw, life_years=s.life_years, residual_pct=s.residual_pct,
                    lead_time_weeks=s.lead_time_weeks, pue=s.pue, usd_per_kwh=s.usd_per_kwh,
                    colocation_usd_per_kw_month=s.colocation_usd_per_kw_month,
                    maintenance_pct_per_year=s.maintenance_pct_per_year,
                    staff_pct_per_year=s.staff_pct_per_year, source=s.source or "")

    def quota(self, path: KeyPath, index: int, spec: QuotaSpec) -> Quota:
        """A quota with its GPU's canonical name and a known cloud and region."""
        cloud = self.cloud((*path, "cloud"), spec.cloud)
        assert cloud is not None
        return make(path, Quota, cloud=cloud, gpu=self.gpu((*path, "gpu"), spec.gpu),
                    region=self.region((*path, "region"), cloud, spec.region),
                    option=spec.option, max_gpus=spec.max_gpus, index=index)

    def measurements(self, path: KeyPath, scenario: ScenarioSpec) -> Measurements:
        """Read every measurement file the scenario names, through the catalog's readers (a
        file's problem is an error at its key, naming the file and row)."""
        spec: MeasurementsSpec = scenario.measurements
        read_serving = self.names.read_serving
        files = [entry if isinstance(entry, str) else entry.path for entry in spec.serving]
        contexts = [self._serving_context(entry, scenario) for entry in spec.serving]
        serving = self._measured(
            (*path, "serving"), files,
            None if read_serving is None else (
                lambda file, i: read_serving(file, contexts[i])))
        training = self._measured_training((*path, "training"), spec.training)
        return Measurements(
            serving=tuple(p for _, points in serving for p in points),
            training=tuple(p for _, points in training for p in points),
            serving_files=tuple(str(f) for f, _ in serving),
            training_files=tuple(str(f) for f, _ in training))

    def _serving_context(self, entry: str | ServingFileSpec,
                         scenario: ScenarioSpec) -> ServingFileContext:
        """What a ``measurements.serving`` mapping gives beside its file; its model may name a
        model of ``models:``, a preset, or a config.json relative to the scenario."""
        if isinstance(entry, str):
            return ServingFileContext()
        model = entry.model
        if model is not None and model in scenario.models:
            named = scenario.models[model]
            model = named.preset or str(self.file_dir / str(named.arch))
        elif model is not None and model.lower().endswith(".json"):
            model = str(self.file_dir / model)
        return ServingFileContext(model=model, gpu=entry.gpu, tp=entry.tp, engine=entry.engine,
                                  precision=entry.precision, quant=entry.quant)

    def _measured(self, path: KeyPath, names: list[str],
                  read: Callable[[Path, int], tuple[T, ...]] | None
                  ) -> list[tuple[Path, tuple[T, ...]]]:
        found = []
        for i, name in enumerate(names):
            file = self.file_dir / name
            if not file.is_file():
                raise BuildError((*path, i), f"no such file: {file}")
            if read is None:
                raise BuildError((*path, i), "this command does not read measurement files")
            try:
                points = read(file, i)
            except CostsimError as exc:
                raise BuildError((*path, i), str(exc)) from None
            self.referenced.add(file)
            found.append((file, points))
        return found

    def _measured_training(self, path: KeyPath, items: list[str | TrainingRunSpec]
                           ) -> list[tuple[Path, tuple[TrainingPoint, ...]]]:
        """Each training run file with what its mapping says beside it (a scenario model's
        name stands for its architecture; a config path is relative to the scenario)."""
        found = []
        for i, item in enumerate(items):
            run = item if isinstance(item, TrainingRunSpec) else TrainingRunSpec(path=item)
            file = self.file_dir / run.path
            key = (*path, i, "path") if isinstance(item, TrainingRunSpec) else (*path, i)
            if not file.is_file():
                raise BuildError(key, f"no such file: {file}")
            if self.names.read_training is None:
                raise BuildError(key, "this command does not read measurement files")
            own = self.scenario_models.get(run.model) if run.model else None
            model = run.model
            if own is None and model and model.lower().endswith(".json"):
                model = str(self.file_dir / model)
            details = RunDetails(model=model, architecture=own.architecture if own else None,
                                 gpu=run.gpu, gpus=run.gpus, seq_len=run.seq_len,
                                 precision=run.precision, framework=run.framework,
                                 where=".".join(str(k) for k in (*path, i)))
            try:
                points = self.names.read_training(file, details)
            except CostsimError as exc:
                raise BuildError(key, str(exc)) from None
            self.referenced.add(file)
            found.append((file, points))
        return found

    def model(self, path: KeyPath, name: str, preset: str | None,
              arch: str | None) -> ScenarioModel:
        arch_path = None if arch is None else self.file_dir / arch
        key = (*path, "preset" if preset is not None else "arch")
        try:
            architecture, reference = self.names.load_model(preset, arch_path)
        except CatalogError as exc:
            raise BuildError(key, catalog_problem(exc)) from None
        except CostsimError as exc:
            raise BuildError(key, str(exc)) from None
        if arch_path is not None:
            self.referenced.add(arch_path)
        return ScenarioModel(name=name, architecture=architecture, reference=reference)

    def prices(self, path: KeyPath, spec: PricesSpec) -> ScenarioPrices:
        if spec.price_file is not None:
            price_file = self.file_dir / spec.price_file
            if not price_file.is_file():
                raise BuildError((*path, "price_file"), f"no such file: {price_file}")
            self.price_file = price_file
            self.referenced.add(price_file)
        offerings = tuple(self.offering((*path, "offerings", i), o)
                          for i, o in enumerate(spec.offerings))
        self.custom_clouds |= {o.cloud for o in offerings}
        self.custom_regions = frozenset((o.cloud, o.region) for o in offerings)
        flat: float | None = None
        per_cloud: dict[str, float] = {}
        for i, entry in enumerate(spec.overrides):
            at = (*path, "overrides", i)
            cloud = self.cloud((*at, "cloud"), entry.cloud)
            if cloud is None:
                if flat is not None:
                    raise BuildError((*at, "discount_pct"), "a second flat discount (give "
                                     "one, or name a cloud)")
                flat = entry.discount_pct
            elif cloud in per_cloud:
                raise BuildError((*at, "cloud"), f"a second discount for {cloud}")
            else:
                per_cloud[cloud] = entry.discount_pct
        quotes = tuple(
            make((*path, "quotes", i), QuotedReservation,
                 cloud=self.cloud((*path, "quotes", i, "cloud"), q.cloud) or q.cloud,
                 gpu=self.gpu((*path, "quotes", i, "gpu"), q.gpu), term_years=int(q.term[0]),
                 payment=q.payment, upfront_usd=q.upfront_usd,
                 recurring_usd_per_hour=q.recurring_usd_per_hour,
                 region=self.region((*path, "quotes", i, "region"), q.cloud.lower(), q.region),
                 instance_type=q.instance_type, effective_date=q.effective_date.isoformat(),
                 source=f"quote in {self.where((*path, 'quotes', i))}")
            for i, q in enumerate(spec.quotes))
        changes: dict[str, float] = {}
        written: dict[str, str] = {}
        for g, pct in spec.gpu_price_change_pct.items():
            gpu = self.gpu((*path, "gpu_price_change_pct", g), g)
            if gpu in changes:  # else one of the two would be ignored without a word
                raise BuildError((*path, "gpu_price_change_pct", g), f"names the same GPU "
                                 f"({gpu}) as '{written[gpu]}'; give each GPU once")
            changes[gpu], written[gpu] = pct, g
        overrides = make((*path, "overrides"), PriceOverrides, discount_pct=flat or 0.0,
                         cloud_discount_pct=tuple(per_cloud.items()),
                         custom_offerings=offerings, quoted_reservations=quotes,
                         allowed_flags=self.allow_flags((*path, "allow_flags"),
                                                        spec.allow_flags))
        return make(path, ScenarioPrices, overrides=overrides,
                    gpu_price_change_pct=tuple(changes.items()))

    @staticmethod
    def allow_flags(path: KeyPath, names: list[str]) -> tuple[PriceFlag, ...]:
        """The blocking flags ``prices.allow_flags`` lifts (each named once)."""
        blocking = sorted(flag.value for flag in BLOCKING_FLAGS)
        allowed: list[PriceFlag] = []
        for i, name in enumerate(names):
            try:
                flag = PriceFlag(name.strip().lower())
            except ValueError:
                hint = suggest(name, blocking)
                raise BuildError((*path, i), f"unknown price flag '{name}'"
                                 + (f"; did you mean {' or '.join(map(repr, hint))}?" if hint
                                    else f"; the blocking flags are {', '.join(blocking)}")
                                 ) from None
            if not flag.is_blocking:
                raise BuildError((*path, i), f"'{flag}' does not block selection; the blocking "
                                 f"flags are {', '.join(blocking)}")
            if flag in allowed:
                raise BuildError((*path, i), f"'{flag}' is named twice")
            allowed.append(flag)
        return tuple(allowed)

    def offering(self, path: KeyPath, o: Any) -> Offering:
        cloud = o.cloud.lower()
        return make(path, Offering, cloud=cloud, region=o.region,
                    instance_type=o.instance_type, gpu=self.gpu((*path, "gpu"), o.gpu),
                    provider_gpu_name=o.gpu, gpus_per_instance=o.gpus_per_instance,
                    vcpus=o.vcpus, host_ram_gib=o.host_ram_gib, gpu_memory_gib=o.gpu_memory_gib,
                    on_demand_usd_per_hour=o.on_demand_usd_per_hour,
                    spot_usd_per_hour=o.spot_usd_per_hour,
                    marketplace=cloud in self.names.marketplaces,
                    flags=(PriceFlag.USER_OVERRIDE,),
                    source=o.source or f"scenario offering at {self.where(path)}",
                    effective_date=o.effective_date.isoformat())

    def phase(self, path: KeyPath, p: Any) -> Phase:
        common = {"name": p.name, "after": tuple(p.after)}
        if isinstance(p, ExperimentsSpec):
            return make(path, ExperimentsPhase, **common, duration_months=p.duration_months,
                        arrivals_per_day=p.arrivals_per_day, job=self.job((*path, "job"), p.job))
        if isinstance(p, TrainingSpec):
            layout = None if p.layout is None else make((*path, "layout"), ParallelLayout,
                                                          **dict(p.layout))
            loss = None if p.allin_extra_loss is None else _dist(
                (*path, "allin_extra_loss"), p.allin_extra_loss)
            return make(path, TrainingPhase, **common, model=p.model, task=Task(p.task),
                        tokens=p.tokens, deadline_days=p.deadline_days, seq_len=p.seq_len,
                        global_batch_tokens=p.global_batch_tokens, lora_rank=p.lora_rank,
                        quant=p.quant, precision=p.precision, framework=p.framework,
                        framework_year=p.framework_year, layout=layout, allin_extra_loss=loss)
        assert isinstance(p, ServingSpec)
        sizes = p.requests if isinstance(p.requests, list) else [p.requests]
        buckets = tuple(make((*path, "requests", i), RequestBucket,
                             share=getattr(b, "share", 1.0), prompt_tokens=b.prompt_tokens,
                             output_tokens=b.output_tokens) for i, b in enumerate(sizes))
        return make(path, ServingPhase, **common, duration_months=p.duration_months,
                    model=p.model, load=make((*path, "load"), LoadProfile, **dict(p.load)),
                    requests=buckets, slo=make((*path, "slo"), Slo, **dict(p.slo)),
                    precision=p.precision, quant=p.quant, kv_dtype=p.kv_dtype, engine=p.engine)

    def job(self, path: KeyPath, job: Any) -> Job:
        if isinstance(job, GenericJobSpec):
            return make(path, GenericJob, gpu_memory_gib=job.gpu_memory_gib,
                        gpu_hours=_dist((*path, "gpu_hours"), job.gpu_hours),
                        host_ram_gib=job.host_ram_gib, gpus=job.gpus)
        return make(path, ModelJob, model=job.model, task=Task(job.task), tokens=job.tokens,
                    seq_len=job.seq_len, lora_rank=job.lora_rank, quant=job.quant,
                    precision=job.precision)

    def plan(self, path: KeyPath, p: PlanSpec) -> Plan:
        uses = []
        for phase, use in p.use.items():
            at = (*path, "use", phase)
            entries = ([((*at, "fleet", i), e) for i, e in enumerate(use.fleet)]
                       if isinstance(use, FleetSpec) else [(at, use)])
            uses.append(make(at, PhaseUse, phase=phase,
                             entries=tuple(self.entry(where, e, p.cloud)
                                           for where, e in entries)))
        commitments = tuple(
            make((*path, "commitments", i), Commitment, gpu=self.gpu(
                (*path, "commitments", i, "gpu"), c.gpu), count=c.count,
                 term_years=int(c.term[0]), payment=c.payment, start=c.start,
                 cloud=self.cloud((*path, "commitments", i, "cloud"), c.cloud),
                 region=self.region((*path, "commitments", i, "region"),
                                    c.cloud and c.cloud.lower(), c.region))
            for i, c in enumerate(p.commitments) if isinstance(c, CommitmentSpec))
        savings_plans = tuple(self.savings_plan((*path, "commitments", i), i, c)
                              for i, c in enumerate(p.commitments)
                              if isinstance(c, SavingsPlanSpec))
        blocks = tuple(make((*path, "commitments", i), CapacityBlock, gpu=self.gpu(
            (*path, "commitments", i, "gpu"), c.gpu), count=c.count,
            cloud=self.cloud((*path, "commitments", i, "cloud"), c.cloud), start=c.start,
            days=c.days, index=i)
            for i, c in enumerate(p.commitments) if isinstance(c, CapacityBlockSpec))
        owned = tuple(self.owned((*path, "owned", i), o) for i, o in enumerate(p.owned))
        return make(path, Plan, name=p.name, uses=tuple(uses), commitments=commitments,
                    owned=owned, cloud=self.cloud((*path, "cloud"), p.cloud),
                    region=self.region((*path, "region"), p.cloud and p.cloud.lower(), p.region),
                    savings_plans=savings_plans, capacity_blocks=blocks)

    def savings_plan(self, path: KeyPath, index: int, c: SavingsPlanSpec) -> SavingsPlan:
        family = None if c.family is None else self.gpu((*path, "family"), c.family)
        return make(path, SavingsPlan, cloud=self.cloud((*path, "cloud"), c.cloud),
                    usd_per_hour=c.usd_per_hour, term_years=int(c.term[0]), payment=c.payment,
                    start=c.start, family=family, index=index)

    def owned(self, path: KeyPath, o: Any) -> OwnedPurchase:
        declared = {d.name for d in self.declared}
        if o.server in declared:
            for key in ("ram_gib", "nvme_tb", "cpu_cores", "nic_gbps"):
                if getattr(o, key) is not None:
                    raise BuildError((*path, key), f"server '{o.server}' is declared in "
                                     f"servers:; set {key} there, not on the owned entry")
        elif o.server not in self.names.servers:
            hint = suggest(o.server, sorted(self.names.servers | declared))
            extra = f"; did you mean {' or '.join(repr(h) for h in hint)}?" if hint else ""
            raise BuildError((*path, "server"), f"unknown server '{o.server}'{extra}")
        return make(path, OwnedPurchase, **dict(o))

    def entry(self, path: KeyPath, e: UseEntrySpec, plan_cloud: str | None) -> UseEntry:
        auto = None if e.autoscale is None else make(
            (*path, "autoscale"), Autoscale, min_replicas=e.autoscale.min,
            max_replicas=e.autoscale.max, target_utilization=e.autoscale.target_utilization,
            scale_up_delay_s=e.autoscale.scale_up_delay_s)
        api = None if e.provider is None else make(
            path, ApiUse, provider=e.provider.strip().lower(),
            requests_per_minute=e.requests_per_minute, tokens_per_minute=e.tokens_per_minute,
            ttft_s=e.ttft_s, output_tokens_per_s=e.output_tokens_per_s)
        return make(path, UseEntry, gpu="" if e.gpu is None else self.gpu((*path, "gpu"), e.gpu),
                    api=api,
                    option=e.purchase_option(), count=e.count,
                    spill=None if e.spill is None else PurchaseOption(e.spill),
                    fallback=None if e.fallback is None else PurchaseOption(e.fallback),
                    spot_share=e.spot_share, cloud=self.cloud((*path, "cloud"), e.cloud),
                    region=self.region((*path, "region"),
                                       (e.cloud or plan_cloud or "").lower() or None, e.region),
                    autoscale=auto,
                    traffic=None if e.traffic is None else tuple(e.traffic))
