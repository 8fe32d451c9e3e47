"""The cost ledger: what a plan pays for, by category and component, in three views.

Three views are booked side by side, because finance asks three questions:

* **economic** (``cost_usd``): everything charged or committed for the plan within the horizon —
  compute, the whole obligation of every commitment (idle hours and the stranded part after the
  horizon included), owned capex minus the residual value at the horizon's end, power, staff,
  storage and data transfer;
* **cash**: what leaves the bank each month within the horizon (upfront payments and capex in the
  month they are paid, recurring charges when billed; nothing after the horizon);
* **amortized**: capex depreciated straight-line and upfront payments spread over their term.

Every line names a **category** and the **component** it pays for, so the budget split
(GPU vs memory and storage vs the rest) can be reported. Amounts are kept in float while a
replication runs and rounded to the cent once, at the end: each view's total is its exact sum
rounded to the cent, and its lines (months) are apportioned to it — each the floor or the ceiling
of its own amount in cents, the larger remainders rounded up (largest-remainder rounding) — so
lines add up to totals exactly and, where every charge is paid in the horizon and nothing is
capitalized, the cash of the months adds up to the economic cost to the cent (rounding each line
and each month on its own could leave them a few cents apart).
"""

from __future__ import annotations

import functools
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum


class Category(StrEnum):
    """Ledger categories (docs/simulator.md §3)."""

    COMPUTE = "compute"
    RESERVED_IDLE = "reserved-idle"
    SPOT_LOST_WORK = "spot-lost-work"
    STORAGE = "storage"
    DATA_TRANSFER = "data-transfer"
    CAPEX = "capex"
    RESIDUAL_VALUE = "residual-value"  # negative: value the hardware keeps at the horizon's end
    POWER_COLOCATION = "power-colocation"
    MAINTENANCE_STAFF = "maintenance-staff"
    STRANDED_COMMITMENT = "stranded-commitment"
    API_USAGE = "api-usage"  # per-token charges of a pay-per-token API (DESIGN §7)


class Component(StrEnum):
    """What a ledger line buys, for the budget split (GPU / memory and storage / the rest)."""

    GPU_INSTANCE = "gpu-instance"  # a rented GPU machine (its CPU and RAM come bundled)
    CPU_INSTANCE = "cpu-instance"
    STORAGE = "storage"
    NETWORK = "network"
    POWER_FACILITY = "power-facility"
    STAFF = "staff"
    GPU = "gpu"  # owned servers: the BOM's lines
    CPU = "cpu"
    MEMORY = "memory"
    CHASSIS = "chassis"
    API_TOKENS = "api-tokens"  # a pay-per-token API: GPU time bought by the token

    @property
    def budget_group(self) -> str:
        """``gpu``, ``memory-storage`` or ``other``: the seed rule's three budget shares."""
        if self in (Component.GPU_INSTANCE, Component.GPU, Component.API_TOKENS):
            return "gpu"
        if self in (Component.MEMORY, Component.STORAGE):
            return "memory-storage"
        return "other"


# The BOM's component kinds (costsim/data/server_components.csv) as ledger components.
BOM_KIND_COMPONENT: dict[str, Component] = {
    "gpu": Component.GPU, "cpu": Component.CPU, "ram": Component.MEMORY,
    "nvme": Component.STORAGE, "nic": Component.NETWORK, "fabric": Component.NETWORK,
    "chassis": Component.CHASSIS,
}


@dataclass(frozen=True, slots=True, kw_only=True)
class LineKey:
    """What identifies a ledger line: where the money went and why."""

    phase: str  # "" for plan-level lines (a commitment's idle hours, owned capex)
    pool: str  # "cloud region instance_type", or "owned <server>"
    gpu: str
    option: str
    category: Category
    component: Component


# A replication books a few dozen distinct lines, the same ones in every replication of a
# plan: a frozen dataclass costs ~5 µs to build, a memoized one a dict lookup. Bounded (a
# scenario has few phases, pools and GPU types); a miss builds an equal key.
_KEYS_KEPT = 4096


@functools.lru_cache(maxsize=_KEYS_KEPT)
def line_key(phase: str, pool: str, gpu: str, option: str, category: Category,
             component: Component) -> LineKey:
    """The :class:`LineKey` of these fields (memoized: equal to a new one, built once)."""
    return LineKey(phase=phase, pool=pool, gpu=gpu, option=option, category=category,
                   component=component)


@dataclass(frozen=True, slots=True, kw_only=True)
class LedgerLine:
    """One line of the economic ledger, rounded to the cent."""

    key: LineKey
    gpu_hours: float
    amount_usd: float

    @property
    def rate_usd_per_gpu_hour(self) -> float:
        """amount / GPU-hours (0 for lines that are not GPU time)."""
        return self.amount_usd / self.gpu_hours if self.gpu_hours > 0 else 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class MonthRow:
    """One calendar month of the horizon: cash (capex + opex) and the amortized cost."""

    month: str
    cash_usd: float
    capex_usd: float
    opex_usd: float
    amortized_usd: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Ledger:
    """A plan's ledger: economic lines and monthly rows, each adding up to its total."""

    lines: tuple[LedgerLine, ...]
    months: tuple[MonthRow, ...]

    @property
    def cost_usd(self) -> float:
        """Economic cost: the sum of the lines, to the cent."""
        return cents_sum(line.amount_usd for line in self.lines)

    @property
    def cash_usd(self) -> float:
        """Cash paid within the horizon: the sum of the monthly rows."""
        return cents_sum(row.cash_usd for row in self.months)

    def by_category(self) -> dict[Category, float]:
        """Economic cost per category, to the cent."""
        sums: dict[Category, list[float]] = defaultdict(list)
        for line in self.lines:
            sums[line.key.category].append(line.amount_usd)
        return {cat: cents_sum(values) for cat, values in sums.items()}

    def by_phase(self) -> dict[str, float]:
        """Economic cost per phase (plan-level lines under ""), to the cent."""
        line_cents = ledger_cents(self)[0]
        sums: dict[str, int] = {}
        for line, cents in zip(self.lines, line_cents, strict=True):
            phase = line.key.phase
            sums[phase] = sums.get(phase, 0) + cents
        # cents_sum of each phase's amounts: the same integer cents over 100
        return {phase: cents / 100 for phase, cents in sums.items()}

    def by_budget_group(self) -> dict[str, float]:
        """Economic cost per budget group (gpu / memory-storage / other), to the cent."""
        sums: dict[str, list[float]] = defaultdict(list)
        for line in self.lines:
            sums[line.key.component.budget_group].append(line.amount_usd)
        return {group: cents_sum(values) for group, values in sums.items()}


# A replication's ledger builds ~50 of these frozen rows; their generated __init__ sets each
# field through object.__setattr__ (~1.8 µs a MonthRow). These set the same slots through
# the slots' own descriptors (~0.8 µs): equal objects, the same fields
# (tests/sim/test_ledger.py checks both against the dataclasses' fields and constructors).
_LINE_FIELDS = ("key", "gpu_hours", "amount_usd")
_ROW_FIELDS = ("month", "cash_usd", "capex_usd", "opex_usd", "amortized_usd")
_NEW = object.__new__
_SET_LINE = tuple(LedgerLine.__dict__[name].__set__ for name in _LINE_FIELDS)
_SET_ROW = tuple(MonthRow.__dict__[name].__set__ for name in _ROW_FIELDS)


def _ledger_line(key: LineKey, gpu_hours: float, amount_usd: float) -> LedgerLine:
    """``LedgerLine(key=key, gpu_hours=gpu_hours, amount_usd=amount_usd)``."""
    line: LedgerLine = _NEW(LedgerLine)
    set_key, set_hours, set_amount = _SET_LINE
    set_key(line, key)
    set_hours(line, gpu_hours)
    set_amount(line, amount_usd)
    return line


class LedgerBook:
    """Accumulates one replication's charges; :meth:`close` rounds and freezes them."""

    def __init__(self, month_labels: Sequence[str]) -> None:
        self._labels = tuple(month_labels)
        self._lines: dict[LineKey, list[float]] = {}
        self._capex = [0.0] * len(self._labels)
        self._opex = [0.0] * len(self._labels)
        self._amortized = [0.0] * len(self._labels)

    def charge(self, key: LineKey, amount_usd: float, gpu_hours: float = 0.0) -> None:
        """Book an economic amount (and the GPU-hours it paid for) on a line."""
        if not math.isfinite(amount_usd) or not math.isfinite(gpu_hours):
            raise ValueError(f"non-finite charge on {key}: {amount_usd}, {gpu_hours}")
        line = self._lines.setdefault(key, [0.0, 0.0])
        line[0] += gpu_hours
        line[1] += amount_usd

    def cash(self, month: int, amount_usd: float, *, capex: bool) -> None:
        """Book cash paid in horizon month ``month`` (ignored outside the horizon)."""
        if 0 <= month < len(self._labels):
            (self._capex if capex else self._opex)[month] += amount_usd

    def amortize(self, month: int, amount_usd: float) -> None:
        """Book the amortized cost of horizon month ``month`` (ignored outside the horizon)."""
        if 0 <= month < len(self._labels):
            self._amortized[month] += amount_usd

    def spend(self, key: LineKey, month: int, amount_usd: float, gpu_hours: float = 0.0) -> None:
        """A pay-as-you-go charge: economic, cash (opex) and amortized views in one month."""
        # charge + cash + amortize inlined (the same additions in the same order): a
        # replication books ~100 of these
        if not math.isfinite(amount_usd) or not math.isfinite(gpu_hours):
            raise ValueError(f"non-finite charge on {key}: {amount_usd}, {gpu_hours}")
        line = self._lines.get(key)
        if line is None:
            line = self._lines[key] = [0.0, 0.0]
        line[0] += gpu_hours
        line[1] += amount_usd
        if 0 <= month < len(self._labels):
            self._opex[month] += amount_usd
            self._amortized[month] += amount_usd

    def spend_months(self, key: LineKey, months: Sequence[int], amounts_usd: Sequence[float],
                     gpu_hours: Sequence[float]) -> None:
        """:meth:`spend` of ``amounts_usd[i]`` and ``gpu_hours[i]`` in ``months[i]``, for each i
        in order: the same additions, one call (a rental pool books one per month)."""
        # every value finite when their sum is (a non-finite value makes it non-finite, and
        # so does an overflow: then each pair is checked, naming the first bad one)
        if len(amounts_usd) != len(gpu_hours) or not math.isfinite(
                sum(amounts_usd) + sum(gpu_hours)):
            for amount_usd, hours in zip(amounts_usd, gpu_hours, strict=True):
                if not math.isfinite(amount_usd) or not math.isfinite(hours):
                    raise ValueError(f"non-finite charge on {key}: {amount_usd}, {hours}")
        if not months:  # no spend, no line (as spending in no month books none)
            return
        line = self._lines.get(key)
        if line is None:
            line = self._lines[key] = [0.0, 0.0]
        n_months, opex, amortized = len(self._labels), self._opex, self._amortized
        for month, amount_usd, hours in zip(months, amounts_usd, gpu_hours, strict=True):
            line[0] += hours
            line[1] += amount_usd
            if 0 <= month < n_months:
                opex[month] += amount_usd
                amortized[month] += amount_usd

    def spend_many(self, charges: Sequence[tuple[LineKey, int, float]]) -> None:
        """:meth:`spend` of each (line, month, amount) in ``charges`` in order, no GPU-hours:
        the same additions in one call (storage books two a billing segment)."""
        for key, _, amount_usd in charges:
            if not math.isfinite(amount_usd):
                raise ValueError(f"non-finite charge on {key}: {amount_usd}, 0.0")
        lines, n_months = self._lines, len(self._labels)
        opex, amortized = self._opex, self._amortized
        # each line looked up once per key object (by identity: hashing a LineKey is Python
        # code, and a few keys recur here, e.g. storage and egress in every segment)
        by_id: dict[int, list[float]] = {}
        for key, month, amount_usd in charges:
            line = by_id.get(id(key))
            if line is None:
                line = lines.get(key)
                if line is None:
                    line = lines[key] = [0.0, 0.0]
                by_id[id(key)] = line
            line[0] += 0.0
            line[1] += amount_usd
            if 0 <= month < n_months:
                opex[month] += amount_usd
                amortized[month] += amount_usd

    def spend_segments(self, first: LineKey, first_usd: Sequence[float | None],
                       second: LineKey, second_usd: Sequence[float | None],
                       months: Sequence[int]) -> None:
        """:meth:`spend_many` of (``first``, ``months[i]``, ``first_usd[i]``) then (``second``,
        ``months[i]``, ``second_usd[i]``) for each i in order, a None skipped: the same
        additions in the same order (storage and egress in every billing segment)."""
        # a non-finite amount makes the sum non-finite (so does an overflow: spend_many then
        # checks each charge and books them all, the same additions)
        if not math.isfinite(sum([a for a in first_usd if a is not None])
                             + sum([b for b in second_usd if b is not None])):
            self.spend_many([(key, month, amount)  # raises its error
                             for month, a, b in zip(months, first_usd, second_usd, strict=True)
                             for key, amount in ((first, a), (second, b))
                             if amount is not None])
            return
        lines, n_months = self._lines, len(self._labels)
        opex, amortized = self._opex, self._amortized
        line_a: list[float] | None = None
        line_b: list[float] | None = None
        for month, a, b in zip(months, first_usd, second_usd, strict=True):
            booked = 0 <= month < n_months
            if a is not None:
                if line_a is None:
                    line_a = lines.get(first)
                    if line_a is None:
                        line_a = lines[first] = [0.0, 0.0]
                line_a[0] += 0.0
                line_a[1] += a
                if booked:
                    opex[month] += a
                    amortized[month] += a
            if b is not None:
                if line_b is None:
                    line_b = lines.get(second)
                    if line_b is None:
                        line_b = lines[second] = [0.0, 0.0]
                line_b[0] += 0.0
                line_b[1] += b
                if booked:
                    opex[month] += b
                    amortized[month] += b

    def close(self) -> Ledger:
        """The rounded, frozen ledger (lines sorted for a stable order): each view apportioned
        to its exact total rounded to the cent (:func:`apportion_cents`)."""
        ordered = sorted(self._lines.items(), key=_item_sort_key)
        line_cents = _whole_cents_of([amount for _, (_, amount) in ordered], _FLOAT_SCALE)
        lines = tuple(_ledger_line(key, hours, cents / 100)
                      for (key, (hours, _)), cents in zip(ordered, line_cents, strict=True))
        # a column of zeros is zeros to the cent, and the amortized view of pay-as-you-go
        # spending is the opex column itself (equal floats: the same cents)
        capex = (_whole_cents_of(self._capex, _FLOAT_SCALE) if any(self._capex)
                 else [0] * len(self._capex))
        opex = _whole_cents_of(self._opex, _FLOAT_SCALE)
        amortized = (opex if self._amortized == self._opex
                     else _whole_cents_of(self._amortized, _FLOAT_SCALE))
        ledger = Ledger(lines=lines, months=_month_rows_of_cents(self._labels, capex, opex,
                                                                 amortized))
        _remember_cents(ledger, (line_cents, capex, opex, amortized))
        return ledger


_Cents = tuple[list[int], list[int], list[int], list[int]]  # lines, capex, opex, amortized
# The whole cents of the ledgers closed lately, by the ledger's identity (the ledger kept with
# them, so its id cannot be reused while here): a replication's phase costs and the tally read
# a ledger's amounts as cents right after it is closed (round(a · 100) for each amount a,
# ~90 a replication), and c / 100 · 100 rounds back to c below 2^51 cents
# (:func:`_month_rows_of_cents`), so the kept cents are those. Ledgers with larger amounts are
# not kept (their amounts are read back as before).
_CENTS_KEPT = 64
_CENTS: dict[int, tuple[Ledger, _Cents]] = {}
_CENTS_EXACT = 2**51


def _remember_cents(ledger: Ledger, cents: _Cents) -> None:
    for column in cents:
        if column and (max(column) >= _CENTS_EXACT or min(column) <= -_CENTS_EXACT):
            return
    if len(_CENTS) >= _CENTS_KEPT:
        _CENTS.pop(next(iter(_CENTS)))
    _CENTS[id(ledger)] = (ledger, cents)


def ledger_cents(ledger: Ledger) -> _Cents:
    """Each line's amount and each month's capex, opex and amortized cost in whole cents,
    ``round(amount · 100)`` (as kept when the ledger was closed, else computed: the same
    integers). The lists are shared: not to be changed."""
    kept = _CENTS.get(id(ledger))
    if kept is not None and kept[0] is ledger:
        return kept[1]
    return ([round(line.amount_usd * 100) for line in ledger.lines],
            [round(row.capex_usd * 100) for row in ledger.months],
            [round(row.opex_usd * 100) for row in ledger.months],
            [round(row.amortized_usd * 100) for row in ledger.months])


class LedgerSums:
    """Replications' ledgers added one by one, in replication order: per line the GPU-hours
    (floats, added in that order) and integer cents, per month the capex, opex and amortized
    cents; :meth:`mean` is their mean ledger."""

    __slots__ = ("_by_id", "cents", "count", "hours", "labels", "month_cents")

    def __init__(self) -> None:
        self.count = 0
        self.hours: dict[LineKey, list[float]] = {}  # a one-element list a line
        self.cents: dict[LineKey, list[int]] = {}  # a one-element list a line
        self.month_cents: list[list[int]] = []  # capex, opex, amortized
        self.labels: list[str] = []
        # each line's two sums by its key object's id (the key kept with them, so its id
        # cannot be reused while here): the keys are memoized (:func:`line_key`), the same
        # objects in every replication, and hashing a LineKey is Python code (~0.3 µs, three
        # times a line); any other key object takes the hashed path
        self._by_id: dict[int, tuple[LineKey, list[float], list[int]]] = {}

    def add(self, ledger: Ledger) -> int:
        """Add the next replication's ledger; returns its lines' integer cents summed, so its
        cost is that over 100 (:attr:`Ledger.cost_usd`, the same cents)."""
        if not self.count:
            self.labels = [row.month for row in ledger.months]
            self.month_cents = [[0] * len(ledger.months) for _ in range(3)]
        by_id = self._by_id
        total = 0
        line_cents, capex_cents, opex_cents, amortized_cents = ledger_cents(ledger)
        for line, cents in zip(ledger.lines, line_cents, strict=True):
            key = line.key
            cells = by_id.get(id(key))
            if cells is None or cells[0] is not key:
                cells = self._cells(key)
            cells[1][0] += line.gpu_hours
            cells[2][0] += cents
            total += cents
        # integer sums (exact in any order), each view's months added in one comprehension
        self.month_cents = [[a + b for a, b in zip(sums, column, strict=True)]
                            for sums, column in zip(self.month_cents,
                                                    (capex_cents, opex_cents, amortized_cents),
                                                    strict=True)]
        self.count += 1
        return total

    def _cells(self, key: LineKey) -> tuple[LineKey, list[float], list[int]]:
        """The sums of ``key``'s line (new ones at 0), indexed by the key object's id."""
        hours = self.hours.get(key)
        if hours is None:
            hours = self.hours[key] = [0.0]
            self.cents[key] = [0]
        if len(self._by_id) > 4 * len(self.hours) + 64:  # key objects not reused: bounded
            self._by_id.clear()
        cells = self._by_id[id(key)] = (key, hours, self.cents[key])
        return cells

    def mean(self) -> Ledger:
        """The mean ledger of the ledgers added (:func:`mean_ledger_of`)."""
        if not self.count:
            raise ValueError("no ledgers to average")
        return mean_ledger_of(self.hours, {key: c[0] for key, c in self.cents.items()},
                              self.month_cents, self.labels, self.count)


def average_ledgers(ledgers: Sequence[Ledger]) -> Ledger:
    """The replications' mean ledger: each line and month averaged, then apportioned to the
    mean total rounded to the cent (in integer cents: the mean of replications whose cost and
    cash agree to the cent agrees to the cent too)."""
    sums = LedgerSums()
    for ledger in ledgers:
        sums.add(ledger)
    return sums.mean()


def mean_ledger_of(line_hours: Mapping[LineKey, list[float]], line_cents: Mapping[LineKey, int],
                   month_cents: Sequence[list[int]], labels: Sequence[str], n: int) -> Ledger:
    """The mean ledger of ``n`` replications from their sums: per line, the GPU-hours summed
    in replication order (a one-element list) and the integer cents; per view (capex, opex,
    amortized) and month, the integer cents (integer sums: the order does not matter)."""
    ordered = sorted(line_hours, key=_sort_key)
    amounts = [c / 100 for c in apportion_cents([line_cents[key] for key in ordered], n)]
    lines = tuple(LedgerLine(key=key, gpu_hours=line_hours[key][0] / n, amount_usd=amount)
                  for key, amount in zip(ordered, amounts, strict=True))

    def column(totals: list[int]) -> list[float]:
        return [c / 100 for c in apportion_cents(totals, n)]

    capex, opex, amortized = month_cents
    return Ledger(lines=lines, months=_month_rows(
        labels, column(capex), column(opex), column(amortized)))


def _month_rows(labels: Sequence[str], capex: Sequence[float], opex: Sequence[float],
                amortized: Sequence[float]) -> tuple[MonthRow, ...]:
    """Monthly rows from cent amounts; cash is capex + opex, in integer cents."""
    return tuple(
        MonthRow(month=label, capex_usd=c, opex_usd=o,
                 cash_usd=(round(c * 100) + round(o * 100)) / 100, amortized_usd=a)
        for label, c, o, a in zip(labels, capex, opex, amortized, strict=True))


def _month_rows_of_cents(labels: Sequence[str], capex: Sequence[int], opex: Sequence[int],
                         amortized: Sequence[int]) -> tuple[MonthRow, ...]:
    """:func:`_month_rows` of whole cents: the same rows. Cash is the integer sum of the cents
    :func:`_month_rows` recovers with ``round(c / 100 * 100)``, which is ``c`` itself (c / 100
    is within half an ulp of the exact quotient, so times 100 it is within |c| · 2^-52 < 0.5 of
    c for any |c| < 2^51 cents)."""
    set_month, set_cash, set_capex, set_opex, set_amortized = _SET_ROW
    rows = []
    # ``MonthRow(month=label, cash_usd=..., ...)`` through the slots (the rows of a replication)
    for label, c, o, a in zip(labels, capex, opex, amortized, strict=True):
        row: MonthRow = _NEW(MonthRow)
        set_month(row, label)
        set_cash(row, (c + o) / 100)
        set_capex(row, c / 100)
        set_opex(row, o / 100)
        set_amortized(row, a / 100)
        rows.append(row)
    return tuple(rows)


# Float amounts are apportioned in millionths of a cent: far below a cent, far above the float
# error of a replication's sums.
_FLOAT_SCALE = 1_000_000


def _whole_cents_of(amounts: Sequence[float], scale: int) -> list[int]:
    """Float dollar amounts in whole cents (integers), apportioned to their rounded total."""
    return apportion_cents([round(a * 100 * scale) for a in amounts], scale)


def apportion_cents(numerators: Sequence[int], denominator: int) -> list[int]:
    """Whole cents for the amounts ``numerators[i] / denominator`` cents: each the floor or the
    ceiling of its amount, adding up to the total rounded half away from zero; the amounts with
    the largest remainders are the ones rounded up (ties: the first listed), so no amount moves
    by a cent or more (Hamilton's largest-remainder rounding)."""
    if denominator < 1:
        raise ValueError(f"denominator must be >= 1, got {denominator}")
    floors = [value // denominator for value in numerators]
    remainders = [value - floor * denominator
                  for value, floor in zip(numerators, floors, strict=True)]
    up = _half_away(sum(numerators), denominator) - sum(floors)
    if up:
        # (−remainder, index) pairs sort as the key (−remainders[i], i) does, without a
        # Python key call per amount
        pairs = zip([-r for r in remainders], range(len(floors)), strict=True)
        for _, index in sorted(pairs)[:up]:
            floors[index] += 1
    return floors


def _half_away(numerator: int, denominator: int) -> int:
    """``numerator / denominator`` rounded half away from zero, in integers."""
    if numerator >= 0:
        return (2 * numerator + denominator) // (2 * denominator)
    return -((-2 * numerator + denominator) // (2 * denominator))


@functools.lru_cache(maxsize=_KEYS_KEPT)
def _sort_key(key: LineKey) -> tuple[str, ...]:
    return (key.phase, key.pool, key.gpu, key.option, key.category.value, key.component.value)


# :func:`_sort_key` by the key object's id, the key kept with it (so its id cannot be reused
# while here): a replication's keys are the memoized :func:`line_key` objects, and an id is
# hashed in C where a LineKey is hashed by Python code. Bounded like the keys.
_SORT_KEYS: dict[int, tuple[LineKey, tuple[str, ...]]] = {}


def _item_sort_key(item: tuple[LineKey, object]) -> tuple[str, ...]:
    key = item[0]
    kept = _SORT_KEYS.get(id(key))
    if kept is not None and kept[0] is key:
        return kept[1]
    if len(_SORT_KEYS) >= _KEYS_KEPT:
        _SORT_KEYS.clear()
    order = _SORT_KEYS[id(key)] = (key, _sort_key(key))
    return order[1]


def split_cents(total_usd: float, weights: Sequence[float]) -> list[float]:
    """``total_usd`` rounded to the cent and split in proportion to ``weights`` into cent
    amounts that add up to it exactly (:func:`apportion_cents`' largest remainder)."""
    cents = _half_away(round(abs(total_usd) * 100 * _FLOAT_SCALE), _FLOAT_SCALE)
    weight_sum = math.fsum(weights)
    if cents == 0 or weight_sum <= 0:
        return [0.0] * len(weights)
    shares = apportion_cents([round(cents * _FLOAT_SCALE * w / weight_sum) for w in weights],
                             _FLOAT_SCALE)
    return [math.copysign(c, total_usd) / 100 if c else 0.0 for c in shares]


def cents_sum(amounts: Iterable[float]) -> float:
    """Exact sum of cent amounts (integer cents, no float drift)."""
    return sum(round(a * 100) for a in amounts) / 100
