"""What every chart shares: the figure, the plan colours, money on an axis, PNG/SVG bytes.

Figures are built with ``matplotlib.figure.Figure`` and rendered by the Agg (PNG) and SVG
backends directly: no pyplot, so no global figure state and no display is needed. SVG output
carries no date and a fixed hash salt, so the same run draws the same file.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import matplotlib as mpl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import (
    FuncFormatter,
    LogLocator,
    MaxNLocator,
    NullFormatter,
    PercentFormatter,
)

from costsim.domain.currency import USD, Currency
from costsim.report.chart_layout import stack_layout
from costsim.report.plot.style import Chart as Chart  # TRANSITION

PNG_DPI = 120
# zlib level of the PNGs: level 3 against Pillow's default 6 cost 0.25 CPU s instead of 0.42 for
# the flagship's 9 charts (RGB, measured under load), files 5 % larger than RGB at level 6 and
# 6 % smaller than the RGBA files written before.
PNG_COMPRESS_LEVEL = 3
# The SVG's text is <text> in these families, not glyph outlines (svg.fonttype "none": 0.55 CPU s
# less for the flagship's 9 charts). Text is measured and laid out with DejaVu Sans, shipped
# with matplotlib and drawn into every PNG; Bitstream Vera Sans is the face DejaVu extends (the
# same widths) and Verdana its wide sibling; a viewer with none of them uses its sans-serif,
# usually narrower (Arial, Helvetica, Liberation Sans), so a label ends short of where it was
# measured to end and stays inside the figure.
SVG_FONTS = ("DejaVu Sans", "Bitstream Vera Sans", "Verdana", "sans-serif")
# The colour-blind-safe qualitative palette of Okabe & Ito (2008), "Color Universal Design".
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442",
           "#000000")
RC: dict[Any, Any] = {
    "font.size": 9, "axes.titlesize": 11, "axes.titleweight": "bold", "axes.grid": True,
    "grid.alpha": 0.3, "axes.spines.top": False, "axes.spines.right": False,
    "svg.hashsalt": "costsim", "svg.fonttype": "none", "figure.dpi": PNG_DPI,
    "font.family": "sans-serif", "font.sans-serif": list(SVG_FONTS),
    # titles at the axes' top (+ axes.titlepad): with the default (None) matplotlib measures
    # the whole y axis once per title in every drawing pass to look for x ticks or an offset
    # label above the axes, which no chart has (0.15 CPU s of the flagship's 9 charts)
    "axes.titley": 1.0}


# The recommended plan is marked the same way in every plan chart: a star before its name (in
# tick labels, legends and panel titles), bold where it names a bar, a black outline on its bar.
STAR = "\u2605"
RECOMMENDED_EDGE = "#000000"
BUDGET_COLOR = "#B00020"  # not in PALETTE: the budget must not read as a plan
T = TypeVar("T")


def new_figure(width_in: float = 9.0, height_in: float = 4.8) -> Figure:
    """An empty figure of the report's style (laid out by :func:`lay_out` when rendered)."""
    with mpl.rc_context(RC):
        figure = Figure(figsize=(width_in, height_in), layout=None)
    return figure


def subplots(figure: Figure, rows: int = 1, cols: int = 1, *, sharex: bool = False,
             width_ratios: Sequence[float] | None = None) -> list[Axes]:
    """The figure's axes in the report's style, as a flat list."""
    with mpl.rc_context(RC):
        grid = figure.subplots(rows, cols, squeeze=False, sharex=sharex,
                               width_ratios=width_ratios)
    return [axes for row in grid for axes in row]


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
    :func:`recommended_handle` says what the star means; plan names can be long)."""
    return f"{STAR} {name}" if name == recommended else name


def bold_recommended(labels: Iterable[Any], recommended: str | None) -> None:
    """Bold the tick label that names the recommended plan (labels from ``tick_label``)."""
    if recommended is None:
        return
    for label in labels:
        if label.get_text() == tick_label(recommended, recommended):
            label.set_fontweight("bold")


def names_width_in(names: Iterable[str], base_in: float = 9.0) -> float:
    """A figure wide enough that plan names on the y axis leave the plot half its width (about
    0.075 in per character at 9 pt, DejaVu Sans)."""
    longest = max((len(name) for name in names), default=0)
    return max(base_in, 5.0 + 0.075 * longest)


def recommended_handle(recommended: str | None, why: str = "") -> list[Any]:
    """A legend entry explaining the star (none when nothing is recommended)."""
    if recommended is None:
        return []
    text = f"{STAR} recommended" + (f" ({why})" if why else "")
    return [Line2D([], [], linestyle="none", marker="s", markersize=8, markerfacecolor="none",
                   markeredgecolor=RECOMMENDED_EDGE, markeredgewidth=1.8, label=text)]


def budget_line(axes: Axes, budget_usd: float | None, axis: str = "y",
                currency: Currency = USD) -> None:
    """The scenario's budget as a dashed line across the plot (nothing when it sets none)."""
    if budget_usd is None:
        return
    label = f"budget {usd(budget_usd, currency)} (limit on the economic cost)"
    draw = axes.axhline if axis == "y" else axes.axvline
    draw(budget_usd, color=BUDGET_COLOR, linestyle="--", linewidth=1.3, label=label, zorder=4)


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


class _ConvertedLocator(MaxNLocator):
    """Matplotlib's default ticks (AutoLocator's steps) chosen on the converted scale, so a EUR
    axis over USD data ticks at €10k, €20k rather than at the euros of $10k, $20k."""

    def __init__(self, rate: float) -> None:
        super().__init__(nbins="auto", steps=[1, 2, 2.5, 5, 10])
        self._rate = rate

    def tick_values(self, vmin: float, vmax: float) -> Any:
        ticks = super().tick_values(vmin * self._rate, vmax * self._rate)
        return [tick / self._rate for tick in ticks]


def usd_axis(axes: Axes, axis: str = "y", currency: Currency = USD) -> None:
    """Dollar tick labels on ``axis`` (in ``currency``: the USD data labelled converted, the
    ticks at round amounts of it)."""
    target = axes.yaxis if axis == "y" else axes.xaxis
    if not currency.is_usd:
        target.set_major_locator(_ConvertedLocator(currency.fx_rate_per_usd))
    target.set_major_formatter(FuncFormatter(lambda value, _pos: usd(value, currency)))


def usd_log_axis(axes: Axes, axis: str = "y", currency: Currency = USD) -> None:
    """A log scale in dollars, ticks at 1, 2 and 5 of each decade, no minor tick labels (they
    collide)."""
    target = axes.yaxis if axis == "y" else axes.xaxis
    (axes.set_yscale if axis == "y" else axes.set_xscale)("log")
    target.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    target.set_major_formatter(FuncFormatter(lambda value, _pos: usd(value, currency)))
    target.set_minor_formatter(NullFormatter())


def percent_axis(axes: Axes, axis: str = "y") -> None:
    """Percentage tick labels on ``axis`` for values given as fractions."""
    target = axes.yaxis if axis == "y" else axes.xaxis
    target.set_major_formatter(PercentFormatter(xmax=1.0, decimals=0))


def month_ticks(axes: Axes, labels: Sequence[str], axis: str = "x") -> None:
    """Month labels (YYYY-MM) on an index axis, thinned to at most about 12."""
    step = max(1, -(-len(labels) // 12))
    positions = list(range(0, len(labels), step))
    if axis == "x":
        axes.set_xticks(positions, [labels[p] for p in positions], rotation=45, ha="right")
    else:
        axes.set_yticks(positions, [labels[p] for p in positions])


def note(axes: Axes, text: str) -> None:
    """A sentence inside an empty panel, saying why it has nothing to draw."""
    axes.text(0.5, 0.5, text, ha="center", va="center", transform=axes.transAxes, wrap=True)
    axes.set_xticks([])
    axes.set_yticks([])


def lay_out(figure: Figure) -> Any:
    """Give ``figure`` its Agg canvas and place its panels (:func:`stack_layout`); return the
    canvas. The layout measures text with the renderer the PNG is then drawn by, and
    matplotlib caches text extents per renderer, so each text is measured once for both."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    with mpl.rc_context(RC):
        canvas: Any = FigureCanvasAgg(figure)
        figure.set_layout_engine(None)  # None, not "none": no layout draw in savefig
        stack_layout(figure, canvas.get_renderer())
    return canvas


def render(figure: Figure) -> tuple[bytes, bytes]:
    """The figure as PNG and SVG bytes: laid out once (:func:`lay_out`), then one drawing
    pass per format.

    The PNG is the Agg buffer saved as opaque RGB at zlib level :data:`PNG_COMPRESS_LEVEL`;
    the SVG writes its text as ``<text>`` elements (``svg.fonttype`` in :data:`RC`).
    docs/report.md, "How charts are drawn".
    """
    canvas = lay_out(figure)
    with mpl.rc_context(RC):
        canvas.draw()
        png = _png_bytes(canvas)
        svg = io.BytesIO()
        figure.savefig(svg, format="svg", metadata={"Date": None})
    return png, svg.getvalue()


def _png_bytes(canvas: Any) -> bytes:
    """The drawn Agg canvas as a PNG: RGB (the figure is opaque, so the alpha channel is all
    255 and is dropped), its dpi recorded, no software or date chunk."""
    from PIL import Image

    width, height = canvas.get_width_height(physical=True)
    image = Image.frombuffer("RGBA", (width, height), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
    out = io.BytesIO()
    image.convert("RGB").save(out, format="png", compress_level=PNG_COMPRESS_LEVEL,
                              dpi=(PNG_DPI, PNG_DPI))
    return out.getvalue()
