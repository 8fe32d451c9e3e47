"""A plan back into scenario-file form: the mapping and the YAML text of one ``plans:`` item.

The inverse of the loader's plan building (``build.Builder.plan``), in the file's own words and
short forms (DESIGN §8, scenarios/README.md): ``option: reserved`` with ``term: 1y`` and
``payment``, ``autoscale: {min, max}``, ``fleet:`` for a phase served by several GPU types
(each entry's ``traffic`` shares where the plan routes them), ``commitments`` and ``owned``.
Keys whose value is the loader's default (on-demand, an autoscale minimum of 1) or absent
(None) are left out, as a person writes them. Loading the
text gives an equal :class:`~costsim.domain.plans.Plan` (tests/scenario/test_dump.py), so
``costsim optimize``'s chosen plan, pasted into the scenario, runs as the optimizer ran it.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import yaml

from costsim.domain.commitments import CapacityBlock, SavingsPlan
from costsim.domain.plans import Autoscale, Commitment, OwnedPurchase, Plan, UseEntry
from costsim.domain.pricing import PurchaseOption

# How the pasted block is indented: as the plans of the shipped scenarios (``  - name: …``).
PLAN_ITEM_INDENT = 2
# Owned-server part keys (the OwnedPurchase field and the file key are the same name).
_OWNED_PARTS = ("life_years", "ram_gib", "nvme_tb", "cpu_cores", "nic_gbps")


def plan_mapping(plan: Plan) -> dict[str, Any]:
    """``plan`` as one item of a scenario file's ``plans:`` list (dates as ``datetime.date``,
    which YAML writes as the file's YYYY-MM-DD; :func:`jsonable_plan` gives the JSON form)."""
    mapping: dict[str, Any] = {"name": plan.name}
    _put(mapping, "cloud", plan.cloud)
    _put(mapping, "region", plan.region)
    mapping["use"] = {
        use.phase: (_entry(use.entries[0]) if len(use.entries) == 1
                    else {"fleet": [_entry(entry) for entry in use.entries]})
        for use in plan.uses}
    commitments = [_commitment(c) for c in plan.commitments]
    commitments += [_savings_plan(sp) for sp in plan.savings_plans]
    commitments += [_capacity_block(b) for b in plan.capacity_blocks]
    if commitments:
        mapping["commitments"] = commitments
    if plan.owned:
        mapping["owned"] = [_owned(o) for o in plan.owned]
    return mapping


def jsonable_plan(plan: Plan) -> dict[str, Any]:
    """:func:`plan_mapping` with dates as ISO strings (the ``optimize --json`` form)."""
    mapping: dict[str, Any] = _iso_dates(plan_mapping(plan))
    return mapping


def plan_yaml(plan: Plan, *, indent: int = PLAN_ITEM_INDENT) -> str:
    """The YAML text of ``plan`` as one ``plans:`` item, indented by ``indent`` spaces so it
    pastes under the ``plans:`` key of a scenario written like the shipped ones. Entries of
    plain values are written inline (``fine-tune: {gpu: H100, count: 16}``), as people write
    them."""
    text = yaml.dump([plan_mapping(plan)], Dumper=_PlainDumper, sort_keys=False,
                     default_flow_style=None, allow_unicode=True, width=100, indent=2)
    pad = " " * indent
    return "".join(pad + line if line.strip() else line
                   for line in text.splitlines(keepends=True))


class _PlainDumper(yaml.SafeDumper):
    """The safe dumper without anchors and aliases (a date shared by two commitments is written
    twice: ``&id001`` / ``*id001`` mean nothing to a reader, and break when two pasted blocks
    bring the same anchor name), with list items indented under their key as the shipped
    scenarios write them (``owned:`` then ``  - {server: …}``)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _put(mapping: dict[str, Any], key: str, value: object) -> None:
    if value is None:
        return
    if isinstance(value, PurchaseOption):
        value = value.value
    elif isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        value = int(value)  # 400, as a person writes it, not 400.0 (the loader reads both)
    mapping[key] = value


def _entry(entry: UseEntry) -> dict[str, Any]:
    if entry.api is not None:  # a pay-per-token API: the provider and what the plan states
        api: dict[str, Any] = {"option": "api", "provider": entry.api.provider}
        for key in ("requests_per_minute", "tokens_per_minute", "ttft_s",
                    "output_tokens_per_s"):
            _put(api, key, getattr(entry.api, key))
        return api
    out: dict[str, Any] = {"gpu": entry.gpu}
    option = entry.option
    if option.is_reserved:
        assert option.term_years is not None
        assert option.payment is not None
        out.update(option="reserved", term=f"{option.term_years}y",
                   payment=option.payment.value)
    elif option is not PurchaseOption.ON_DEMAND:
        out["option"] = option.value
    _put(out, "count", entry.count)
    _put(out, "spill", entry.spill)
    _put(out, "fallback", entry.fallback)
    _put(out, "spot_share", entry.spot_share)
    _put(out, "cloud", entry.cloud)
    _put(out, "region", entry.region)
    if entry.autoscale is not None:
        out["autoscale"] = _autoscale(entry.autoscale)
    if entry.traffic is not None:
        # a float's repr is its shortest exact form: the pasted shares load back bit for bit
        out["traffic"] = [int(share) if share in (0.0, 1.0) else share
                          for share in entry.traffic]
    return out


def _autoscale(auto: Autoscale) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if auto.min_replicas != Autoscale().min_replicas:
        out["min"] = auto.min_replicas
    _put(out, "max", auto.max_replicas)
    _put(out, "target_utilization", auto.target_utilization)
    _put(out, "scale_up_delay_s", auto.scale_up_delay_s)
    return out


def _commitment(c: Commitment) -> dict[str, Any]:
    out: dict[str, Any] = {"gpu": c.gpu, "count": c.count, "term": f"{c.term_years}y",
                           "payment": c.payment.value, "start": c.start}
    _put(out, "cloud", c.cloud)
    _put(out, "region", c.region)
    return out


def _savings_plan(sp: SavingsPlan) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": "savings-plan", "cloud": sp.cloud}
    _put(out, "usd_per_hour", sp.usd_per_hour)
    out.update(term=f"{sp.term_years}y", payment=sp.payment.value, start=sp.start)
    if sp.family is None:
        out["compute"] = True
    else:
        out["family"] = sp.family
    return out


def _capacity_block(b: CapacityBlock) -> dict[str, Any]:
    return {"kind": "capacity-block", "gpu": b.gpu, "count": b.count, "cloud": b.cloud,
            "start": b.start, "days": b.days}


def _owned(o: OwnedPurchase) -> dict[str, Any]:
    out: dict[str, Any] = {"server": o.server, "count": o.count, "purchase": o.purchase}
    for key in _OWNED_PARTS:
        _put(out, key, getattr(o, key))
    return out


def _iso_dates(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _iso_dates(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_iso_dates(item) for item in value]
    if isinstance(value, dt.date):
        return value.isoformat()
    return value
