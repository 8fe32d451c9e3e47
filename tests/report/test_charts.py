"""The run report's and the sweep's charts as a reviewer reads them: no text past the figure's
edge, plans ranked cheapest first with the recommended plan starred, the budget drawn, scales
that do not squeeze plans together, fleets from every replication (issue 19 item 7)."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest

from costsim.report.charts import build_charts
from costsim.report.charts_capacity import reserved_utilization, serving_fleet
from costsim.report.charts_cost import (
    cost_by_phase_category,
    cost_by_plan,
    cost_per_training_run,
    cumulative_cost,
    monthly_cash_flow,
)
from costsim.report.charts_sweep import cost_distribution, readable_key, readable_label, tornado
from costsim.report.plot.figure import Bars, Label, Line, Panel, Place, Span
from costsim.report.plot.figure import Figure as PlotFigure
from costsim.report.plot.layout import place
from costsim.report.plot.render import scene_of
from costsim.report.plot.style import BUDGET_COLOR, PNG_DPI, RECOMMENDED_EDGE, STAR, Chart
from costsim.sim.run_result import RunResult
from costsim.sweep.results import SweepResult
from tests.report.chart_checks import assert_inside
from tests.report.runs import FORMULA_NAME, SCRIPT_NAME
from tests.sweep.results_builders import plan_row, sweep_of

PLANS = ("all-on-demand", "large-cards", "small-a10g", "reserved-base", "spot-checkpoints",
         "buy-servers")


def _ranked_names(run: RunResult) -> list[str]:
    feasible = [p for p in run.plans if p.cost_usd is not None]
    return [p.name for p in sorted(feasible, key=lambda p: p.cost_usd.mean)]  # type: ignore[union-attr]


def _star(name: str) -> str:
    """The recommended plan in a legend or a panel title."""
    return f"{STAR} {name} (recommended)"


def _tick(name: str) -> str:
    """The recommended plan on an axis (the legend says what the star means)."""
    return f"{STAR} {name}"


def _chart(chart: Chart | None) -> Chart:
    assert chart is not None
    return chart


def test_every_run_chart_keeps_its_text_inside_the_figure(run: RunResult) -> None:
    charts = build_charts(run, run.breakevens)
    assert {c.slug for c in charts} == {
        "cost_by_plan", "cost_per_training_run", "cumulative_cost", "monthly_cash_flow",
        "cost_by_phase_category", "reserved_utilization", "break_even", "serving_fleet",
        "spend_split"}
    for chart in charts:
        scene = scene_of(chart.figure)  # laid out at the dpi the PNG is drawn at
        assert (scene.width, scene.height) == (round(chart.figure.width_in * PNG_DPI),
                                               round(chart.figure.height_in * PNG_DPI))
        assert_inside(chart)


def _plot_panel(chart: Chart | None) -> Panel:
    (panel,) = _chart(chart).figure.panels
    return panel


def test_cost_by_plan_ranks_cheapest_first_stars_the_recommendation_and_draws_the_budget(
        run: RunResult) -> None:
    chosen = run.recommendation.plan
    assert chosen is not None
    panel = _plot_panel(cost_by_plan(run))
    names = panel.y.tick_labels
    assert names == [_tick(n) if n == chosen else n for n in _ranked_names(run)]
    assert [n for n in names or [] if n.startswith(STAR)] == [_tick(chosen)]
    assert panel.y.bold_labels == {_tick(chosen)}
    assert panel.y.inverted  # cheapest at the top
    assert panel.legend is not None
    assert panel.legend.entries[0].label.startswith(f"{STAR} recommended (")
    (bars,) = [m for m in panel.marks if isinstance(m, Bars)]
    outlined = [i for i, edge in enumerate(bars.edges) if edge == RECOMMENDED_EDGE]
    assert outlined == [names.index(_tick(chosen))]
    assert bars.edge_width_pt > 1
    assert RECOMMENDED_EDGE == "#000000"
    budget = [m for m in panel.marks if isinstance(m, Span) and m.label.startswith("budget")]
    assert len(budget) == 1
    assert budget[0].vertical
    assert budget[0].value == run.scenario.budget_usd
    assert budget[0].color == BUDGET_COLOR
    assert panel.x.high is not None
    assert panel.x.high > run.scenario.budget_usd
    scene = scene_of(_chart(cost_by_plan(run)).figure)
    drawn = {t.text for t in scene.texts}
    assert {_tick(chosen), "$0"} <= drawn  # the names and the money axis are drawn


def test_cost_by_plan_stars_the_plan_it_is_told(run: RunResult) -> None:
    """optimize marks its own choice (which rests on its objective), not the run's."""
    other = _ranked_names(run)[-1]
    names = _plot_panel(cost_by_plan(run, recommended=other)).y.tick_labels or []
    assert names[-1] == _tick(other)
    assert sum(name.startswith(STAR) for name in names) == 1


def test_cost_per_training_run_is_ranked_by_its_own_figure(run: RunResult) -> None:
    panel = _plot_panel(cost_per_training_run(run))
    (bars,) = [m for m in panel.marks if isinstance(m, Bars)]
    assert list(bars.lengths) == sorted(bars.lengths)
    assert _tick(run.recommendation.plan or "") in (panel.y.tick_labels or [])


def test_cumulative_cost_has_the_budget_a_ranked_legend_and_a_log_scale_when_plans_lie_far_apart(
        run: RunResult) -> None:
    panel = _plot_panel(cumulative_cost(run))
    budget = [m for m in panel.marks if isinstance(m, Span) and m.label.startswith("budget")]
    assert len(budget) == 1
    assert not budget[0].vertical
    assert budget[0].value == run.scenario.budget_usd
    legend = panel.legend
    assert legend is not None
    assert legend.place is Place.RIGHT  # beside the plot, off the lines
    plans = [e.label for e in legend.entries if not e.label.startswith("budget")]
    chosen = run.recommendation.plan
    assert plans == [_star(n) if n == chosen else n for n in _ranked_names(run)]
    widths = {m.label: m.width_pt for m in panel.marks if isinstance(m, Line)}
    mine = widths.pop(_star(chosen or ""))
    assert mine > max(widths.values())  # the recommended plan drawn thicker
    # the owned plan pays its servers up front: its cash ends ~6x the others'
    assert panel.y.log
    assert "log scale" in panel.y.label
    (placed,) = place(_chart(cumulative_cost(run)).figure).panels
    assert {"$10k", "$20k", "$50k"} <= set(placed.y.labels)  # 1, 2 and 5 of each decade


def test_cumulative_cost_stays_linear_when_the_plans_are_alike(run: RunResult) -> None:
    rented = tuple(p for p in run.plans if p.name != "buy-servers")
    panel = _plot_panel(cumulative_cost(dataclasses.replace(run, plans=rented)))
    assert not panel.y.log
    assert panel.y.low == 0


def _plan_of(panel: Panel) -> str:
    return panel.title.removeprefix(f"{STAR} ").removesuffix(" (recommended)")


def test_monthly_cash_flow_panels_share_one_scale_and_a_purchase_is_cut_and_labelled(
        run: RunResult) -> None:
    figure = _chart(monthly_cash_flow(run)).figure
    panels = figure.panels
    assert len({(panel.y.low, panel.y.high) for panel in panels}) == 1
    placed = place(figure).panels
    assert len({(p.y.reach.low, p.y.reach.high, p.y.labels) for p in placed}) == 1
    assert all(panel.title_left for panel in panels)
    titles = [panel.title for panel in panels]
    chosen = run.recommendation.plan
    assert titles == [_star(n) if n == chosen else n for n in _ranked_names(run)]
    assert [panel.title_bold for panel in panels] == [t == _star(chosen or "") for t in titles]
    owner = panels[titles.index("buy-servers")]
    notes = [m.text for m in owner.marks if isinstance(m, Label)]
    assert len(notes) == 1
    assert "cut at the shared scale" in notes[0]
    assert notes[0] in {t.text for t in scene_of(figure).texts}
    months = [row for p in run.plans if p.ledger is not None for row in p.ledger.months]
    top = panels[0].y.high
    assert top == pytest.approx(1.15 * max(row.opex_usd for row in months))  # opex fills it
    assert top < max(row.cash_usd for row in months) / 10  # the purchase month is cut


def test_cost_by_phase_category_gives_each_phase_its_scale_and_keeps_the_legend_off_the_bars(
        run: RunResult) -> None:
    figure = _chart(cost_by_phase_category(run)).figure
    panels = figure.panels
    assert [panel.title.split(":")[0] for panel in panels] == [
        "phase prototype", "phase train", "phase serve",
        "plan-wide (owned hardware, commitments, storage)"]
    assert all(panel.legend is None for panel in panels)
    assert figure.legend is not None  # one legend, under the panels
    train = panels[1]
    widest = max(base + length for bars in train.marks if isinstance(bars, Bars)
                 for base, length in zip(bars.base, bars.lengths, strict=True))
    assert train.x.high is not None
    assert train.x.high < 1.5 * widest  # not flattened by the plan-wide capex
    chosen = run.recommendation.plan
    for panel in panels:
        assert panel.y.tick_labels == [_tick(n) if n == chosen else n for n in _ranked_names(run)]
        assert panel.y.bold_labels == {_tick(chosen or "")}


def test_the_bar_charts_draw_no_empty_bar_and_keep_every_plan_in_view(run: RunResult) -> None:
    # a zero capex month or a zero category segment is drawn as nothing, not as a bar
    cash = _chart(monthly_cash_flow(run)).figure
    by_plan = {p.name: p for p in run.plans}
    for panel in cash.panels:
        plan = by_plan[_plan_of(panel)]
        assert plan.ledger is not None
        black = [length for bars in panel.marks if isinstance(bars, Bars)
                 for length, color in zip(bars.lengths, bars.colors, strict=True)
                 if color == "#000000"]
        assert len(black) == sum(1 for row in plan.ledger.months if row.capex_usd != 0)
        assert all(length != 0 for length in black)
    assert cash.legend is not None
    assert [e.label for e in cash.legend.entries] == ["capex (purchases)", "opex"]
    phases = _chart(cost_by_phase_category(run)).figure
    for panel in phases.panels:
        assert all(length != 0 for bars in panel.marks if isinstance(bars, Bars)
                   for length in bars.lengths)
        assert panel.y.low is not None
        assert panel.y.high is not None
        low, high = sorted((panel.y.low, panel.y.high))
        assert panel.y.inverted
        assert low < 0 < len(PLANS) - 1 < high  # every plan's row, first at the top


def test_reserved_utilization_legend_is_ranked_and_starred(run: RunResult) -> None:
    from costsim.report.plot.figure import Line, Place

    chart = _chart(reserved_utilization(run))
    panel = _plot_panel(chart)
    assert panel.legend is not None
    assert [e.label for e in panel.legend.entries] == [_star("reserve-serving")]
    assert panel.legend.place is Place.RIGHT
    assert panel.legend.title == "cheapest first"
    (line,) = [m for m in panel.marks if isinstance(m, Line)]
    assert line.width_pt > 2  # the recommended plan drawn thicker
    # the drawn legend and month ticks
    drawn = {t.text for t in scene_of(chart.figure).texts}
    assert {_star("reserve-serving"), "cheapest first", "100%"} <= drawn
    assert all(len(label) == 7 for label in place(chart.figure).panels[0].x.labels)  # YYYY-MM


def test_serving_fleet_draws_every_replication_as_bands_and_identical_fleets_as_one_line(
        run: RunResult) -> None:
    from costsim.report.plot.figure import Band, Line

    chart = _chart(serving_fleet(run))
    day, year = chart.figure.panels
    assert chart.figure.title.startswith("Serving fleet size")
    assert "replication 1" not in chart.figure.title
    for panel in (day, year):
        assert panel.legend is not None
        labels = [e.label for e in panel.legend.entries]
        # every rented plan serves on the same autoscaled fleet: one line names them all,
        # cheapest first (a line drawn over another would hide it)
        assert labels == ["\n= ".join([_star("reserve-serving"), "spot-train", "all-on-demand",
                                       SCRIPT_NAME, FORMULA_NAME]), "buy-servers"]
        assert len(labels) == len([m for m in panel.marks if isinstance(m, Line)])
        assert len([m for m in panel.marks if isinstance(m, Band)]) == len(labels)  # P10–P90
    assert place(chart.figure).panels[0].x.labels[:3] == ("0", "2", "4")  # hours of the day
    bands = next(b for p in run.plans if p.name == "all-on-demand" for b in p.serving_fleet)
    low, mid, high = (np.array(bands.by_clock_hour)[:, i] for i in range(3))
    assert (low <= mid).all()
    assert (mid <= high).all()
    assert (high > low).any()  # the replications differ: a band, not one future


def _sweep() -> SweepResult:
    """18 variants × 6 plans with the flagship what-if's labels; plan i costs (i+1) × peak."""
    rows = []
    for variant, (name, peak, change) in enumerate(itertools.product(
            ["llama-3-8b", "llama-2-13b"], [20, 40, 80], [-10, -25, -40])):
        overrides = {"phases.serve.load.peak_requests_per_s": peak,
                     "prices.gpu_price_change_pct.H100": change}
        for index, plan in enumerate(PLANS):
            row = plan_row(variant, overrides, 1000.0 * (index + 1) * peak - change, plan=plan,
                           name=name)
            breaches = ("P(over budget) 20% > 10%",) if index == 0 and peak == 20 else ()
            rows.append(dataclasses.replace(
                row, label=f"{name}, peak_requests_per_s={peak}, H100={change}",
                limit_breaches=breaches))
    return dataclasses.replace(sweep_of(rows), variants=18)


def _drawn_ticks(figure: PlotFigure, axis: str) -> list[str]:
    """The tick labels drawn on every panel's ``axis`` ("x" or "y"), top panel first."""
    return [label for placed in place(figure).panels for label in getattr(placed, axis).labels
            if label]


def test_the_sweep_charts_keep_their_text_inside_and_name_inputs_in_words() -> None:
    result = _sweep()
    distribution, spread = _chart(cost_distribution(result)), _chart(tornado(result))
    for chart in (distribution, spread):
        assert_inside(chart)
    names = _drawn_ticks(spread.figure, "y")
    assert set(names) == {"variant (sweep file)", "peak requests/s (phase serve)",
                          "GPU price change % (H100)"}
    assert _drawn_ticks(distribution.figure, "y")[0] == (
        "llama-3-8b, peak requests/s (phase serve) = 20, GPU price change % (H100) = -10")
    drawn = {t.text for t in scene_of(distribution.figure).texts}
    assert "llama-2-13b, peak requests/s (phase serve) = 80, GPU price change % (H100) = -40" in (
        drawn)


def test_the_sweep_ranks_plans_and_stars_each_variants_recommendation() -> None:
    from costsim.report.plot.figure import Marker, Points

    result = _sweep()
    panel = _plot_panel(cost_distribution(result))
    assert panel.legend is not None
    assert [e.label for e in panel.legend.entries][:len(PLANS)] == list(PLANS)  # by cost
    assert panel.legend.entries[len(PLANS)].marker is Marker.STAR
    stars = [m for m in panel.marks if isinstance(m, Points) and m.marker is Marker.STAR]
    assert sum(len(m.xs) for m in stars) == 18  # one per variant
    # at peak 20 the cheapest plan breaks a risk limit: the second is recommended there
    second = [m for m in stars if m.face == "#E69F00"]
    assert sum(len(m.xs) for m in second) == 6
    panels = _chart(tornado(result)).figure.panels
    assert [p.title.split(" (")[0] for p in panels] == [f"{STAR} {PLANS[0]}", *PLANS[1:]]
    assert panels[0].title.endswith("(recommended in 12 of 18 variants)")
    assert [p.title_bold for p in panels] == [True] + [False] * (len(PLANS) - 1)


@pytest.mark.parametrize(("key", "words"), [
    ("phases.serve.load.peak_requests_per_s", "peak requests/s (phase serve)"),
    ("prices.gpu_price_change_pct.H100", "GPU price change % (H100)"),
    ("models.assistant.preset", "preset (model assistant)"),
    ("budget_usd", "budget (USD)"),
    ("phases.train.tokens", "tokens (phase train)"),
])
def test_readable_key(key: str, words: str) -> None:
    assert readable_key(key) == words


def test_readable_label_finds_each_suffix_among_the_swept_keys() -> None:
    keys = ["phases.serve.load.peak_requests_per_s", "prices.gpu_price_change_pct.H100"]
    assert readable_label("13b, peak_requests_per_s=40, H100=-25", keys) == (
        "13b, peak requests/s (phase serve) = 40, GPU price change % (H100) = -25")
    assert readable_label("as written", keys) == "as written"


def test_long_plan_names_stay_inside_every_chart(run: RunResult) -> None:
    """optimize's generated names run to 60+ characters
    (``opt-3-h100-spot.2b200-spot.h100+rsv-1h100-1y-all-upfront-balanced``)."""
    suffix = ".2b200-spot.h100+rsv-1h100-1y-all-upfront-balanced"
    plans = tuple(dataclasses.replace(p, name=p.name + suffix) for p in run.plans)
    chosen = f"{run.recommendation.plan}{suffix}"
    long = dataclasses.replace(run, plans=plans, recommendation=dataclasses.replace(
        run.recommendation, plan=chosen))
    for chart in build_charts(long, ()):
        assert_inside(chart)


def test_a_display_currency_names_its_code_on_the_axes_and_converts_the_labels(
        run: RunResult) -> None:
    """Issue 21 item 5: the data stay USD, the axis titles name the scenario's currency and
    the tick and bar labels are the USD figures × the rate, with its symbol."""
    from costsim.domain.currency import Currency

    eur = dataclasses.replace(run, scenario=dataclasses.replace(
        run.scenario, currency=Currency(code="EUR", fx_rate_per_usd=0.92)))
    figure = _chart(cost_by_plan(eur)).figure
    (panel,) = figure.panels
    assert panel.x.label.startswith("Economic cost over the horizon (EUR, mean")
    (placed,) = place(figure).panels
    ticks = [t for t in placed.x.labels if t]
    assert ticks
    assert all(t.startswith(("€", "-€")) for t in ticks)
    # the ticks sit at round euro amounts (€0, €100k, €200k ...), each the USD position × 0.92
    euros = np.array(placed.x.positions) * 0.92
    step = euros[1] - euros[0]
    assert step > 0
    assert np.allclose(euros / step, np.round(euros / step))
    assert f"{step:.3g}"[0] in "125"
    budget = [m for m in panel.marks if isinstance(m, Span) and m.label.startswith("budget")]
    assert "€" in budget[0].label
    assert "EUR" in _plot_panel(cumulative_cost(eur)).y.label
    cash = _chart(monthly_cash_flow(eur)).figure
    assert all(panel.y.label in ("EUR per month", "") for panel in cash.panels)
    # the shared scale's ticks at round euro amounts too
    placed_cash = place(cash).panels[0]
    assert placed_cash.y.labels
    assert all(t.startswith("€") for t in placed_cash.y.labels)
    euros = np.array(placed_cash.y.positions) * 0.92
    assert np.allclose(euros / euros[1], np.round(euros / euros[1]))
    titles = [panel.title for panel in _chart(cost_by_phase_category(eur)).figure.panels]
    assert titles
    assert all(t.endswith(": EUR, mean") for t in titles)
    from costsim.report.budget_split import spend_split_chart

    spend = [p.title for p in _chart(spend_split_chart(eur)).figure.panels]
    assert spend
    assert all(": €" in t for t in spend)


def test_the_sweep_charts_name_the_display_currency() -> None:
    from costsim.domain.currency import Currency

    gbp = Currency(code="GBP", fx_rate_per_usd=0.8)
    panel = _plot_panel(cost_distribution(_sweep(), gbp))
    assert panel.x.label.startswith("Economic cost over the horizon (GBP)")
    spread = _chart(tornado(_sweep(), gbp))
    ticks = _drawn_ticks(spread.figure, "x")
    assert ticks
    assert all("£" in t for t in ticks)
    swings = [t.text for t in scene_of(spread.figure).texts if "(+" in t.text]
    assert swings
    assert all("(+£" in t for t in swings)
