"""A scenario: the project (models, data, phases on a calendar) and the candidate plans.

The scenario's shape (docs/simulator.md) as frozen value objects. The YAML loader
(``costsim.scenario``) only validates a file and constructs these; tests and the optimizer build
them in code. Checks that
span several parts (names that must exist, cycles in ``after``, dates in the horizon, a use entry
for every phase) live here, so a scenario built in code is held to the same rules as a file.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date

from costsim.domain.architecture import Architecture
from costsim.domain.calendar import Calendar, check_in_calendar
from costsim.domain.currency import USD, Currency
from costsim.domain.measurements import Measurements
from costsim.domain.owned import ServerDeclaration
from costsim.domain.phases import Phase, PhaseKind, ServingPhase, TrainingPhase
from costsim.domain.plans import PhaseUse, Plan
from costsim.domain.pricing import PriceOverrides
from costsim.domain.quotas import Quota
from costsim.domain.uncertainty import Uncertainty
from costsim.errors import ScenarioError

MAX_BUDGET_USD = 1e12


@dataclass(frozen=True, slots=True, kw_only=True)
class ScenarioModel:
    """A model the phases refer to by ``name``; ``reference`` says where it came from
    (``preset:llama-3-8b`` or a config path), for the report's inputs."""

    name: str
    architecture: Architecture
    reference: str


@dataclass(frozen=True, slots=True, kw_only=True)
class DataSizes:
    """Stored and transferred data, in billed GB (10^9 bytes).

    Storage holds the data set plus ``checkpoints_retained`` checkpoints of each trained model
    for the whole horizon; egress is billed every month of the horizon.
    """

    dataset_gb: float = 0.0
    checkpoints_retained: int = 1
    egress_gb_per_month: float = 0.0

    def __post_init__(self) -> None:
        for key, high in (("dataset_gb", 1e9), ("egress_gb_per_month", 1e9)):
            value = getattr(self, key)
            if not math.isfinite(value) or not 0 <= value <= high:
                raise ScenarioError("", f"data.{key}", f"must be in [0, {high:g}] GB, got "
                                    f"{value!r}")
        if not 0 <= self.checkpoints_retained <= 1000:
            raise ScenarioError("", "data.checkpoints_retained",
                                f"must be 0..1000, got {self.checkpoints_retained}")


@dataclass(frozen=True, slots=True, kw_only=True)
class ScenarioPrices:
    """Price changes the scenario makes on top of the shipped book: negotiated discounts and
    custom rows (``overrides``), and a planned change of a GPU's rental prices in %
    (``gpu_price_change_pct``, e.g. H100 −20 for a price cut expected before the project)."""

    overrides: PriceOverrides = field(default_factory=PriceOverrides)
    gpu_price_change_pct: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        for gpu, pct in self.gpu_price_change_pct:
            if not math.isfinite(pct) or not -95 <= pct <= 500:
                raise ScenarioError("", f"prices.gpu_price_change_pct.{gpu}",
                                    f"must be in [-95, 500] %, got {pct!r}")

    def price_factor(self, gpu: str) -> float:
        """Multiplier on ``gpu``'s rental prices (1 when the scenario changes none)."""
        for name, pct in self.gpu_price_change_pct:
            if name == gpu:
                return 1 + pct / 100
        return 1.0


@dataclass(frozen=True, slots=True, kw_only=True)
class RiskLimits:
    """Limits a recommended plan must respect (None: no limit)."""

    max_p_over_budget: float | None = None
    max_p_deadline_missed: float | None = None
    min_slo_attainment: float | None = None

    def __post_init__(self) -> None:
        for key in ("max_p_over_budget", "max_p_deadline_missed", "min_slo_attainment"):
            value = getattr(self, key)
            if value is not None and not 0 <= value <= 1:
                raise ScenarioError("", f"risk.{key}", f"must be a probability in [0, 1], "
                                    f"got {value}")


@dataclass(frozen=True, slots=True, kw_only=True)
class Scenario:
    """The whole input of ``costsim run``."""

    name: str
    calendar: Calendar
    models: tuple[ScenarioModel, ...]
    phases: tuple[Phase, ...]
    plans: tuple[Plan, ...]
    budget_usd: float | None = None
    discount_rate_pct_per_year: float = 0.0
    data: DataSizes = DataSizes()
    prices: ScenarioPrices = ScenarioPrices()
    uncertainty: Uncertainty = field(default_factory=Uncertainty)
    risk: RiskLimits = RiskLimits()
    measurements: Measurements = field(default_factory=Measurements)
    servers: tuple[ServerDeclaration, ...] = ()  # the scenario's own servers (``servers:``)
    # GPU quotas (DESIGN §13): fixed counts over one make a plan infeasible, elastic fleets
    # are capped at them (costsim.sim.quotas)
    quotas: tuple[Quota, ...] = ()
    # the currency reports show (DESIGN §13); every figure is computed and kept in USD
    currency: Currency = USD

    def __post_init__(self) -> None:
        if self.budget_usd is not None and not (math.isfinite(self.budget_usd)
                                                and 0 < self.budget_usd <= MAX_BUDGET_USD):
            raise ScenarioError("", "budget_usd", f"must be in (0, {MAX_BUDGET_USD:g}], got "
                                f"{self.budget_usd!r}")
        if not (math.isfinite(self.discount_rate_pct_per_year)
                and -10 <= self.discount_rate_pct_per_year <= 100):
            raise ScenarioError("", "discount_rate_pct_per_year",
                                f"must be in [-10, 100] %, got {self.discount_rate_pct_per_year!r}")
        _unique("models", [m.name for m in self.models])
        _unique("phases", [p.name for p in self.phases])
        _unique("plans", [p.name for p in self.plans])
        if not self.phases:
            raise ScenarioError("", "phases", "needs at least one phase")
        if not self.plans:
            raise ScenarioError("", "plans", "needs at least one plan")
        models = {m.name for m in self.models}
        for phase in self.phases:
            for model in phase.models:
                if model not in models:
                    raise _unknown(f"phases.{phase.name}.model", "model", model, models)
        self.phase_order()  # raises on unknown names and cycles in `after`
        self._check_phase_starts()
        for plan in self.plans:
            self._check_plan(plan)

    def earliest_starts_s(self) -> dict[str, float]:
        """Each phase's earliest start: after the phases it comes ``after`` at their shortest
        (experiments and serving last their months; a training run is taken to take no time,
        since its length is known only once simulated)."""
        starts: dict[str, float] = {}
        for phase in self.phase_order():
            starts[phase.name] = max((starts[d] + self._shortest_s(d) for d in phase.after),
                                     default=0.0)
        return starts

    def _shortest_s(self, name: str) -> float:
        phase = self.phase(name)
        if isinstance(phase, TrainingPhase):
            return 0.0
        return self.calendar.months_s(phase.duration_months)

    def _when(self, t_s: float) -> str:
        """A simulated time as a date, or as months after the start when past the calendar."""
        try:
            return self.calendar.date_at(t_s).isoformat()
        except (OverflowError, ValueError):
            return f"{t_s / self.calendar.months_s(1):,.1f} months after {self.calendar.start}"

    def _check_phase_starts(self) -> None:
        """A phase that cannot start before the horizon ends would silently cost nothing: bad
        input (DESIGN §7 "Warnings")."""
        horizon_s = self.calendar.horizon_s
        for name, start_s in self.earliest_starts_s().items():
            if start_s >= horizon_s:
                phase = self.phase(name)
                before = ", ".join(f"'{d}'" for d in phase.after)
                raise ScenarioError(
                    "", f"phases.{name}", f"phase '{name}' starts on {self._when(start_s)} at "
                    f"the earliest (after {before}), at or after the horizon's end "
                    f"{self.calendar.end}: it would never run; lengthen horizon_months or "
                    f"shorten the phases before it")

    def horizon_warnings(self) -> tuple[str, ...]:
        """What the horizon cuts whatever the plan: phases whose months run past its end at
        the earliest (their months after it are not simulated or counted)."""
        horizon_s, warnings = self.calendar.horizon_s, []
        for name, start_s in self.earliest_starts_s().items():
            phase = self.phase(name)
            if isinstance(phase, TrainingPhase):
                continue
            end_s = start_s + self._shortest_s(name)
            if end_s > horizon_s + 1e-6:
                warnings.append(
                    f"phase '{name}' ({phase.duration_months:g} months from "
                    f"{self._when(start_s)} at the earliest) runs past the horizon's end "
                    f"{self.calendar.end}: its last "
                    f"{(end_s - horizon_s) / self.calendar.months_s(1):,.1f} months are not "
                    f"simulated and cost nothing here")
        return tuple(warnings)

    def phase(self, name: str) -> Phase:
        """The phase called ``name``."""
        for phase in self.phases:
            if phase.name == name:
                return phase
        raise _unknown("phase", "phase", name, [p.name for p in self.phases])

    def model(self, name: str) -> ScenarioModel:
        """The model called ``name``."""
        for model in self.models:
            if model.name == name:
                return model
        raise _unknown("model", "model", name, [m.name for m in self.models])

    def phase_order(self) -> tuple[Phase, ...]:
        """Phases in an order where each comes after those it depends on (stable: the file's
        order among independent phases). Raises on unknown names and cycles."""
        names = {p.name for p in self.phases}
        for phase in self.phases:
            for dep in phase.after:
                if dep not in names:
                    raise _unknown(f"phases.{phase.name}.after", "phase", dep, names)
                if dep == phase.name:
                    raise ScenarioError("", f"phases.{phase.name}.after",
                                        "a phase cannot come after itself")
        placed: list[Phase] = []
        done: set[str] = set()
        while len(placed) < len(self.phases):
            ready = [p for p in self.phases
                     if p.name not in done and all(d in done for d in p.after)]
            if not ready:
                stuck = [p.name for p in self.phases if p.name not in done]
                raise ScenarioError("", "phases.after", f"the 'after' links form a cycle among "
                                    f"{', '.join(stuck)}")
            placed.append(ready[0])
            done.add(ready[0].name)
        return tuple(placed)

    def _check_plan(self, plan: Plan) -> None:
        where = f"plans.{plan.name}"
        phase_names = [p.name for p in self.phases]
        for use in plan.uses:
            if use.phase not in phase_names:
                raise _unknown(f"{where}.use", "phase", use.phase, phase_names)
            phase = self.phase(use.phase)
            if phase.kind is not PhaseKind.SERVING and use.api is not None:
                raise ScenarioError("", f"{where}.use.{use.phase}.option", f"'api' serves "
                                    f"requests: only a serving phase may call one; "
                                    f"{phase.kind} phase '{phase.name}' runs on GPUs")
            if phase.kind is not PhaseKind.SERVING and len(use.entries) > 1:
                raise ScenarioError("", f"{where}.use.{use.phase}", "only a serving phase may "
                                    f"mix GPU types; {phase.kind} phase '{phase.name}' names "
                                    f"{len(use.entries)}")
            self._check_traffic(where, use, phase)
            if isinstance(phase, TrainingPhase) and phase.layout is not None:
                count = use.entries[0].count
                if count is not None and count != phase.layout.gpus:
                    raise ScenarioError("", f"{where}.use.{use.phase}.count",
                                        f"the phase's fixed layout needs {phase.layout.gpus} "
                                        f"GPUs, the plan gives {count}")
        missing = [name for name in phase_names if name not in {u.phase for u in plan.uses}]
        if missing:
            raise ScenarioError("", f"{where}.use", f"says nothing about phase(s) "
                                f"{', '.join(missing)}: every plan must say how each phase runs")
        for i, commitment in enumerate(plan.commitments):
            self._in_horizon(f"{where}.commitments.{i}.start", commitment.start)
            check_in_calendar(f"{where}.commitments.{i}.term", commitment.start,
                              12 * commitment.term_years)
        for i, owned in enumerate(plan.owned):
            self._in_horizon(f"{where}.owned.{i}.purchase", owned.purchase)
        for sp in plan.savings_plans:
            self._in_horizon(f"{where}.commitments.{sp.index}.start", sp.start)
            check_in_calendar(f"{where}.commitments.{sp.index}.term", sp.start,
                              12 * sp.term_years)
        for block in plan.capacity_blocks:
            self._in_horizon(f"{where}.commitments.{block.index}.start", block.start)
            check_in_calendar(f"{where}.commitments.{block.index}.days", block.start,
                              days=block.days)

    @staticmethod
    def _check_traffic(where: str, use: PhaseUse, phase: Phase) -> None:
        """Traffic shares route a serving phase's request buckets: one share per bucket."""
        for j, entry in enumerate(use.entries):
            if entry.traffic is None:
                continue
            key = f"{where}.use.{use.phase}.fleet.{j}.traffic"
            if not isinstance(phase, ServingPhase):
                raise ScenarioError("", key, f"routes a serving phase's requests; {phase.kind} "
                                    f"phase '{phase.name}' has none")
            if len(entry.traffic) != len(phase.requests):
                raise ScenarioError("", key, f"needs one share per request bucket of phase "
                                    f"'{phase.name}' ({len(phase.requests)}), got "
                                    f"{len(entry.traffic)}")

    def _in_horizon(self, key: str, day: date) -> None:
        if not self.calendar.start <= day < self.calendar.end:
            raise ScenarioError("", key, f"must fall within the horizon {self.calendar.start} .. "
                                f"{self.calendar.end}, got {day}")


def _unique(key: str, names: list[str]) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ScenarioError("", key, f"the name '{name}' is used twice")
        seen.add(name)


def _unknown(key: str, kind: str, name: str, known: object) -> ScenarioError:
    from costsim.errors import suggest

    options = suggest(name, known if isinstance(known, set | list) else [])
    hint = f"; did you mean {' or '.join(repr(o) for o in options)}?" if options else ""
    return ScenarioError("", key, f"unknown {kind} '{name}'{hint}")
