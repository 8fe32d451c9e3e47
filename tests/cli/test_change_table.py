"""The `$old → $new (Δ, %)` text of compare and diff."""

from __future__ import annotations

from costsim.cli.change_table import change, render_compare, render_diff


def test_change_states_old_new_delta_and_percent() -> None:
    assert change(1000.0, 1250.5) == "$1,000.00 → $1,250.50 (+$250.50, +25.1%)"
    assert change(2000.0, 1500.0) == "$2,000.00 → $1,500.00 (-$500.00, -25.0%)"
    assert change(0.0, 10.0) == "$0.00 → $10.00 (+$10.00)"
    assert change(None, 10.0) == "- → $10.00 (added)"
    assert change(5.0, None) == "$5.00 → - (removed)"


def _row(phase: str, category: str, old: float, new: float) -> dict[str, object]:
    return {"phase": phase, "category": category, "baseline_usd": old, "plan_usd": new}


def test_compare_lists_changed_rows_in_order_and_skips_unchanged() -> None:
    document = {"baseline": "a", "plans": [
        {"name": "a", "cost_usd": {"mean": 300.0}, "by_phase_category": []},
        {"name": "b", "cost_usd": {"mean": 250.0}, "by_phase_category": [
            _row("train", "compute", 200.0, 120.0), _row("serve", "storage", 50.0, 50.0),
            _row("", "reserved-idle", 0.0, 30.0)]},
        {"name": "c", "cost_usd": None, "by_phase_category": []}]}
    text = render_compare(document)
    assert "Baseline: a (mean cost $300.00)" in text
    assert "b: $300.00 → $250.00 (-$50.00, -16.7%)" in text
    lines = text.splitlines()
    train = next(i for i, line in enumerate(lines) if "train" in line)
    plan_wide = next(i for i, line in enumerate(lines) if "(plan-wide)" in line)
    assert train < plan_wide
    assert "$200.00 → $120.00 (-$80.00, -40.0%)" in lines[train]
    assert "storage" not in text
    assert "c: $300.00 → - (removed)" in text
    assert "a side is infeasible" in text


def test_diff_names_added_and_removed_plans_and_changed_inputs() -> None:
    document = {"plans": [
        {"name": "a", "cost_usd": {"mean": 110.0}, "baseline_cost_usd": {"mean": 100.0},
         "by_phase_category": [_row("train", "compute", 100.0, 110.0)]}],
        "added": ["new-plan"], "removed": ["old-plan"],
        "old": {"seed": 0, "price_book_date": "2026-05-20", "generated_at": "t0"},
        "new": {"seed": 0, "price_book_date": "2026-11-01", "generated_at": "t1"},
        "inputs_changed": [{"path": "phases.train.tokens", "old": 1e10, "new": 2e10},
                           {"path": "plans.b", "old": None, "new": {"name": "b"}}]}
    text = render_diff(document)
    assert "a: $100.00 → $110.00 (+$10.00, +10.0%)" in text
    assert "+ new-plan: added (only in NEW)" in text
    assert "- old-plan: removed (only in OLD)" in text
    assert "Inputs that changed: 3" in text
    assert 'run.price_book_date: "2026-05-20" → "2026-11-01"' in text
    assert "generated_at" not in text
    assert "run.seed" not in text
    assert "phases.train.tokens: 10,000,000,000 → 20,000,000,000" in text
    assert 'plans.b: - → {"name": "b"}' in text
