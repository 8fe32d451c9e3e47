"""Read a user's custom price file (CSV) into offerings; errors name file, line and column.

Columns (header required, order free): ``cloud, region, instance_type, gpu, gpus_per_instance,
effective_date`` (YYYY-MM-DD: every price carries a date), at least one of
``on_demand_usd_per_hour`` and ``spot_usd_per_hour``, and optionally ``vcpus, host_ram_gib,
gpu_memory_gib, provider_gpu_name, source``. The raw catalog's column names
(``accelerator``, ``accelerator_count``, ``price_per_hour_usd``, ``spot_price_per_hour_usd``,
``memory_gib``) are accepted too, so a file in the ``pricing/raw`` format loads as it stands.

Quoted reservations (a sales quote's reserved price, DESIGN §8) use the optional columns
``option`` (``reserved`` with ``term`` 1y/3y and ``payment``, default no-upfront, or an exact
``reserved-<term>-<payment>``), ``upfront_usd`` and ``recurring_usd_per_hour``, both per
instance. A quote row may leave ``region``, ``instance_type`` and ``gpus_per_instance`` empty
(it then applies to every offering of its GPU on that cloud); with an on-demand or spot price it
also adds the offering itself. Rows with an empty ``option`` are offerings, as before.

A row may say the currency of its prices in an optional ``currency`` column (DESIGN §13): empty
or ``USD``, or the scenario's own currency (``currency`` with ``fx_rate_per_usd``), whose
amounts are converted to USD at the scenario's rate as they are read (a quote in EUR at 0.92 EUR
per USD: €920 → $1,000); any other code is an error, since costsim has no rate for it. The
number columns keep their ``_usd`` names; in such a row they hold the row's currency.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from costsim.catalog.gpus import get_gpu
from costsim.catalog.price_tables import billing_rules
from costsim.catalog.resources import read_user_file, user_csv_rows
from costsim.catalog.servers import OWNED_CLOUD
from costsim.domain.currency import USD, Currency
from costsim.domain.pricing import (
    Offering,
    Payment,
    PriceFlag,
    PriceOverrides,
    PurchaseOption,
    QuotedReservation,
)
from costsim.errors import CatalogError, InputError, suggest

MAX_PRICE_FILE_BYTES = 20_000_000
# The largest NVLink domain sold as one unit (GB200 NVL72); more is a typo, e.g. GiB in the
# wrong column.
MAX_GPUS_PER_INSTANCE = 72
# Upper bounds of the other number cells (docs/inputs.md): an instance of 72 GPUs at the
# largest --price-usd-per-gpu-hour (1,000); ~20x the most vCPUs and host RAM any cloud instance
# has (AWS u7in-32tb: 448 vCPUs, 32 TiB); ~300x the largest GPU memory (B300: 288 GB).
MAX_INSTANCE_USD_PER_HOUR = 72_000
MAX_VCPUS = 10_000
MAX_HOST_RAM_GIB = 1_000_000
MAX_GPU_MEMORY_GIB = 100_000

_ALIASES = {
    "accelerator": "gpu",
    "accelerator_count": "gpus_per_instance",
    "price_per_hour_usd": "on_demand_usd_per_hour",
    "spot_price_per_hour_usd": "spot_usd_per_hour",
    "memory_gib": "host_ram_gib",
}
_REQUIRED = ("cloud", "region", "instance_type", "gpu", "gpus_per_instance", "effective_date")
_QUOTE_COLUMNS = ("option", "term", "payment", "upfront_usd", "recurring_usd_per_hour")
_OPTIONAL = ("on_demand_usd_per_hour", "spot_usd_per_hour", "vcpus", "host_ram_gib",
             "gpu_memory_gib", "provider_gpu_name", "source", "currency", *_QUOTE_COLUMNS)
# A quote's upfront for one instance: 3 years of the dearest instance ($72,000/h) is ~1.9e9.
MAX_UPFRONT_USD = 1e10
_PRICES = ("on_demand_usd_per_hour", "spot_usd_per_hour")
# Plain decimal numbers only: float() would also take "1_000", "nan" and "infinity".
_NUMBER = re.compile(r"[+]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


class _Row:
    """One data record of the file, with positions for error messages."""

    def __init__(self, name: str, line_number: int, cells: list[str],
                 columns: dict[str, int], currency: Currency = USD) -> None:
        self.name, self.line_number, self.cells, self.columns = name, line_number, cells, columns
        self.currency = self._currency(currency)

    def _currency(self, scenario: Currency) -> Currency:
        """The currency of this row's prices: USD (empty cell) or the scenario's."""
        code = self.cell("currency").upper()
        if code in ("", "USD"):
            return USD
        if code != scenario.code:
            if scenario.is_usd:
                rule = ("must be USD (a row in another currency needs a scenario that sets "
                        "currency and fx_rate_per_usd, and may then be in that currency)")
            else:
                rule = (f"must be USD or the scenario's currency {scenario.code} (converted "
                        "at its fx_rate_per_usd)")
            raise self.fail("currency", f"{rule}, got {self.cell('currency')!r}")
        return scenario

    def usd(self, column: str, most: float, positive: bool = False) -> float | None:
        """A money cell in USD: the cell in the row's currency, converted at the scenario's
        rate; its upper bound ``most`` (in USD) converted too, so a bound names the cell's
        own unit."""
        rate = self.currency.fx_rate_per_usd
        value = self.number(column, positive=positive, most=most * rate)
        return None if value is None else self.currency.from_local(value)

    def cell(self, column: str) -> str:
        return self.cells[self.columns[column]].strip() if column in self.columns else ""

    def where(self, column: str) -> str:
        return f"{self.name}:{self.line_number}:{self.columns[column] + 1}"

    def fail(self, column: str, problem: str) -> InputError:
        return InputError(self.where(column), column, problem)

    def number(self, column: str, required: bool = False, integer: bool = False,
               positive: bool = False, most: float = math.inf) -> float | None:
        text = self.cell(column)
        if not text:
            if required:
                raise self.fail(column, "a value is required")
            return None
        if not _NUMBER.fullmatch(text) and not text.startswith("-"):
            raise self.fail(column, f"expected a number, got {text!r}")
        try:
            value = float(text)
        except ValueError:
            raise self.fail(column, f"expected a number, got {text!r}") from None
        if not math.isfinite(value):
            raise self.fail(column, f"must be a finite number, got {text!r}")
        if value < 0:
            raise self.fail(column, f"must be a number >= 0, got {text!r}")
        if integer and (value != int(value) or not 1 <= value <= most):
            raise self.fail(column, f"must be a whole number from 1 to {most:g}, got {text!r}")
        if value > most:
            raise self.fail(column, f"must be at most {most:,.0f}, got {text!r}")
        if positive and value == 0:
            raise self.fail(column, f"a price must be > 0 (leave the cell empty where the "
                                    f"option is not sold), got {text!r}")
        return value


def _read_text(path: Path) -> str:
    """The file's text (UTF-8, a byte-order mark allowed); errors name the file and position."""
    name = str(path)
    data = read_user_file(path, MAX_PRICE_FILE_BYTES)
    try:
        # spreadsheet exports often start with a BOM; it is not part of the first column name
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(f"{name}:{line}:{column}", "",
                         f"not UTF-8 text (byte 0x{data[exc.start]:02x}); save the file as "
                         "UTF-8") from None


def _columns(name: str, header: list[str]) -> dict[str, int]:
    """Canonical column name → index; unknown, empty, duplicate or missing columns fail."""
    if not any(cell.strip() for cell in header):
        raise InputError(f"{name}:1:1", "", "line 1 is empty; expected the CSV header")
    columns: dict[str, int] = {}
    known = (*_REQUIRED, *_OPTIONAL, *_ALIASES)
    for index, raw_name in enumerate(header):
        where = f"{name}:1:{index + 1}"
        column = raw_name.strip().lower()
        if not column:
            raise InputError(where, "", "empty column name (a trailing comma?)")
        canonical = _ALIASES.get(column, column)
        if canonical not in (*_REQUIRED, *_OPTIONAL):
            hint = suggest(column, known)
            extra = f"; did you mean {' or '.join(repr(h) for h in hint)}?" if hint else ""
            raise InputError(where, raw_name,
                             f"unknown column{extra} (known: {', '.join(_REQUIRED + _OPTIONAL)})")
        if canonical in columns:
            raise InputError(where, raw_name,
                             f"duplicate column (same as column {columns[canonical] + 1})")
        columns[canonical] = index
    for required in _REQUIRED:
        if required not in columns:
            raise InputError(f"{name}:1:1", required, "missing required column")
    if not any(price in columns for price in _PRICES) and "option" not in columns:
        raise InputError(f"{name}:1:1", "on_demand_usd_per_hour",
                         "need an on-demand or a spot price column (or option, for quotes)")
    return columns


def _cloud_and_gpu(row: _Row) -> tuple[str, str]:
    cell = row.cell
    if not cell("cloud"):
        raise row.fail("cloud", "a value is required")
    cloud = cell("cloud").lower()
    if cloud == OWNED_CLOUD:
        raise row.fail("cloud", f"'{OWNED_CLOUD}' is costsim's name for your own servers "
                                "(costsim/data/servers.csv), not a cloud a price file can price")
    try:
        gpu = get_gpu(cell("gpu"), source=row.where("gpu")).name
    except CatalogError as exc:
        raise row.fail("gpu", str(exc).split(": ", 1)[-1]) from None
    return cloud, gpu


def _date(row: _Row) -> str:
    date = row.cell("effective_date")
    try:
        if not _DATE.fullmatch(date):
            raise ValueError(date)
        dt.date.fromisoformat(date)
    except ValueError:
        raise row.fail("effective_date", f"expected a date YYYY-MM-DD, got {date!r}") from None
    return date


def _quote(row: _Row, path: Path) -> QuotedReservation | None:
    """The row's quoted reservation, or None for a plain offering row (empty ``option``)."""
    text = row.cell("option").lower()
    if not text:
        for column in ("term", "payment", "upfront_usd", "recurring_usd_per_hour"):
            if row.cell(column):
                raise row.fail(column, "goes with option 'reserved' (a quoted reservation); "
                                       "option is empty")
        return None
    cloud, gpu = _cloud_and_gpu(row)
    term_text, pay_text = row.cell("term").lower(), row.cell("payment").lower()
    if text == "reserved":
        if term_text not in ("1y", "3y", "1", "3"):
            raise row.fail("term", f"option 'reserved' needs term 1y or 3y, got {term_text!r}")
        try:
            payment = Payment(pay_text or Payment.NO_UPFRONT.value)
        except ValueError:
            raise row.fail("payment", f"must be one of {', '.join(p.value for p in Payment)}, "
                                      f"got {pay_text!r}") from None
        option = PurchaseOption.reserved(int(term_text[0]), payment)
    else:
        try:
            option = PurchaseOption(text)
        except ValueError:
            option = PurchaseOption.ON_DEMAND
        if not option.is_reserved:
            raise row.fail("option", "a quote row takes 'reserved' (with term and payment) or "
                                     f"reserved-<term>-<payment>, got {text!r}; leave it empty "
                                     "for an offering row")
        if term_text or pay_text:
            raise row.fail("term" if term_text else "payment", f"option {text!r} already says "
                           "its term and payment")
    upfront = row.usd("upfront_usd", most=MAX_UPFRONT_USD) or 0.0
    recurring = row.usd("recurring_usd_per_hour", most=MAX_INSTANCE_USD_PER_HOUR) or 0.0
    assert option.term_years is not None
    assert option.payment is not None
    try:
        return QuotedReservation(
            cloud=cloud, gpu=gpu, term_years=option.term_years, payment=option.payment,
            upfront_usd=upfront, recurring_usd_per_hour=recurring,
            region=row.cell("region") or None, instance_type=row.cell("instance_type") or None,
            source=row.cell("source") or f"quote in {path.name} line {row.line_number}",
            effective_date=_date(row))
    except InputError as exc:
        raise row.fail("upfront_usd", exc.problem) from None


def _offering(row: _Row, path: Path) -> Offering:
    """One validated data record as a user-override offering."""
    cell = row.cell
    for column in ("region", "instance_type"):
        if not cell(column):
            raise row.fail(column, "a value is required")
    cloud, gpu = _cloud_and_gpu(row)
    gpus = row.number("gpus_per_instance", required=True, integer=True,
                      most=MAX_GPUS_PER_INSTANCE)
    on_demand, spot = (row.usd(column, positive=True, most=MAX_INSTANCE_USD_PER_HOUR)
                       for column in _PRICES)
    if on_demand is None and spot is None:
        column = next(c for c in (*_PRICES, "option") if c in row.columns)
        raise row.fail(column, "a row needs an on-demand or a spot price")
    date = _date(row)
    vcpus = row.number("vcpus", most=MAX_VCPUS)
    if vcpus is not None and vcpus != int(vcpus):
        raise row.fail("vcpus", f"must be a whole number, got {cell('vcpus')!r}")
    rules = billing_rules()
    return Offering(
        cloud=cloud, region=cell("region"), instance_type=cell("instance_type"), gpu=gpu,
        provider_gpu_name=cell("provider_gpu_name") or cell("gpu"),
        gpus_per_instance=int(gpus or 1), vcpus=int(vcpus or 0),
        host_ram_gib=row.number("host_ram_gib", most=MAX_HOST_RAM_GIB) or 0.0,
        gpu_memory_gib=row.number("gpu_memory_gib", most=MAX_GPU_MEMORY_GIB) or 0.0,
        on_demand_usd_per_hour=on_demand, spot_usd_per_hour=spot,
        marketplace=rules[cloud].marketplace if cloud in rules else False,
        flags=(PriceFlag.USER_OVERRIDE,),
        source=cell("source") or f"user price file {path.name} line {row.line_number}",
        effective_date=date,
    )


def load_price_file(path: Path, currency: Currency = USD) -> tuple[Offering, ...]:
    """Parse ``path`` into offerings flagged ``user-override`` (quote rows: see
    :func:`load_price_file_entries`)."""
    return load_price_file_entries(path, currency)[0]


def load_price_file_entries(path: Path, currency: Currency = USD
                            ) -> tuple[tuple[Offering, ...], tuple[QuotedReservation, ...]]:
    """Parse ``path`` into offerings flagged ``user-override`` and quoted reservations, every
    price in USD (a row in ``currency``, the scenario's, converted at its rate).

    Raises:
        InputError: with source ``FILE:LINE:COLUMN`` (1-based) and the column name.
    """
    name = str(path)
    quotes: list[QuotedReservation] = []
    # newline="" keeps quoted multi-line cells whole, so line numbers stay the file's own
    reader = csv.reader(io.StringIO(_read_text(path), newline=""))
    offerings: list[Offering] = []
    seen: dict[str, int] = {}
    try:
        header = next(reader, None)
        if header is None:
            raise InputError(f"{name}:1:1", "", "empty file; expected a CSV header")
        columns = _columns(name, header)
        for start, cells in user_csv_rows(reader, header, name):
            row = _Row(name, start, cells, columns, currency)
            quote = _quote(row, path)
            if quote is not None:
                quotes.append(quote)
                if not any(row.cell(price) for price in _PRICES):
                    continue  # a quote only: the offering it prices is in the book
            offering = _offering(row, path)
            if offering.key in seen:
                raise row.fail("instance_type",
                               f"duplicate of line {seen[offering.key]} ({offering.key})")
            seen[offering.key] = start
            offerings.append(offering)
    except csv.Error as exc:
        raise InputError(f"{name}:{reader.line_num}", "", f"not valid CSV: {exc}") from None
    if not offerings and not quotes:
        raise InputError(f"{name}:2:1", "", "no price rows after the header")
    return tuple(offerings), tuple(quotes)


def overrides_from_entries(entries: Sequence[Mapping[str, object]],
                           source: str = "prices.overrides",
                           base_dir: Path | None = None) -> PriceOverrides:
    """Build :class:`PriceOverrides` from scenario-style entries (docs/pricing.md).

    Each entry is one of ``{discount_pct: 10}`` (flat), ``{cloud: aws, discount_pct: 12}``
    (per cloud) or ``{price_file: path.csv}`` (custom rows; relative to ``base_dir``).

    Raises:
        InputError: an unknown key, a missing value or a bad number, naming ``source[i]``.
    """
    flat: float | None = None
    per_cloud: dict[str, float] = {}
    custom: list[Offering] = []
    quotes: list[QuotedReservation] = []
    allowed = ("cloud", "discount_pct", "price_file")
    for index, entry in enumerate(entries):
        where = f"[{index}]"
        if not isinstance(entry, Mapping):
            raise InputError(source, where, f"expected a mapping such as {{cloud: aws, "
                                            f"discount_pct: 12}}, got {entry!r}")
        for key in entry:
            if key not in allowed:
                hint = suggest(str(key), allowed)
                extra = f"; did you mean {' or '.join(repr(h) for h in hint)}?" if hint else ""
                raise InputError(source, f"{where}.{key}", f"unknown key{extra}")
        if "price_file" in entry:
            path = Path(str(entry["price_file"]))
            if base_dir is not None and not path.is_absolute():
                path = base_dir / path
            rows, quoted = load_price_file_entries(path)
            custom.extend(rows)
            quotes.extend(quoted)
            continue
        if "discount_pct" not in entry:
            raise InputError(source, where, "needs discount_pct or price_file")
        try:
            pct = float(str(entry["discount_pct"]))
        except ValueError:
            raise InputError(source, f"{where}.discount_pct",
                             f"expected a number, got {entry['discount_pct']!r}") from None
        if "cloud" in entry:
            cloud = str(entry["cloud"]).strip().lower()
            known = [c for c in billing_rules() if c != OWNED_CLOUD]
            if cloud not in known:
                raise CatalogError("cloud", cloud, known, source=f"{source}{where}.cloud")
            if cloud in per_cloud:
                raise InputError(source, f"{where}.cloud", f"a second discount for {cloud}")
            per_cloud[cloud] = pct
        else:
            if flat is not None:
                raise InputError(source, f"{where}.discount_pct",
                                 "a second flat discount (give one, or name a cloud)")
            flat = pct
    return PriceOverrides(discount_pct=flat or 0.0, cloud_discount_pct=tuple(per_cloud.items()),
                          custom_offerings=tuple(custom), quoted_reservations=tuple(quotes))
