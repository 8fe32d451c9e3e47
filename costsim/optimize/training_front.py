"""Training options for one training phase and their time–cost Pareto front (issue 11 item 5).

INTERFACE ONLY (filled by the i11-train helper): the types below are the contract with the
search and the report.
"""

from __future__ import annotations

from dataclasses import dataclass

from costsim.domain.pricing import PurchaseOption


@dataclass(frozen=True, slots=True, kw_only=True)
class TrainingOption:
    """One way to run a training phase, estimated analytically (no simulation)."""

    gpu: str  # canonical GPU name
    gpus: int
    layout: str  # as the simulator reports it: "tp=… pp=… dp=… zero=… micro_batch=… …"
    framework: str  # the training framework whose efficiency factor applies
    option: PurchaseOption  # on-demand, spot (with on-demand fallback), reserved, owned
    cloud: str | None  # the offering's cloud (None: owned)
    wall_time_s: float  # all-in expected wall time (steady ÷ goodput, with start-up)
    gpu_hours: float  # GPU-hours paid (whole instances)
    cost_usd: float  # expected cost of the phase with this option
    p_deadline_missed: float | None  # analytic P(wall time > deadline); None: no deadline
    meets_deadline: bool  # P(deadline missed) within the limit asked for (or expected time
    # within the deadline when no limit is given)
    on_front: bool  # not dominated in (wall_time_s, cost_usd)


@dataclass(frozen=True, slots=True, kw_only=True)
class TrainingFront:
    """Every memory-feasible option the search rated for one phase, and its Pareto front."""

    phase: str
    options: tuple[TrainingOption, ...]  # sorted by cost
    rated: int  # configurations rated (incl. those memory or the batch ruled out)

    @property
    def front(self) -> tuple[TrainingOption, ...]:
        """The non-dominated options, fastest first."""
        return tuple(sorted((o for o in self.options if o.on_front),
                            key=lambda o: (o.wall_time_s, o.cost_usd)))
