"""The report's glossary: the terms a finance reader meets in it, as docs/report.md and
docs/simulator.md define them."""

from __future__ import annotations

GLOSSARY: tuple[tuple[str, str], ...] = (
    ("Economic cost (cost_usd)",
     "Everything charged or committed for the plan within the horizon: on-demand and spot "
     "charges, the whole obligation of every reservation (the part after the horizon "
     "included), owned hardware's capex minus its residual value at the horizon's end, power, "
     "colocation, maintenance, staff, storage and data transfer."),
    ("Cash", "What leaves the bank within the horizon, in the month it is paid; the monthly "
     "rows add up to it."),
    ("NPV", "Net present value: the monthly cash discounted at the scenario's discount rate, "
     "each month's cash discounted from the month's end."),
    ("Amortized", "Capex depreciated straight-line and upfront payments spread over their "
     "term, month by month."),
    ("Capex / opex", "Capital expenditure (servers bought) / operating expenditure (hourly "
     "charges, reservation payments including upfronts, which are prepaid services, power, "
     "colocation, staff, storage)."),
    ("Cost per training run", "A training phase's own charges, its use of reservations at "
     "their committed rate, and its use-share of owned servers (their cost per in-service "
     "GPU-hour times the GPU-hours it used), per training phase."),
    ("Mean, P10, P50, P90", "Over the Monte Carlo replications: the average, and the values "
     "that 10 %, 50 % and 90 % of the simulated futures stay below."),
    ("Baseline", "The plan every other plan is compared with: --baseline, or the scenario's "
     "first plan."),
    ("Recommended plan", "The feasible plan with the lowest mean economic cost among those "
     "within the scenario's risk limits."),
    ("Infeasible", "The plan cannot work as written (the model does not fit its GPUs, the "
     "SLO cannot be met, a commitment no phase uses); its reasons are listed."),
    ("compute", "GPU (and bundled CPU/RAM) time paid for work."),
    ("reserved-idle", "Committed hours within the horizon that no work used."),
    ("api-usage", "A pay-per-token API's charges: input and output tokens served, each at "
     "the provider's price per 1M tokens."),
    ("stranded-commitment", "The part of a reservation's obligation that falls after the "
     "horizon's end."),
    ("spot-lost-work", "Spot hours paid for work lost to preemptions (redone from the last "
     "checkpoint)."),
    ("residual-value", "What owned hardware is still worth at the horizon's end: a credit "
     "(negative)."),
    ("power-colocation", "Electricity (with the data centre's PUE) and rack space for owned "
     "servers."),
    ("maintenance-staff", "Hardware maintenance and the staff time owned servers take."),
    ("Reserved utilization", "Committed GPU-hours that work used, over all committed "
     "GPU-hours within the horizon."),
    ("SLO attainment", "Share of serving requests answered within the latency objective "
     "(time to first token and time per output token, P95)."),
    ("Break-even utilization", "The share of hours GPUs must do work for owning (or "
     "reserving) to cost less per used GPU-hour than renting on demand."),
    ("Estimate", "A price or default that rests on an assumption rather than a published "
     "figure (an estimated discount, the owned-cost model); its source says which."),
)
