"""The terminal view of ``costsim optimize``: what was searched, the simulated plans ranked by
the objective, the chosen plan with its explanation, the reservation points, and the YAML block
to paste into the scenario.

Figures come from the ``optimize --json`` document (so the table and optimize.json agree) and
are written by :mod:`costsim.cli.numbers`, as ``run``'s table writes them; a scenario with a
display currency gets them converted (the explanation is written in it by the optimizer).
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from costsim.cli.common import format_table
from costsim.cli.numbers import percent
from costsim.cli.run_table import ESTIMATE_MARK, currency_text
from costsim.domain.currency import Currency, currency_of
from costsim.domain.display import money_estimate

TABLE_WIDTH = 120
LEGEND = (
    "Costs: the economic cost over the horizon in $ (as `run` reports it), the objective's "
    "statistic and P10/P50/P90 over the replications. P(late): probability a deadline is "
    "missed; SLO met: share of requests served within the SLO; finish: day the last phase "
    "ends, P90. Origin: hand-written (the scenario's plans), search (passed the analytic "
    "screen), reservation (commitments sized on simulated demand), serving-mix (the serving "
    "GPU mix). '*' chosen; '!' outside the limits (reasons under the table).")


_MONEY = frozenset({"objective", "P10", "P50", "P90"})
ESTIMATE_LEGEND = (f" '{ESTIMATE_MARK}' the plan rests on an estimated price (a reserved "
                   "discount costsim assumes, an owned-server cost model: optimize.json "
                   "estimated_inputs): ask for a quote.")


def usd_estimate(usd: float, currency: Currency) -> str:
    """A USD estimate converted to ``currency`` and shown to whole units."""
    return money_estimate(currency.amount(usd), currency)


def _cost(row: Mapping[str, Any], key: str, currency: Currency) -> str | None:
    cost = row["cost_usd"]
    return None if cost is None else usd_estimate(cost[key], currency)


def _optional(value: float | None, render: Any) -> str | None:
    return None if value is None else str(render(value))


# (header, cell) — a column no row has a value for is left out, as in `run`'s table
_COLUMNS: tuple[tuple[str, Any], ...] = (
    ("objective", lambda r, c: _optional(r["objective_usd"], lambda v: usd_estimate(v, c))),
    ("P10", lambda r, c: _cost(r, "p10", c)),
    ("P50", lambda r, c: _cost(r, "p50", c)),
    ("P90", lambda r, c: _cost(r, "p90", c)),
    ("P(late)", lambda r, c: _optional(r["p_deadline_missed"], percent)),
    ("SLO met", lambda r, c: _optional(r["slo_attainment"], percent)),
    ("finish (d)", lambda r, c: None if not r["finish_days"]
     else f"{r['finish_days']['p90']:,.1f}"),
    ("origin", lambda r, c: r["origin"]),
)


def ranked_table(document: Mapping[str, Any]) -> str:
    """The simulated feasible plans, best first ('*' chosen, '!' outside the limits)."""
    rows_of = [r for r in document["ranked"] if r["feasible"]]
    currency = currency_of(document)
    columns = [(h, cell) for h, cell in _COLUMNS
               if any(cell(r, currency) is not None for r in rows_of)]
    best = document["best"]["name"] if document["best"] else None
    rows = []
    for row in rows_of:
        mark = "*" if row["name"] == best else ("!" if not row["within_limits"] else "")
        estimate = ESTIMATE_MARK if row.get("estimated_inputs") else ""
        rows.append((row["rank"], mark, row["name"],
                     *("-" if (text := cell(row, currency)) is None
                       else text + estimate if header in _MONEY else text
                       for header, cell in columns)))
    header = ("#", "", "plan", *(h for h, _ in columns))
    right = [0, *range(3, 3 + len(columns) - 1)]
    return format_table(rows, header, right_align=right)


def search_line(document: Mapping[str, Any], wall_s: float) -> str:
    """How much was searched and simulated, against an exhaustive search."""
    exhaustive = " (exhaustive: every candidate simulated)" if document["exhaustive"] else (
        f"; an exhaustive search would simulate {document['exhaustive_candidates']:,}")
    return (f"Screened {document['candidates_screened']:,} candidate plans analytically; "
            f"simulated {document['candidates_simulated']:,} × "
            f"{document['replications']:,} replications = {document['simulator_runs']:,} "
            f"simulator runs{exhaustive}. {wall_s:,.1f} s.")


def reservation_lines(document: Mapping[str, Any]) -> list[str]:
    """Per GPU type: the term options where committing pays, with the three commitment levels
    and what each saves; one line for a GPU type where no term pays."""
    lines = []
    by_gpu: dict[str, list[Mapping[str, Any]]] = {}
    for sizing in document["reservations"]:
        by_gpu.setdefault(sizing["gpu"], []).append(sizing)
    for gpu, sizings in by_gpu.items():
        paying = [s for s in sizings if s["aggressive"]["gpus"] > 0]
        if not paying:
            lines.append(f"  {gpu}: no commitment pays at any of the {len(sizings)} term "
                         "options (demand too short or too uneven for the discount)")
        for sizing in paying:
            mark = ESTIMATE_MARK if sizing.get("estimate") else ""
            points = ", ".join(
                f"{name} {sizing[name]['gpus']} "
                f"({usd_estimate(sizing[name]['savings_usd'], currency_of(document))}"
                f"{mark if sizing[name]['savings_usd'] else ''})"
                for name in ("conservative", "balanced", "aggressive"))
            discount = (f"~{sizing['discount']:.0%} (estimate)" if sizing.get("estimate")
                        else f"{sizing['discount']:.0%}")
            lines.append(f"  {gpu} {sizing['option']} (discount {discount}): {points}")
    if lines:
        lines.insert(0, "Reservation sizing on simulated demand (GPUs committed, expected "
                        "saving against none):")
    return lines


def limit_lines(document: Mapping[str, Any]) -> list[str]:
    """Plans outside the limits or infeasible, each with its reasons."""
    lines = []
    for row in document["ranked"]:
        if row["within_limits"]:
            continue
        kind = "outside the limits" if row["feasible"] else "infeasible"
        lines.append(f"{kind}: {row['name']}: " + "; ".join(row["why_not"] or
                                                               ("no reason given",)))
    return lines


def chosen_lines(document: Mapping[str, Any]) -> list[str]:
    """The choice and why (the optimizer's explanation; optimize.json's versus_hand_written
    holds the comparison with the best hand-written plan as figures)."""
    best = document["best"]
    if best is None:
        return [f"No plan chosen: {document['explanation']}"]
    return [f"Chosen: {best['name']} ({best['origin']}). {document['explanation']}"]


def pareto_line(document: Mapping[str, Any]) -> str | None:
    """The plan-level time–cost front, fastest first (None unless its plans finish on at
    least two different days)."""
    points = sorted((p for p in document["pareto"]
                     if p["finish_days"] and p["objective_usd"] is not None),
                    key=lambda p: p["finish_days"]["p90"])
    if len({f"{p['finish_days']['p90']:,.1f}" for p in points}) < 2:
        return None  # one finish day: a tie on time, not a trade-off
    return "Time–cost front (P90 finish → cost): " + "; ".join(
        f"{p['name']} {p['finish_days']['p90']:,.1f} d → "
        f"{usd_estimate(p['objective_usd'], currency_of(document))}"
        for p in points)


def render_optimize(document: Mapping[str, Any], plan_block: str | None, *, scenario_file: str,
                    report_dir: str | None, extra_lines: Sequence[str] = ()) -> str:
    """The whole text output of ``costsim optimize`` (``document``: optimize.json);
    ``extra_lines``: what steps beside the search print (the budget split), before the
    block."""
    head = (f"{document['scenario']}: optimizing the {document['objective']} cost, "
            f"{document['replications']:,} replications, seed {document['seed']}")
    parts: list[str] = [head, wrap_line(search_line(document, document["stats"]["wall_s"])), ""]
    if any(r["feasible"] for r in document["ranked"]):
        parts += [ranked_table(document), ""]
    parts += _block(limit_lines(document))
    parts += [wrap_line(line) for line in chosen_lines(document)]
    parts.append("")
    parts += _block([wrap_line(line) for line in (pareto_line(document),) if line])
    parts += _block(reservation_lines(document))
    parts += _block(extra_lines)
    if plan_block is not None:
        parts += [f"The chosen plan, to paste under `plans:` in {scenario_file}:", "",
                  plan_block.rstrip("\n"), ""]
    estimated = any(r.get("estimated_inputs") for r in document["ranked"] if r["feasible"])
    currency = currency_of(document)
    note = "" if currency.is_usd else (
        f" Amounts in {currency.code} at {currency.fx_rate_per_usd:g} per USD (optimize.json "
        "keeps USD).")
    parts.append(wrap_line(currency_text(LEGEND, currency) + (ESTIMATE_LEGEND if estimated
                                                              else "") + note))
    if report_dir is not None:
        parts.append(f"Report: {report_dir}/optimize.html (best-plan.yaml, optimize.json, "
                     "charts/)")
    return "\n".join(parts)


def wrap_line(text: str) -> str:
    """``text`` wrapped to the table's width, never inside a plan name (``fine-tune``,
    ``opt-1-h100-spot``): only at spaces."""
    return textwrap.fill(text, width=TABLE_WIDTH, break_on_hyphens=False,
                         break_long_words=False)


def _block(lines: Sequence[str]) -> list[str]:
    return [*lines, ""] if lines else []
