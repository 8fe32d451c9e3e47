"""Invoice-exact calendar rules (issue 19 item 1), each checked against arithmetic done by hand
(docs/simulator.md "Calendar and billing").

The serving worlds run one L4 replica (min = max = 1) on AWS us-east-1 g6.xlarge, whose list
price is $0.8048 per instance-hour (costsim/data/price_book.csv, dated 2026-05-20), so every
figure is hours × $0.8048 × a drift factor.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from costsim.catalog.servers import server_bom
from costsim.domain.calendar import Calendar
from costsim.domain.gpu import GpuSpec
from costsim.domain.phases import LoadProfile, RequestBucket, ServingPhase
from costsim.domain.plans import Autoscale, PhaseUse, Plan, UseEntry
from costsim.domain.scenario import DataSizes, Scenario
from costsim.domain.uncertainty import Fixed, Uncertainty
from costsim.sim.engine import simulate_replication
from costsim.sim.ledger import Category, LedgerBook, split_cents
from costsim.sim.pools import OwnedPool, book_owned
from costsim.sim.prepare import prepare_plan
from costsim.sim.results import Replication
from costsim.sim.serving_prep import ReplicaCapacities
from costsim.sim.streams import replication_seeds
from costsim.units import SECONDS_PER_HOUR
from tests.domain.scenario_builders import llama_8b

L4_USD_PER_HOUR = 0.8048  # aws us-east-1 g6.xlarge on demand, 1 L4


def _one_request_per_s(arch: Any, gpu: GpuSpec, phase: Any, defaults: Any,
                       **_: Any) -> ReplicaCapacities:
    per_bucket = tuple(1.0 for _ in phase.requests)
    return ReplicaCapacities(gpus_per_replica=1, sizing_requests_per_s=per_bucket,
                             service_requests_per_s=per_bucket)


@pytest.fixture(autouse=True)
def _capacities(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("costsim.sim.serving_prep.replica_capacities", _one_request_per_s)


def _serve(name: str, months: float, after: tuple[str, ...] = ()) -> ServingPhase:
    return ServingPhase(name=name, duration_months=months, model="assistant", after=after,
                        load=LoadProfile(peak_requests_per_s=0.5, diurnal=False),
                        requests=(RequestBucket(share=1.0, prompt_tokens=500,
                                                output_tokens=200),))


def _replication(phases: tuple[ServingPhase, ...], *, start: date, months: int,
                 data: DataSizes | None = None, drift_pct: float = 0.0) -> Replication:
    one = UseEntry(gpu="L4", autoscale=Autoscale(min_replicas=1, max_replicas=1))
    plan = Plan(name="p", cloud="aws", region="us-east-1",
                uses=tuple(PhaseUse(phase=p.name, entries=(one,)) for p in phases))
    scenario = Scenario(
        name="calendar", calendar=Calendar(start=start, horizon_months=months),
        models=(llama_8b(),), phases=phases, plans=(plan,), data=data or DataSizes(),
        uncertainty=Uncertainty(throughput_error=Fixed(value=1.0),
                                price_drift_pct_per_year=Fixed(value=drift_pct)))
    prep = prepare_plan(scenario, plan)
    assert prep.feasible, prep.infeasible_reasons
    return simulate_replication(prep, replication_seeds(0, 1)[0], 0)


def _line(rep: Replication, category: Category, phase: str = "") -> tuple[float, float]:
    lines = [ln for ln in rep.ledger.lines
             if ln.key.category is category and ln.key.phase == phase]
    assert len(lines) == 1, lines
    return lines[0].gpu_hours, lines[0].amount_usd


def test_a_one_month_serving_phase_is_billed_its_exact_730_5_hours() -> None:
    """A month is 365.25/12 days = 730.5 h. One replica for one month: 730.5 GPU-hours, not
    the 731 of whole hourly buckets; 730.5 × $0.8048 = $587.9064. The next phase starts at
    730.5 h (2,629,800 s), not half an hour later, and is billed the same hours. The ledger is
    apportioned to its exact total to the cent (docs/simulator.md §3): 2 × $587.9064 =
    $1,175.8128 → $1,175.81 = $587.91 + $587.90 (equal remainders: the first line listed
    takes the cent)."""
    rep = _replication((_serve("first", 1), _serve("second", 1, after=("first",))),
                       start=date(2027, 1, 1), months=3)
    assert _line(rep, Category.COMPUTE, "first") == (pytest.approx(730.5), 587.91)
    assert _line(rep, Category.COMPUTE, "second") == (pytest.approx(730.5), 587.90)
    first, second = rep.timelines
    assert first.end_s == pytest.approx(730.5 * SECONDS_PER_HOUR)
    assert second.start_s == pytest.approx(730.5 * SECONDS_PER_HOUR)
    assert second.end_s == pytest.approx(1461 * SECONDS_PER_HOUR)


def test_price_drift_counts_from_the_price_rows_date() -> None:
    """The g6.xlarge row is dated 2026-05-20. Serving in January 2027 is 8 calendar months
    (May → January) after it: at −12 %/year the rate is 0.88^(8/12) = 0.918309… of list.
    730.5 h × $0.8048 × 0.918309 = $539.879… → $539.88 (counted from the scenario's start, as
    before, it would be the list price: $587.91)."""
    rep = _replication((_serve("serve", 1),), start=date(2027, 1, 1), months=1,
                       drift_pct=-12.0)
    factor = 0.88 ** (8 / 12)
    assert factor == pytest.approx(0.918309, abs=1e-6)
    assert _line(rep, Category.COMPUTE, "serve")[1] == 539.88


def test_a_full_calendar_month_of_storage_is_one_gb_month() -> None:
    """1,000 GB kept January–March 2027 at AWS's $0.023/GB-month: 3 GB-months per GB,
    1,000 × 0.023 × 3 = $69.00 (by days ÷ 30.4375 it was 90/30.4375 × 23 = $68.01).
    Egress 500 GB a month less AWS's 100 GB free each month: 400 × $0.09 × 3 = $108.00."""
    rep = _replication((_serve("serve", 1),), start=date(2027, 1, 1), months=3,
                       data=DataSizes(dataset_gb=1000, egress_gb_per_month=500))
    assert _line(rep, Category.STORAGE)[1] == 69.00
    assert _line(rep, Category.DATA_TRANSFER)[1] == 108.00
    # each calendar month is its own invoice: $23.00 + $36.00 in each ledger month
    assert [m.cash_usd for m in rep.ledger.months] == [
        pytest.approx(23.00 + 36.00 + c, abs=0.006) for c in _compute_by_month(rep)]


def _compute_by_month(rep: Replication) -> list[float]:
    hours = [730.5, 0.0, 0.0]  # the phase runs inside January (744 h)
    return [h * L4_USD_PER_HOUR for h in hours]


def test_a_partial_month_is_the_hours_held_over_that_months_hours() -> None:
    """A horizon from 16 January 2027 for one month ends on 16 February: 16 of January's 31
    days and 15 of February's 28. Storage of 1,000 GB: 23 × 16/31 + 23 × 15/28 = 11.8710 +
    12.3214 = $24.19. Egress 500 GB a month, each calendar month pro rata with its own 100 GB
    free: January 500 × 16/31 = 258.06 GB → (258.06 − 100) × 0.09 = 14.2258; February
    500 × 15/28 = 267.86 GB → 15.1071; together $29.33."""
    rep = _replication((_serve("serve", 0.5),), start=date(2027, 1, 16), months=1,
                       data=DataSizes(dataset_gb=1000, egress_gb_per_month=500))
    assert _line(rep, Category.STORAGE)[1] == 24.19
    assert _line(rep, Category.DATA_TRANSFER)[1] == 29.33


def test_residual_value_lines_add_up_to_the_book_value_to_the_cent() -> None:
    """Three equal shares of $100.00 are 33.34 + 33.33 + 33.33 (largest remainder), not three
    33.33s; the owned servers' residual lines sum to −(book value) rounded to the cent."""
    assert split_cents(100.0, [1, 1, 1]) == [33.34, 33.33, 33.33]
    assert split_cents(-0.05, [3, 1]) == [-0.04, -0.01]
    calendar = Calendar(start=date(2027, 1, 1), horizon_months=7)
    server = server_bom("hgx-h100-8")
    pool = OwnedPool(server=server, count=3, purchase_s=0.0, available_s=0.0)
    book = LedgerBook(calendar.month_labels())
    book_owned(pool, [0.0] * 7, calendar, book)
    ledger = book.close()
    residual = [ln.amount_usd for ln in ledger.lines
                if ln.key.category is Category.RESIDUAL_VALUE]
    in_service_months = calendar.horizon_s / SECONDS_PER_HOUR / 730.5
    expected = round(3 * server.book_value_usd(in_service_months) * 100)
    assert round(-sum(residual) * 100) == expected
