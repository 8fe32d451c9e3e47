"""Read a user's custom price file (CSV) into offerings; errors name file, line and column.

Columns (header required, order free): ``cloud, region, instance_type, gpu, gpus_per_instance,
effective_date`` (YYYY-MM-DD: every price carries a date), at least one of
``on_demand_usd_per_hour`` and ``spot_usd_per_hour``, and optionally ``vcpus, host_ram_gib,
gpu_memory_gib, provider_gpu_name, source``. The raw catalog's column names
(``accelerator``, ``accelerator_count``, ``price_per_hour_usd``, ``spot_price_per_hour_usd``,
``memory_gib``) are accepted too, so a file in the ``pricing/raw`` format loads as it stands.
"""

from __future__ import annotations

import csv
import datetime as dt
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from costsim.catalog.gpus import get_gpu
from costsim.catalog.price_tables import billing_rules
from costsim.domain.pricing import Offering, PriceFlag, PriceOverrides
from costsim.errors import CatalogError, InputError, suggest

MAX_PRICE_FILE_BYTES = 20_000_000

_ALIASES = {
    "accelerator": "gpu",
    "accelerator_count": "gpus_per_instance",
    "price_per_hour_usd": "on_demand_usd_per_hour",
    "spot_price_per_hour_usd": "spot_usd_per_hour",
    "memory_gib": "host_ram_gib",
}
_REQUIRED = ("cloud", "region", "instance_type", "gpu", "gpus_per_instance", "effective_date")
_OPTIONAL = ("on_demand_usd_per_hour", "spot_usd_per_hour", "vcpus", "host_ram_gib",
             "gpu_memory_gib", "provider_gpu_name", "source")


class _Row:
    """One data line of the file, with positions for error messages."""

    def __init__(self, name: str, line_number: int, cells: list[str],
                 columns: dict[str, int]) -> None:
        self.name, self.line_number, self.cells, self.columns = name, line_number, cells, columns

    def cell(self, column: str) -> str:
        return self.cells[self.columns[column]].strip() if column in self.columns else ""

    def where(self, column: str) -> str:
        return f"{self.name}:{self.line_number}:{self.columns[column] + 1}"

    def number(self, column: str, required: bool = False,
               integer: bool = False) -> float | None:
        text = self.cell(column)
        if not text:
            if required:
                raise InputError(self.where(column), column, "a value is required")
            return None
        try:
            value = float(text)
        except ValueError:
            raise InputError(self.where(column), column,
                             f"expected a number, got {text!r}") from None
        if not math.isfinite(value) or value < 0:
            raise InputError(self.where(column), column, f"must be a number >= 0, got {text!r}")
        if integer and (value != int(value) or value < 1):
            raise InputError(self.where(column), column,
                             f"must be a whole number >= 1, got {text!r}")
        return value


def load_price_file(path: Path) -> tuple[Offering, ...]:
    """Parse ``path`` into offerings flagged ``user-override``.

    Raises:
        InputError: with source ``FILE:LINE:COLUMN`` (1-based) and the column name.
    """
    name = str(path)
    try:
        size = path.stat().st_size
        if size > MAX_PRICE_FILE_BYTES:
            raise InputError(name, "", f"file is {size} bytes; the limit is "
                                       f"{MAX_PRICE_FILE_BYTES}")
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(name, "", f"cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise InputError(name, "", "not UTF-8 text") from None
    reader = csv.reader(text.splitlines())
    try:
        header = next(reader)
    except StopIteration:
        raise InputError(f"{name}:1:1", "", "empty file; expected a CSV header") from None
    columns: dict[str, int] = {}
    known = (*_REQUIRED, *_OPTIONAL, *_ALIASES)
    for index, raw_name in enumerate(header):
        column = raw_name.strip().lower()
        canonical = _ALIASES.get(column, column)
        if canonical not in (*_REQUIRED, *_OPTIONAL):
            hint = suggest(column, known)
            extra = f"; did you mean {' or '.join(repr(h) for h in hint)}?" if hint else ""
            raise InputError(f"{name}:1:{index + 1}", raw_name,
                             f"unknown column{extra} (known: {', '.join(_REQUIRED + _OPTIONAL)})")
        columns[canonical] = index
    for required in _REQUIRED:
        if required not in columns:
            raise InputError(f"{name}:1:1", required, "missing required column")
    if "on_demand_usd_per_hour" not in columns and "spot_usd_per_hour" not in columns:
        raise InputError(f"{name}:1:1", "on_demand_usd_per_hour",
                         "need an on-demand or a spot price column")
    offerings: list[Offering] = []
    seen: dict[str, int] = {}
    for line_number, cells in enumerate(reader, start=2):
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) != len(header):
            raise InputError(f"{name}:{line_number}:{min(len(cells), len(header)) + 1}", "",
                             f"expected {len(header)} fields, found {len(cells)}")

        row = _Row(name, line_number, cells, columns)
        cell, where, number = row.cell, row.where, row.number

        for column in ("cloud", "region", "instance_type"):
            if not cell(column):
                raise InputError(where(column), column, "a value is required")
        try:
            gpu = get_gpu(cell("gpu"), source=where("gpu")).name
        except CatalogError as exc:
            raise InputError(where("gpu"), "gpu", str(exc).split(": ", 1)[-1]) from None
        gpus = number("gpus_per_instance", required=True, integer=True)
        on_demand = number("on_demand_usd_per_hour")
        spot = number("spot_usd_per_hour")
        if on_demand is None and spot is None:
            column = "on_demand_usd_per_hour" if "on_demand_usd_per_hour" in columns else \
                "spot_usd_per_hour"
            raise InputError(where(column), column, "a row needs an on-demand or a spot price")
        date = cell("effective_date")
        try:
            dt.date.fromisoformat(date)
        except ValueError:
            raise InputError(where("effective_date"), "effective_date",
                             f"expected a date YYYY-MM-DD, got {date!r}") from None
        cloud = cell("cloud").lower()
        key = f"{cloud} {cell('region')} {cell('instance_type')}"
        if key in seen:
            raise InputError(where("instance_type"), "instance_type",
                             f"duplicate of line {seen[key]} ({key})")
        seen[key] = line_number
        rules = billing_rules()
        offerings.append(Offering(
            cloud=cloud, region=cell("region"), instance_type=cell("instance_type"), gpu=gpu,
            provider_gpu_name=cell("provider_gpu_name") or cell("gpu"),
            gpus_per_instance=int(gpus or 1), vcpus=int(number("vcpus") or 0),
            host_ram_gib=number("host_ram_gib") or 0.0,
            gpu_memory_gib=number("gpu_memory_gib") or 0.0,
            on_demand_usd_per_hour=on_demand, spot_usd_per_hour=spot,
            marketplace=rules[cloud].marketplace if cloud in rules else False,
            flags=(PriceFlag.USER_OVERRIDE,),
            source=cell("source") or f"user price file {path.name} line {line_number}",
            effective_date=date,
        ))
    return tuple(offerings)


def overrides_from_entries(entries: Sequence[Mapping[str, object]],
                           source: str = "prices.overrides",
                           base_dir: Path | None = None) -> PriceOverrides:
    """Build :class:`PriceOverrides` from scenario-style entries (DESIGN.md §8).

    Each entry is one of ``{discount_pct: 10}`` (flat), ``{cloud: aws, discount_pct: 12}``
    (per cloud) or ``{price_file: path.csv}`` (custom rows; relative to ``base_dir``).

    Raises:
        InputError: an unknown key, a missing value or a bad number, naming ``source[i]``.
    """
    flat = 0.0
    per_cloud: list[tuple[str, float]] = []
    custom: list[Offering] = []
    allowed = ("cloud", "discount_pct", "price_file")
    for index, entry in enumerate(entries):
        where = f"[{index}]"
        for key in entry:
            if key not in allowed:
                hint = suggest(str(key), allowed)
                extra = f"; did you mean {' or '.join(repr(h) for h in hint)}?" if hint else ""
                raise InputError(source, f"{where}.{key}", f"unknown key{extra}")
        if "price_file" in entry:
            path = Path(str(entry["price_file"]))
            if base_dir is not None and not path.is_absolute():
                path = base_dir / path
            custom.extend(load_price_file(path))
            continue
        if "discount_pct" not in entry:
            raise InputError(source, where, "needs discount_pct or price_file")
        try:
            pct = float(str(entry["discount_pct"]))
        except ValueError:
            raise InputError(source, f"{where}.discount_pct",
                             f"expected a number, got {entry['discount_pct']!r}") from None
        if "cloud" in entry:
            per_cloud.append((str(entry["cloud"]).strip().lower(), pct))
        else:
            flat = pct
    return PriceOverrides(discount_pct=flat, cloud_discount_pct=tuple(per_cloud),
                          custom_offerings=tuple(custom))
