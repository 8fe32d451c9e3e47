"""The text of ``costsim optimize`` from an optimize.json document: marks, left-out columns,
reservation lines, the block and the no-plan case."""

from __future__ import annotations

from typing import Any

from costsim.cli.optimize_table import ranked_table, render_optimize, reservation_lines


def _row(rank: int, name: str, objective: float | None, *, within: bool = True,
         feasible: bool = True, why: tuple[str, ...] = ()) -> dict[str, Any]:
    cost = None if objective is None else {"mean": objective, "p10": objective - 10,
                                           "p50": objective, "p90": objective + 10}
    return {"rank": rank, "name": name, "origin": "search", "feasible": feasible,
            "within_limits": within, "why_not": list(why), "objective_usd": objective,
            "cost_usd": cost, "p_deadline_missed": None if objective is None else 0.05,
            "slo_attainment": None, "finish_days": None}


def _level(gpus: int, saving: float) -> dict[str, Any]:
    return {"gpus": gpus, "savings_usd": saving}


def _sizing(gpu: str, option: str, gpus: int) -> dict[str, Any]:
    return {"gpu": gpu, "option": option, "discount": 0.4, "conservative": _level(0, 0.0),
            "balanced": _level(gpus // 2, 500.0), "aggressive": _level(gpus, 900.0)}


def _document(best: bool = True) -> dict[str, Any]:
    ranked = [_row(1, "cheap", 100.0), _row(2, "risky", 90.0, within=False,
                                            why=("P(deadline missed) 30% > 20%",)),
              _row(3, "too-big", None, within=False, feasible=False, why=("does not fit",))]
    return {"scenario": "s", "objective": "mean", "replications": 10, "seed": 0,
            "best": ranked[0] if best else None, "ranked": ranked,
            "explanation": "because it is cheapest.", "candidates_screened": 1234,
            "candidates_simulated": 3, "simulator_runs": 30, "exhaustive_candidates": 5000,
            "exhaustive": False, "pareto": [],
            "reservations": [_sizing("L4", "reserved-1y-no-upfront", 6),
                             _sizing("H100", "reserved-1y-no-upfront", 0),
                             _sizing("H100", "reserved-3y-no-upfront", 0)],
            "stats": {"wall_s": 2.5}}


def test_the_table_marks_the_choice_and_the_plans_outside_the_limits() -> None:
    lines = ranked_table(_document()).splitlines()
    assert lines[2].split()[:3] == ["1", "*", "cheap"]
    assert lines[3].split()[:3] == ["2", "!", "risky"]
    assert "too-big" not in "\n".join(lines)  # infeasible: listed below the table
    assert "SLO met" not in lines[0]  # no plan has a value: the column is left out
    assert "P(late)" in lines[0]


def test_reservations_show_the_paying_options_and_one_line_per_gpu_where_none_pays() -> None:
    lines = reservation_lines(_document())
    assert lines[1] == ("  L4 reserved-1y-no-upfront (discount 40%): conservative 0 ($0), "
                        "balanced 3 ($500), aggressive 6 ($900)")
    assert lines[2].startswith("  H100: no commitment pays at any of the 2 term options")
    assert len(lines) == 3


def test_the_whole_text() -> None:
    text = render_optimize(_document(), "  - name: cheap\n", scenario_file="s.yaml",
                           report_dir="out", extra_lines=["Budget split: 2 servers"])
    assert "Screened 1,234 candidate plans analytically; simulated 3 × 10 replications = 30 " \
           "simulator runs; an exhaustive search would simulate 5,000. 2.5 s." in " ".join(
               text.splitlines())
    assert "outside the limits: risky: P(deadline missed) 30% > 20%" in text
    assert "infeasible: too-big: does not fit" in text
    assert "Chosen: cheap (search). because it is cheapest." in text
    assert "to paste under `plans:` in s.yaml:\n\n  - name: cheap\n" in text
    assert text.index("Budget split: 2 servers") < text.index("to paste")
    assert text.endswith("Report: out/optimize.html (best-plan.yaml, optimize.json, charts/)")
    nothing = render_optimize(_document(best=False), None, scenario_file="s.yaml",
                              report_dir=None)
    assert "No plan chosen: because it is cheapest." in nothing
    assert "to paste" not in nothing


def test_the_front_is_shown_only_when_it_trades_time_for_cost() -> None:
    from costsim.cli.optimize_table import pareto_line

    def point(name: str, days: float, cost: float) -> dict[str, Any]:
        return {"name": name, "finish_days": {"p90": days}, "objective_usd": cost}

    document = {"pareto": [point("slow", 30.0, 100.0), point("fast", 12.5, 180.0)]}
    assert pareto_line(document) == ("Time–cost front (P90 finish → cost): fast 12.5 d → $180; "
                                     "slow 30.0 d → $100")
    assert pareto_line({"pareto": [point("a", 30.0, 100.0), point("b", 30.01, 100.0)]}) is None


def test_long_lines_wrap_at_spaces_never_inside_a_name() -> None:
    document = _document()
    document["explanation"] = ("'opt-1-h100-spot.4b200-spot.h100' runs prototype on H100 spot; "
                               "fine-tune on 4×B200 spot; serve on H100 on demand. " * 3)
    text = render_optimize(document, None, scenario_file="s.yaml", report_dir=None)
    assert "fine-\n" not in text
    assert "opt-1-h100-spot.4b200-spot.h100" in text
    wrapped = [line for line in text.splitlines() if "H100" in line or "Screened" in line]
    assert len(wrapped) > 3
    assert all(len(line) <= 120 for line in wrapped)


def test_a_document_in_another_currency_shows_its_figures_converted() -> None:
    """optimize.json stays USD and names the currency; the text converts (issue 21 item 5):
    $100 at 0.9 EUR per USD is €90, a $500 saving €450."""
    document = {**_document(), "currency": "EUR", "fx_rate_per_usd": 0.9}
    lines = ranked_table(document).splitlines()
    assert lines[2].split()[3] == "€90"
    assert "balanced 3 (€450)" in reservation_lines(document)[1]
    text = render_optimize(document, None, scenario_file="s.yaml", report_dir=None)
    assert "in €" in text
    assert "Amounts in EUR at 0.9 per USD" in " ".join(text.split())
