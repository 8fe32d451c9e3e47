"""``optimize.json`` and the optimize report folder, from an optimizer answer assembled by hand
out of a real run (the report must show whatever the search returns): the DESIGN §7 keys, the
plan blocks, the limits and the comparison with the hand-written plans, the files written and
the charts drawn, and an answer without a feasible plan."""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from costsim.domain.plans import Plan
from costsim.domain.pricing import PurchaseOption
from costsim.domain.reservation import ReservationTerms
from costsim.domain.scenario import RiskLimits
from costsim.optimize.reservation import size_reservation
from costsim.optimize.result import Candidate, Objective, OptimizeResult, Origin, RankedPlan
from costsim.optimize.training_front import TrainingFront, TrainingOption
from costsim.report.charts_optimize import optimize_charts, pareto_front
from costsim.report.optimize_json import optimize_json
from costsim.report.optimize_write import write_optimize_report
from costsim.report.plot.style import usd
from costsim.sim.run_result import RunResult
from costsim.units import HOURS_PER_YEAR
from tests.report.runs import SCRIPT_NAME, report_run, report_scenario

LIMITS = RiskLimits(max_p_deadline_missed=0.2)


def _block(plan: Plan) -> Mapping[str, Any]:
    """A stand-in for the scenario layer's serializer (the report must not import it)."""
    return {"name": plan.name, "gpus": sorted({e.gpu for u in plan.uses for e in u.entries})}


def _answer(run: RunResult, *, feasible: bool = True) -> OptimizeResult:
    """The run's plans ranked by mean cost: the first two as search results, the rest as
    hand-written; a reservation sizing on the first plan's L4 demand; one training front."""
    plans = {p.name: p for p in report_scenario(SCRIPT_NAME).plans}
    ranked = []
    for index, result in enumerate(run.plans):
        origin = Origin.SEARCH if index < 2 else Origin.HAND_WRITTEN
        ok = feasible and result.feasible and result.cost_usd is not None
        ranked.append(RankedPlan(
            candidate=Candidate(plan=plans[result.name], origin=origin,
                                screen_cost_usd=1000.0 if origin is Origin.SEARCH else None,
                                notes=("tp=1 pp=1 dp=16",) if origin is Origin.SEARCH else ()),
            result=result, objective_usd=result.cost_usd.mean if ok and result.cost_usd else None,
            within_limits=ok, why_not=() if ok else ("infeasible",)))
    ranked.sort(key=lambda r: (not r.within_limits, r.objective_usd or 0.0))
    demand = next(d for d in run.plans[0].gpu_demand if d.gpu == "L4")
    terms = ReservationTerms(option=PurchaseOption.RESERVED_1Y_NO_UPFRONT,
                             term_hours=HOURS_PER_YEAR, discount_fraction=0.4,
                             on_demand_usd_per_hour=0.8, upfront_usd=0.0,
                             recurring_usd_per_hour=0.48, source="test",
                             effective_date="2027-01-01", estimate=False)
    option = TrainingOption(gpu="H100", gpus=16, layout="tp=1 pp=1 dp=16", framework="megatron",
                            option=PurchaseOption.ON_DEMAND, cloud="aws", wall_time_s=2e5,
                            gpu_hours=900.0, cost_usd=6000.0, p_deadline_missed=0.0,
                            meets_deadline=True, on_front=True)
    slow = dataclasses.replace(option, gpus=8, wall_time_s=4e5, cost_usd=5500.0)
    best = ranked[0] if ranked[0].within_limits else None
    return OptimizeResult(
        objective=Objective.MEAN, best=best, ranked=tuple(ranked), candidates_screened=40,
        candidates_simulated=len(ranked), exhaustive_candidates=40, exhaustive=False,
        explanation="because", pareto=tuple(r for r in ranked[:2] if r.within_limits),
        training_fronts=(TrainingFront(phase="train", options=(slow, option), rated=12),),
        reservations=(size_reservation(demand, terms, 1),), run=run)


def _document(answer: OptimizeResult) -> dict[str, Any]:
    return optimize_json(answer, plan_block=_block, scenario="s", scenario_sha256="ab",
                         costsim_version="0.1.0", price_book_date="2026-05-20", seed=0,
                         replications=3, limits=LIMITS, wall_s=1.5,
                         generated_at="2026-12-01T04:00:00Z")


@pytest.fixture(scope="module")
def answer() -> OptimizeResult:
    return _answer(report_run(SCRIPT_NAME))


def test_the_document_has_design_s_keys_and_each_plan_as_its_block(
        answer: OptimizeResult) -> None:
    document = json.loads(json.dumps(_document(answer), allow_nan=False))
    best = document["best"]
    assert best["plan"] == _block(answer.ranked[0].candidate.plan)
    assert best["cost_usd"] == {"mean": answer.ranked[0].result.cost_usd.mean,  # type: ignore[union-attr]
                                "p10": answer.ranked[0].result.cost_usd.p10,  # type: ignore[union-attr]
                                "p50": answer.ranked[0].result.cost_usd.p50,  # type: ignore[union-attr]
                                "p90": answer.ranked[0].result.cost_usd.p90}  # type: ignore[union-attr]
    assert (document["candidates_screened"], document["candidates_simulated"]) == (
        40, len(answer.ranked))
    assert document["simulator_runs"] == 3 * len(answer.ranked)
    assert [row["name"] for row in document["ranked"]] == [r.result.name for r in answer.ranked]
    assert [row["rank"] for row in document["ranked"]] == list(range(1, len(answer.ranked) + 1))
    infeasible = next(row for row in document["ranked"] if row["name"] == "one-small-card")
    assert infeasible["objective_usd"] is None
    assert infeasible["cost_usd"] is None
    assert infeasible["why_not"] == ["infeasible"]
    assert [p["name"] for p in document["pareto"]] == [r.result.name for r in answer.pareto]
    assert document["limits"] == {"max_p_over_budget": None, "max_p_deadline_missed": 0.2,
                                  "min_slo_attainment": None}
    sizing = document["reservations"][0]
    assert sizing["aggressive"]["gpus"] == answer.reservations[0].aggressive.gpus
    assert len(sizing["curve"]) == len(answer.reservations[0].curve)
    assert document["training_fronts"][0]["front"][0]["gpus"] == 16  # fastest first


def test_versus_hand_written_is_the_saving_against_the_cheapest_of_them(
        answer: OptimizeResult) -> None:
    versus = _document(answer)["versus_hand_written"]
    hand = [r for r in answer.ranked
            if r.within_limits and r.candidate.origin is Origin.HAND_WRITTEN]
    assert versus["plan"] == hand[0].result.name
    assert answer.best is not None
    assert versus["saving_usd"] == pytest.approx(hand[0].objective_usd - answer.best.objective_usd)  # type: ignore[operator]
    assert versus["saving_usd"] >= 0


def test_the_folder_holds_the_answer_the_block_the_page_and_the_charts(
        answer: OptimizeResult, tmp_path: Path) -> None:
    document = _document(answer)
    block = "  - name: x\n    use: {}\n"
    write_optimize_report(answer, document, tmp_path, best_plan_yaml=block)
    assert json.loads((tmp_path / "optimize.json").read_text()) == json.loads(
        json.dumps(document))
    assert (tmp_path / "best-plan.yaml").read_text().endswith(block)
    charts = {p.stem for p in (tmp_path / "charts").glob("*.svg")}
    assert charts == {"pareto_front", "training_front", "reservation_curve", "cost_by_plan"}
    page = (tmp_path / "optimize.html").read_text()
    assert "&lt;script&gt;" in page  # a plan named like markup stays text
    assert "<script>" not in page
    assert "because" in page
    assert "name: x" in page


def test_no_pareto_chart_when_every_plan_ends_on_the_same_day(answer: OptimizeResult) -> None:
    assert pareto_front(answer) is not None
    same_day = [dataclasses.replace(r, result=dataclasses.replace(
        r.result, finish_s=answer.ranked[0].result.finish_s)) for r in answer.ranked]
    assert pareto_front(dataclasses.replace(answer, ranked=tuple(same_day))) is None


def test_an_answer_without_a_plan_writes_no_block(tmp_path: Path) -> None:
    answer = _answer(report_run(SCRIPT_NAME), feasible=False)
    answer = dataclasses.replace(answer, reservations=(), training_fronts=(), run=None,
                                 explanation="No candidate plan is feasible within the limits.")
    document = _document(answer)
    assert document["best"] is None
    assert document["versus_hand_written"] is None
    assert optimize_charts(answer) == []
    write_optimize_report(answer, document, tmp_path, best_plan_yaml=None)
    assert {p.name for p in tmp_path.iterdir()} == {"optimize.json", "optimize.html"}
    assert "No candidate plan is feasible" in (tmp_path / "optimize.html").read_text()


def test_steps_beside_the_search_add_their_keys_and_charts(answer: OptimizeResult,
                                                           tmp_path: Path) -> None:
    """The hook --budget-split uses: a top-level key in the document, charts in the folder."""
    from costsim.report.plot.style import Chart, new_figure

    document = optimize_json(answer, plan_block=_block, scenario="s", scenario_sha256="ab",
                             costsim_version="0.1.0", price_book_date="2026-05-20", seed=0,
                             replications=3, limits=LIMITS, wall_s=1.5,
                             generated_at="2026-12-01T04:00:00Z",
                             sections={"budget_split": {"servers": 2}})
    assert document["budget_split"] == {"servers": 2}
    figure = new_figure()
    figure.add_panels()[0].line([0, 1], [0, 1], "#000000")
    no_charts = dataclasses.replace(answer, run=None, reservations=(), training_fronts=(),
                                    pareto=(), ranked=answer.ranked[:1])
    write_optimize_report(no_charts, document, tmp_path, best_plan_yaml=None,
                          extra_charts=[Chart("budget_split_shares", "Split", figure)])
    assert {p.name for p in (tmp_path / "charts").iterdir()} == {
        "budget_split_shares.png", "budget_split_shares.svg"}
    assert "Split" in (tmp_path / "optimize.html").read_text()


def test_a_scenario_name_cannot_break_out_of_the_blocks_comment(answer: OptimizeResult,
                                                                tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    import yaml

    monkeypatch.setattr("costsim.report.optimize_write.optimize_charts", lambda *a, **k: [])
    document = {**_document(answer), "scenario": "x\nplans: [evil]\n#"}
    write_optimize_report(answer, document, tmp_path, best_plan_yaml="- name: x\n")
    assert yaml.safe_load((tmp_path / "best-plan.yaml").read_text()) == [{"name": "x"}]


def test_every_optimize_chart_keeps_its_text_inside_the_figure(answer: OptimizeResult) -> None:
    from tests.report.chart_checks import assert_inside

    charts = optimize_charts(answer)
    assert [c.slug for c in charts] == ["pareto_front", "training_front", "reservation_curve",
                                        "cost_by_plan"]
    for chart in charts:
        assert_inside(chart)


def test_the_pareto_front_numbers_its_plans_and_names_them_in_a_key(
        answer: OptimizeResult) -> None:
    from costsim.report.plot.figure import Label
    from costsim.report.plot.render import scene_of
    from costsim.report.plot.style import STAR

    chart = pareto_front(answer)
    assert chart is not None
    (panel,) = chart.figure.panels
    assert answer.best is not None
    legend = chart.figure.legend
    assert legend is not None
    key = [entry.label for entry in legend.entries]
    front = sorted(answer.pareto, key=lambda r: r.objective_usd or 0.0)
    assert [k.split(": ")[0] for k in key] == [
        f"{STAR} {r.result.name} (recommended)" if r is answer.best else r.result.name
        for r in front]
    assert [entry.symbol for entry in legend.entries] == [str(n) for n in range(1, len(front) + 1)]
    # on the plot only the numbers: a long plan name cannot run off the figure
    numbers = [m.text for m in panel.marks if isinstance(m, Label)]
    assert numbers
    assert all(text.replace(", ", "").isdigit() for text in numbers)
    drawn = {t.text for t in scene_of(chart.figure).texts}
    assert set(numbers) <= drawn
    assert f"{STAR} chosen: {usd(answer.best.objective_usd or 0.0)}" in drawn


def test_optimize_stars_its_own_choice_in_the_cost_chart(answer: OptimizeResult) -> None:
    from costsim.report.plot.style import STAR

    chart = optimize_charts(answer)[-1]
    (panel,) = chart.figure.panels
    assert answer.best is not None
    starred = [t for t in panel.y.tick_labels or [] if t.startswith(STAR)]
    assert starred == [f"{STAR} {answer.best.result.name}"]


def test_the_training_front_is_log_log_with_ticks_that_do_not_collide(
        answer: OptimizeResult) -> None:
    """Options from under a day to 100 days and from $500 to $9M (the flagship's fine-tune
    front): 1-2-5 ticks, no minor labels, no two tick labels overlapping as drawn."""
    from costsim.report.charts_optimize import training_fronts
    from costsim.report.plot.layout import place
    from costsim.report.plot.render import scene_of

    (front,) = answer.training_fronts
    option = front.options[0]
    spread = tuple(dataclasses.replace(option, wall_time_s=days * 86_400.0, cost_usd=cost,
                                       on_front=False)
                   for days, cost in itertools.product((0.8, 0.9, 1.3, 7, 40, 90, 100),
                                                       (500.0, 2e4, 9e6)))
    chart = training_fronts([dataclasses.replace(front, options=(*front.options, *spread))])
    assert chart is not None
    (panel,) = chart.figure.panels
    assert (panel.x.log, panel.y.log) == (True, True)
    (placed,) = place(chart.figure).panels
    x0, _, _, y1 = placed.box
    texts = scene_of(chart.figure).texts
    below = [t for t in texts if t.text in placed.x.labels and t.y > y1]  # the x tick labels
    left = [t for t in texts if t.text in placed.y.labels and t.x < x0]  # the y tick labels
    for ticks, positions in ((below, placed.x.positions), (left, placed.y.positions)):
        assert len(ticks) == len(positions) >= 3
        assert all(f"{p:.0e}"[0] in "125" for p in positions)  # 1, 2 and 5 of a decade
        boxes = [t.bounds() for t in ticks]
        assert not any(a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
                       for a, b in itertools.combinations(boxes, 2))
    assert "3" in placed.x.labels or "2" in placed.x.labels  # plain numbers, not 3×10⁰


def test_the_reservation_curves_mark_the_three_points_and_name_their_shapes(
        answer: OptimizeResult) -> None:
    from costsim.report.charts_optimize import POINT_MARKERS, reservation_curves
    from costsim.report.plot.figure import Line, Marker, Points

    chart = reservation_curves(answer.reservations)
    assert chart is not None
    (panel,) = chart.figure.panels
    (sizing,) = answer.reservations
    (curve,) = [m for m in panel.marks if isinstance(m, Line)]
    assert list(curve.xs) == [level.gpus for level in sizing.curve]
    marked = {m.marker: (m.xs[0], m.ys[0]) for m in panel.marks if isinstance(m, Points)}
    assert [marker for _, marker in POINT_MARKERS] == [
        Marker.TRIANGLE_DOWN, Marker.SQUARE, Marker.STAR]
    for name, marker in POINT_MARKERS:
        level = getattr(sizing, name)
        assert marked[marker] == (level.gpus, level.cost_usd)
    assert panel.x.integer  # whole instances
    assert panel.legend is not None
    labels = [e.label for e in panel.legend.entries]
    assert labels[0].startswith(f"{sizing.option.value} (discount ")
    assert labels[-3:] == ["conservative", "balanced", "aggressive"]
    assert [e.marker for e in panel.legend.entries[-3:]] == [m for _, m in POINT_MARKERS]


def _axis_labels(figure: Any) -> list[str]:
    """Each panel's y and x axis titles."""
    return [p.y.label + p.x.label for p in figure.panels]


def test_a_display_currency_labels_every_optimize_chart_in_it(answer: OptimizeResult) -> None:
    """Issue 21 item 5: the answer's run in EUR names EUR on each cost axis (data stay USD)."""
    from costsim.domain.currency import Currency

    assert answer.run is not None
    eur = dataclasses.replace(answer, run=dataclasses.replace(answer.run, scenario=(
        dataclasses.replace(answer.run.scenario,
                            currency=Currency(code="EUR", fx_rate_per_usd=0.9)))))
    labels = {chart.slug: _axis_labels(chart.figure) for chart in optimize_charts(eur)}
    assert set(labels) == {"pareto_front", "training_front", "reservation_curve",
                           "cost_by_plan"}
    for slug, texts in labels.items():
        assert any("EUR" in t for t in texts), slug
        assert not any("USD" in t for t in texts), slug
