"""The simulator's shipped default assumptions (``costsim/data/sim_assumptions.csv``)."""

from __future__ import annotations

from dataclasses import fields
from functools import cache

from costsim.catalog.resources import csv_bool, read_data_csv
from costsim.domain.simulation import SimAssumptions


@cache
def sim_assumptions() -> SimAssumptions:
    """The default assumptions of the simulator (loaded once)."""
    rows = {row["key"]: row for row in read_data_csv("sim_assumptions.csv")}
    names = [f.name for f in fields(SimAssumptions) if f.name not in ("sources", "estimates")]
    missing = sorted(set(names) - set(rows))
    if missing:
        raise ValueError(f"sim_assumptions.csv lacks {', '.join(missing)}")
    values = {name: float(rows[name]["value"]) for name in names}
    return SimAssumptions(
        **values,
        sources={name: rows[name]["source"] for name in names},
        estimates=frozenset(name for name in names if csv_bool(rows[name]["estimate"])),
    )
