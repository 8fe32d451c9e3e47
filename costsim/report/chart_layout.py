"""The layout of a chart: a column of panels placed from one measurement of their decorations.

Every report chart is one column of panels (a panel may have a twin axes), with an optional
figure title above and figure legends below. Matplotlib's constrained layout measures every
panel's decorations (tick labels, axis labels, titles, legends, annotations) twice, because
they change after the first re-position; this layout measures them once and places the panels
itself, so a chart's text is measured once for layout and once per format drawn
(docs/report.md, "How charts are drawn").

What could change after the panels move, and how it stays inside the figure:

- a legend anchored under its panel (``bbox_to_anchor`` below the axes) would move with the
  panel's height: it is re-anchored in display units, under the panel's lowest decoration, and
  its height is the panel's bottom margin;
- the tick labels of a resized axis: the locators choose their ticks from the axis length, so a
  panel's tick labels can differ after the move; the margins keep :data:`TICK_SLACK_IN` of room
  for that on the side of the value labels.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.spines import Spine
from matplotlib.transforms import Bbox

# Constrained layout's default padding (figure.constrained_layout.w_pad / h_pad: 3 pt).
PAD_IN = 3 / 72
# Room for a tick label that is wider after the move than measured ("$1.25M" for "$800k":
# three digits of 8-9 pt DejaVu Sans are about 0.2 in).
TICK_SLACK_IN = 0.2


def _rows(figure: Figure) -> list[list[Axes]]:
    """The figure's panels by grid row, top first (twins in their panel's row)."""
    rows: dict[int, list[Axes]] = defaultdict(list)
    for axes in figure.axes:
        spec = axes.get_subplotspec()
        if spec is None or not axes.get_in_layout():
            continue
        if spec.colspan.start != 0 or spec.colspan.stop != spec.get_gridspec().ncols:
            raise ValueError("stack_layout lays out one column of panels")
        rows[spec.rowspan.start].append(axes)
    return [rows[row] for row in sorted(rows)]


def _legend_below(axes: Axes) -> Legend | None:
    """The panel's legend when it is anchored under the panel (``bbox_to_anchor`` y < 0)."""
    legend = axes.get_legend()
    if legend is None:
        return None
    anchor = legend.get_bbox_to_anchor()
    box = axes.bbox
    return legend if anchor.y1 < box.y0 else None


def _extras(axes: Axes) -> list[Any]:
    """What a panel's tight box measures besides its axes and titles, less its spines: a spine
    lies on the axes' edge, and measuring it re-makes the axis's ticks to find the tick marks
    (3.5 pt), which the tick labels beyond them already cover."""
    return [a for a in axes.get_default_bbox_extra_artists() if not isinstance(a, Spine)]


def _legend_drop(legend: Legend, dpi: float) -> float:
    """How far below its anchor point a legend's box starts (its ``borderaxespad``), pixels."""
    return float(legend.borderaxespad * legend.prop.get_size_in_points() * dpi / 72)


def stack_layout(figure: Figure, renderer: Any) -> None:
    """Place the panels of ``figure`` (one column) so that every decoration is inside it: one
    measurement of each panel's tight box with ``renderer``, equal panel heights."""
    rows = _rows(figure)
    if not rows:
        return
    dpi = figure.dpi
    pad, slack = PAD_IN * dpi, TICK_SLACK_IN * dpi
    width, height = figure.bbox.width, figure.bbox.height
    below = {id(axes): legend for row in rows for axes in row
             if (legend := _legend_below(axes)) is not None}
    # where along its panel's width each such legend is anchored (a share of the width)
    along = {key: (legend.get_bbox_to_anchor().x0 - axes.bbox.x0) / axes.bbox.width
             for row in rows for axes in row
             if (legend := below.get(key := id(axes))) is not None}
    for legend in below.values():
        legend.set_in_layout(False)
    left = right = 0.0
    tops, bottoms = [], []
    for row in rows:
        top = bottom = 0.0
        for axes in row:
            box = axes.bbox
            tight = axes.get_tightbbox(renderer, for_layout_only=True,
                                       bbox_extra_artists=_extras(axes)) or box
            left = max(left, box.x0 - tight.x0)
            right = max(right, tight.x1 - box.x1)
            top = max(top, tight.y1 - box.y1)
            low = box.y0 - tight.y0
            legend = below.get(id(axes))
            if legend is not None:
                low += pad + _legend_drop(legend, dpi) + legend.get_window_extent(renderer).height
            bottom = max(bottom, low)
        tops.append(top)
        bottoms.append(bottom)
    head = pad
    title = getattr(figure, "_suptitle", None)  # its Text: get_suptitle() gives the string
    if title is not None and title.get_visible() and title.get_text():
        title.set_y(1.0 - pad / height)
        title.set_verticalalignment("top")
        head += title.get_window_extent(renderer).height + pad
    foot = pad
    for legend in figure.legends:  # at the figure's foot ("lower center", "lower left")
        foot = max(foot, legend.get_window_extent(renderer).y1 + pad)
    x0 = left + pad + slack
    x1 = width - right - pad - slack / 2
    gaps = sum(bottoms[i] + tops[i + 1] + 2 * pad for i in range(len(rows) - 1))
    usable = height - head - tops[0] - foot - bottoms[-1] - pad - gaps
    panel = usable / len(rows)
    if panel <= 0 or x1 <= x0:
        raise ValueError("the chart's decorations leave no room for its panels")
    y1 = height - head - tops[0]
    for index, row in enumerate(rows):
        y0 = y1 - panel
        place = Bbox.from_extents(x0 / width, y0 / height, x1 / width, y1 / height)
        for axes in row:
            axes.set_position(place)
            legend = below.get(id(axes))
            if legend is not None:
                top_px = y0 - (bottoms[index] - legend.get_window_extent(renderer).height
                               - _legend_drop(legend, dpi))
                anchor_x = x0 + along[id(axes)] * (x1 - x0)
                legend.set_bbox_to_anchor((anchor_x / width, top_px / height),
                                          transform=figure.transFigure)
        if index + 1 < len(rows):
            y1 = y0 - bottoms[index] - tops[index + 1] - 2 * pad
