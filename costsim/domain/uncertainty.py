"""What Monte Carlo varies: distributions of the scenario's uncertain quantities.

These are descriptions only (the domain draws nothing); ``costsim.sim`` samples them from the
replication's named random stream. Every variable but one has a neutral default (no
uncertainty), so a scenario varies what its author wrote down; the exception is the throughput
error, whose default (None) is the performance model's own validated error (every steady-state
validation row within ±20 %: ``costsim/data/allin_loss.csv``), because an estimate is never
exact and the calibrated P10-P90 bands include it. Set it to ``Fixed(value=1)`` to take the
model at its word.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from costsim.errors import ScenarioError


def _finite(key: str, value: float) -> None:
    if not math.isfinite(value):
        raise ScenarioError("", key, f"must be a finite number, got {value}")


@dataclass(frozen=True, slots=True, kw_only=True)
class Fixed:
    """No uncertainty: always ``value``."""

    value: float

    def __post_init__(self) -> None:
        _finite("value", self.value)

    @property
    def mean(self) -> float:
        """Expected value."""
        return self.value


@dataclass(frozen=True, slots=True, kw_only=True)
class Normal:
    """Normal(mean, sd), clipped to [low, high] when given (a growth rate or a price drift)."""

    mean: float
    sd: float
    low: float | None = None
    high: float | None = None

    def __post_init__(self) -> None:
        _finite("mean", self.mean)
        _finite("sd", self.sd)
        if self.sd < 0:
            raise ScenarioError("", "sd", f"must be >= 0, got {self.sd}")
        if self.low is not None and self.high is not None and self.low > self.high:
            raise ScenarioError("", "low", f"must be <= high ({self.high}), got {self.low}")


@dataclass(frozen=True, slots=True, kw_only=True)
class LogNormal:
    """A multiplicative factor: ``median · exp(sigma · Z)`` (a throughput or failure-rate error).

    Its mean is ``median · exp(sigma²/2)``: a sigma of 0.1 widens the spread without moving the
    median, the usual way to state an estimate's error (e.g. "±10 %").
    """

    sigma: float
    median: float = 1.0

    def __post_init__(self) -> None:
        _finite("sigma", self.sigma)
        _finite("median", self.median)
        if not 0 <= self.sigma <= 3:
            raise ScenarioError("", "sigma", f"must be in [0, 3], got {self.sigma}")
        if self.median <= 0:
            raise ScenarioError("", "median", f"must be > 0, got {self.median}")

    @property
    def mean(self) -> float:
        """Expected value."""
        return self.median * math.exp(self.sigma**2 / 2)


@dataclass(frozen=True, slots=True, kw_only=True)
class Uniform:
    """Uniform on [low, high]."""

    low: float
    high: float

    def __post_init__(self) -> None:
        _finite("low", self.low)
        _finite("high", self.high)
        if self.low > self.high:
            raise ScenarioError("", "low", f"must be <= high ({self.high}), got {self.low}")

    @property
    def mean(self) -> float:
        """Expected value."""
        return (self.low + self.high) / 2


@dataclass(frozen=True, slots=True, kw_only=True)
class Triangular:
    """Triangular(low, mode, high): a planner's "at least, most likely, at most"."""

    low: float
    mode: float
    high: float

    def __post_init__(self) -> None:
        for key in ("low", "mode", "high"):
            _finite(key, getattr(self, key))
        if not self.low <= self.mode <= self.high:
            raise ScenarioError("", "mode", f"needs low <= mode <= high, got {self.low}, "
                                f"{self.mode}, {self.high}")

    @property
    def mean(self) -> float:
        """Expected value."""
        return (self.low + self.mode + self.high) / 3


Distribution = Fixed | Normal | LogNormal | Uniform | Triangular


@dataclass(frozen=True, slots=True, kw_only=True)
class Uncertainty:
    """The scenario's uncertainty block (docs/simulator.md §4).

    Factors multiply the engine's figure (1 = as estimated); percentages add to the scenario's
    own value. ``demand_growth_pct_per_month`` replaces each serving phase's growth when given.
    """

    # × the performance model's throughput (training tokens/s, serving requests/s);
    # None: the model's validated error
    throughput_error: Distribution | None = None
    # replaces the serving load's growth % per month
    demand_growth_pct_per_month: Distribution | None = None
    # × the hardware interruption rate of training runs
    failure_rate_scale: Distribution = Fixed(value=1.0)
    # × the all-in loss beyond hardware faults (software faults, rollbacks, idle allocation)
    allin_loss_scale: Distribution = Fixed(value=1.0)
    # % per year change of rental prices from the price-book date (compounded monthly)
    price_drift_pct_per_year: Distribution = Fixed(value=0.0)
    # × the spot interruption hazard of the price book
    spot_hazard_scale: Distribution = Fixed(value=1.0)
    # × the experiment phases' job arrival rate
    job_arrivals_scale: Distribution = Fixed(value=1.0)
    # × the training phases' token counts (a data set that grows or shrinks)
    training_tokens_scale: Distribution = Fixed(value=1.0)

    def __post_init__(self) -> None:
        for name in FACTOR_VARIABLES:
            dist = getattr(self, name)
            if isinstance(dist, Fixed) and dist.value <= 0:
                raise ScenarioError("", f"uncertainty.{name}", f"a factor must be > 0, got "
                                    f"{dist.value}")
            if isinstance(dist, Uniform | Triangular) and dist.low <= 0:
                raise ScenarioError("", f"uncertainty.{name}.low",
                                    f"a factor must stay > 0, got {dist.low}")
            if isinstance(dist, Normal):
                raise ScenarioError("", f"uncertainty.{name}", "a factor takes fixed, lognormal, "
                                    "uniform or triangular (a normal can go negative)")

    def variables(self) -> tuple[str, ...]:
        """Names of the variables, in declaration order (each gets its own random stream)."""
        return tuple(f.name for f in fields(self))


FACTOR_VARIABLES = ("throughput_error", "failure_rate_scale", "allin_loss_scale",
                    "spot_hazard_scale", "job_arrivals_scale", "training_tokens_scale")
