"""What every report chart shares on costsim's own drawing: the figure, the plan colours, the
recommended plan's star, money, percentages and months on an axis, the budget line."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from costsim.domain.currency import USD, Currency
from costsim.report.plot.figure import Axis, Entry, Figure, Marker, Panel
from costsim.report.plot.fonts import DPI

PNG_DPI = DPI
# The colour-blind-safe qualitative palette of Okabe & Ito (2008), "Color Universal Design".
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442",
           "#000000")
# The recommended plan is marked the same way in every plan chart: a star before its name (in
# tick labels, legends and panel titles), bold where it names a bar, a black outline on its bar.
STAR = "\u2605"
RECOMMENDED_EDGE = "#000000"
RECOMMENDED_EDGE_PT = 1.8
BUDGET_COLOR = "#B00020"  # not in PALETTE: the budget must not read as a plan
BUDGET_DASH = (4.0, 2.0)  # points on, off
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Chart:
    """A finished chart: a file stem (fixed, never from user text), its title, the figure."""

    slug: str
    title: str
    figure: Figure


def new_figure(width_in: float = 9.0, height_in: float = 4.8, title: str = "") -> Figure:
    """An empty figure (its panels added with ``add_panels``)."""
    return Figure(width_in=width_in, height_in=height_in, title=title)


def plan_colors(names: Sequence[str]) -> dict[str, str]:
    """One colour per plan, in the order the scenario lists them (stable across charts)."""
    return {name: PALETTE[index % len(PALETTE)] for index, name in enumerate(names)}


def ranked(items: Iterable[T], cost: Callable[[T], float | None]) -> list[T]:
    """``items`` cheapest first (the run table's order); items without a cost last, in the
    order given."""
    listed = list(items)
    known = sorted((i for i in listed if cost(i) is not None), key=lambda i: cost(i) or 0.0)
    return known + [i for i in listed if cost(i) is None]


def plan_label(name: str, recommended: str | None) -> str:
    """A plan's name as charts show it: the recommended plan starred."""
    return f"{STAR} {name} (recommended)" if name == recommended else name


def tick_label(name: str, recommended: str | None) -> str:
    """A plan's name on an axis: the recommended plan starred (a legend entry from
    :func:`recommended_entry` says what the star means; plan names can be long)."""
    return f"{STAR} {name}" if name == recommended else name


def plan_ticks(axis: Axis, names: Sequence[str], recommended: str | None) -> None:
    """Plan names at 0, 1, 2 … on ``axis``, the recommended one starred and bold."""
    axis.set_ticks(range(len(names)), [tick_label(n, recommended) for n in names])
    if recommended is not None:
        axis.bold_labels = frozenset({tick_label(recommended, recommended)})


def plan_bars(panel: Panel, names: Sequence[str], values: Sequence[float],
              colors: Mapping[str, str], recommended: str | None, *,
              errors: Sequence[tuple[float, float]] = ()) -> None:
    """One horizontal bar per plan, in ``names``' order from the top, in each plan's colour;
    the recommended plan's bar outlined and its name starred and bold (:func:`plan_ticks`)."""
    panel.hbars(range(len(names)), values, [colors[n] for n in names],
                edges=[RECOMMENDED_EDGE if n == recommended else None for n in names],
                edge_width_pt=RECOMMENDED_EDGE_PT, errors=errors)
    plan_ticks(panel.y, names, recommended)
    panel.y.inverted = True


def names_width_in(names: Iterable[str], base_in: float = 9.0) -> float:
    """A figure wide enough that plan names on the y axis leave the plot half its width (about
    0.075 in per character at 9 pt, DejaVu Sans)."""
    longest = max((len(name) for name in names), default=0)
    return max(base_in, 5.0 + 0.075 * longest)


def recommended_entry(recommended: str | None, why: str = "") -> list[Entry]:
    """A legend entry explaining the star (none when nothing is recommended)."""
    if recommended is None:
        return []
    text = f"{STAR} recommended" + (f" ({why})" if why else "")
    return [Entry(text, kind="marker", marker=Marker.SQUARE, marker_pt=8.0, face=None,
                  edge=RECOMMENDED_EDGE, edge_width_pt=RECOMMENDED_EDGE_PT)]


def budget_line(panel: Panel, budget_usd: float | None, *, vertical: bool = False,
                currency: Currency = USD) -> None:
    """The scenario's budget as a dashed line across the plot (nothing when it sets none)."""
    if budget_usd is None:
        return
    label = f"budget {usd(budget_usd, currency)} (limit on the economic cost)"
    draw = panel.vline if vertical else panel.hline
    draw(budget_usd, BUDGET_COLOR, width_pt=1.3, dash=BUDGET_DASH, label=label)


def usd(amount: float, currency: Currency = USD) -> str:
    """A dollar amount short enough for an axis or a bar label: $950, $12.3k, $1.25M; in a
    display ``currency`` (the plot's data stay USD) the amount converted at its rate, with its
    symbol: €874, €11.3k."""
    symbol = currency.symbol
    sign = "-" if amount < 0 else ""
    value = abs(currency.rate(amount))  # a label, not a ledger amount: no rounding rule here
    for limit, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if value >= limit:
            scaled = value / limit
            return f"{sign}{symbol}{scaled:.3g}{suffix}"
    if value == 0:
        return f"{symbol}0"
    return f"{sign}{symbol}{value:,.0f}" if value >= 10 else f"{sign}{symbol}{value:.2f}"


def usd_axis(axis: Axis, currency: Currency = USD) -> None:
    """Money tick labels on ``axis`` (in ``currency``: the USD data labelled converted, the
    ticks at round amounts of it)."""
    axis.rate = currency.fx_rate_per_usd if not currency.is_usd else 1.0
    axis.format = lambda value: usd(value, currency)


def usd_log_axis(axis: Axis, currency: Currency = USD) -> None:
    """A log scale in money, ticks at 1, 2 and 5 of each decade."""
    axis.log = True
    axis.subs = (1.0, 2.0, 5.0)
    axis.format = lambda value: usd(value, currency)


def percent_axis(axis: Axis) -> None:
    """Percentage tick labels for values given as fractions."""
    axis.format = lambda value: f"{value * 100:.0f}%"


def month_ticks(axis: Axis, labels: Sequence[str]) -> None:
    """Month labels (YYYY-MM) on an index axis, thinned to at most about 12, slanted."""
    step = max(1, -(-len(labels) // 12))
    positions = list(range(0, len(labels), step))
    axis.set_ticks(positions, [labels[p] for p in positions], rotation=45.0)


def note(panel: Panel, text: str) -> None:
    """A sentence inside an empty panel, saying why it has nothing to draw."""
    panel.note = text
