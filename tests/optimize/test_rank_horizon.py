"""The optimizer ranks a plan the horizon cut outside the limits while another plan finishes,
as ``run`` recommends (a cut plan's cost leaves out the rest of its work)."""

from __future__ import annotations

from costsim.domain.plans import PhaseUse, Plan, UseEntry
from costsim.domain.scenario import RiskLimits
from costsim.optimize.result import Candidate, Objective, Origin
from costsim.optimize.search import rank
from costsim.sim.montecarlo import PlanResult, Stats


def _pair(name: str, mean: float, cut: int) -> tuple[PlanResult, Candidate]:
    plan = Plan(name=name, uses=(PhaseUse(phase="train",
                                          entries=(UseEntry(gpu="H100", count=8),)),))
    result = PlanResult(name=name, feasible=True, infeasible_reasons=(), replications=3,
                        cost_usd=Stats(mean=mean, p10=mean, p50=mean, p90=mean),
                        horizon_cut_replications=cut)
    return result, Candidate(plan=plan, origin=Origin.SEARCH, screen_cost_usd=None)


def test_a_cheaper_plan_the_horizon_cut_ranks_after_one_that_finishes() -> None:
    (cut, cut_c), (done, done_c) = _pair("cut", 4_514.0, 3), _pair("done", 19_924.0, 0)
    ranked = rank((cut, done), {"cut": cut_c, "done": done_c}, Objective.MEAN, RiskLimits(),
                  "2027-04-01")
    assert [r.result.name for r in ranked] == ["done", "cut"]
    assert ranked[0].within_limits
    assert not ranked[1].within_limits
    assert ranked[1].why_not == (
        "the horizon cut its work in 3 of 3 replications (a phase had not ended or never "
        "started by 2027-04-01): its cost leaves out the rest of the work, while other plans "
        "finish theirs",)
    # nothing finishes: the cheaper cut plan leads
    alone = rank((cut,), {"cut": cut_c}, Objective.MEAN, RiskLimits(), "2027-04-01")
    assert alone[0].within_limits
