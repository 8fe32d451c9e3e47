"""Read pay-per-token API prices: the shipped ``costsim/data/api_prices.csv`` and a user's price
file in the same format; every bad row fails with one line naming the file, line, column,
rule and value.

Columns (header required, order free): ``provider, model, input_usd_per_million_tokens,
output_usd_per_million_tokens, source, effective_date`` (YYYY-MM-DD), and optionally
``provider_model_id, requests_per_minute, tokens_per_minute, ttft_s, output_tokens_per_s,
note``. A number written with a leading ``~`` is an estimate (costsim's, not the provider's
published figure); reports mark prices resting on one with ``~``. ``model`` is a costsim preset
name (``costsim models``) or, in a user's file, the name of one of the scenario's models.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import math
import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from costsim.catalog.resources import read_data_text, read_user_file, user_csv_rows
from costsim.domain.api_pricing import (
    MAX_OUTPUT_TOKENS_PER_S,
    MAX_REQUESTS_PER_MINUTE,
    MAX_TOKENS_PER_MINUTE,
    MAX_TTFT_S,
    MAX_USD_PER_MILLION_TOKENS,
    ApiPrice,
)
from costsim.errors import CatalogError, InputError, suggest

SHIPPED_FILE = "api_prices.csv"
MAX_API_PRICE_FILE_BYTES = 20_000_000
REQUIRED = ("provider", "model", "input_usd_per_million_tokens",
            "output_usd_per_million_tokens", "source", "effective_date")
OPTIONAL = ("provider_model_id", "requests_per_minute", "tokens_per_minute", "ttft_s",
            "output_tokens_per_s", "note")
# (column, upper bound, may be 0): prices may be 0 one at a time (a free input tier), limits
# and latencies are positive when given
_NUMBERS = (("input_usd_per_million_tokens", MAX_USD_PER_MILLION_TOKENS, True),
            ("output_usd_per_million_tokens", MAX_USD_PER_MILLION_TOKENS, True),
            ("requests_per_minute", MAX_REQUESTS_PER_MINUTE, False),
            ("tokens_per_minute", MAX_TOKENS_PER_MINUTE, False),
            ("ttft_s", MAX_TTFT_S, False),
            ("output_tokens_per_s", MAX_OUTPUT_TOKENS_PER_S, False))
_NUMBER = re.compile(r"(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_PROVIDER = re.compile(r"[a-z0-9][a-z0-9.-]{0,63}")


def is_api_price_header(text: str) -> bool:
    """Whether a CSV's first line is an API price file's header (it names ``provider`` and
    ``input_usd_per_million_tokens``): a scenario's price file holds instance rows or API
    rows, told apart by their header."""
    first = next(csv.reader(io.StringIO(text.split("\n", 1)[0])), [])
    names = {cell.strip().lower() for cell in first}
    return {"provider", "input_usd_per_million_tokens"} <= names


def parse_api_prices(text: str, name: str, *, user: bool) -> tuple[ApiPrice, ...]:
    """Every row of an API price file's ``text`` (``name`` for messages).

    Raises:
        InputError: ``name:LINE:COLUMN: column: rule, got value`` for the first bad cell, a
        duplicate (provider, model), an unknown or missing column, or a file without rows.
    """
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
        if header is None or not any(cell.strip() for cell in header):
            raise InputError(f"{name}:1:1", "", "empty file; expected the CSV header")
        columns = _columns(name, header)
        rows: list[ApiPrice] = []
        seen: dict[tuple[str, str], int] = {}
        for start, cells in user_csv_rows(reader, header, name):
            price = _row(name, start, cells, columns, user)
            if price.key in seen:
                raise InputError(f"{name}:{start}:{columns['model'] + 1}", "model",
                                 f"duplicate of line {seen[price.key]} ({price.provider}, "
                                 f"{price.model})")
            seen[price.key] = start
            rows.append(price)
    except csv.Error as exc:
        raise InputError(f"{name}:{reader.line_num}", "", f"not valid CSV: {exc}") from None
    if not rows:
        raise InputError(f"{name}:2:1", "", "no price rows after the header")
    return tuple(rows)


def read_api_price_file(path: Path) -> tuple[ApiPrice, ...]:
    """A user's API price file (a scenario's ``prices.price_file`` with an API header).

    Raises:
        InputError: the file cannot be read, is too large, is not UTF-8, or has a bad row.
    """
    data = read_user_file(path, MAX_API_PRICE_FILE_BYTES)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(str(path), "", f"not UTF-8 text (byte 0x{data[exc.start]:02x} at "
                         f"offset {exc.start}); save the file as UTF-8") from None
    return parse_api_prices(text, str(path), user=True)


def api_rows_of_price_file(path: Path) -> tuple[ApiPrice, ...] | None:
    """The rows of a price file whose header is an API price file's, else None (an instance
    price file: :mod:`costsim.catalog.price_file` reads it, and names any problem opening it).

    Raises:
        InputError: an API price file with a bad row.
    """
    try:
        with path.open(encoding="utf-8-sig", errors="replace") as handle:
            first = handle.readline(65_536)
    except OSError:
        return None
    return read_api_price_file(path) if is_api_price_header(first) else None


@cache
def shipped_api_prices() -> tuple[ApiPrice, ...]:
    """The shipped table (``costsim/data/api_prices.csv``)."""
    return parse_api_prices(read_data_text(SHIPPED_FILE), f"costsim/data/{SHIPPED_FILE}",
                            user=False)


def api_price_table(user_rows: Iterable[ApiPrice] = ()) -> tuple[ApiPrice, ...]:
    """The shipped rows with the user's: a user row replaces the shipped row of the same
    (provider, model) and adds the others."""
    user = {row.key: row for row in user_rows}
    shipped = tuple(row for row in shipped_api_prices() if row.key not in user)
    return (*shipped, *user.values())


def find_api_price(table: Iterable[ApiPrice], provider: str, model: str,
                   source: str = "") -> ApiPrice:
    """The row of ``provider`` for ``model``.

    Raises:
        CatalogError: no row has that provider (with suggestions).
        InputError: the provider has no price for that model (naming the models it has).
    """
    rows = tuple(table)
    wanted = provider.strip().lower()
    offered = sorted({row.provider for row in rows})
    if wanted not in offered:
        raise CatalogError("API provider", provider, offered, source=source)
    for row in rows:
        if row.provider == wanted and row.model == model:
            return row
    models = sorted(row.model for row in rows if row.provider == wanted)
    raise InputError(source, "", f"API provider '{wanted}' has no price for model '{model}' "
                     f"(it prices {', '.join(models)}); add a row to the scenario's price file")


def cheapest_api_price(table: Iterable[ApiPrice], model: str, prompt_tokens: float,
                       output_tokens: float) -> ApiPrice | None:
    """The provider that serves requests of this size cheapest for ``model`` (ties: the
    provider's name), or None when no row prices it."""
    rows = [row for row in table if row.model == model]
    if not rows:
        return None
    return min(rows, key=lambda row: (row.usd_per_request(prompt_tokens, output_tokens),
                                      row.provider))


def _columns(name: str, header: list[str]) -> dict[str, int]:
    columns: dict[str, int] = {}
    for index, raw in enumerate(header):
        where = f"{name}:1:{index + 1}"
        column = raw.strip().lower()
        if not column:
            raise InputError(where, "", "empty column name (a trailing comma?)")
        if column not in (*REQUIRED, *OPTIONAL):
            hint = suggest(column, (*REQUIRED, *OPTIONAL))
            extra = f"; did you mean {' or '.join(repr(h) for h in hint)}?" if hint else ""
            raise InputError(where, raw, f"unknown column{extra} (known: "
                             f"{', '.join((*REQUIRED, *OPTIONAL))})")
        if column in columns:
            raise InputError(where, raw, f"duplicate column (same as column "
                             f"{columns[column] + 1})")
        columns[column] = index
    for required in REQUIRED:
        if required not in columns:
            raise InputError(f"{name}:1:1", required, "missing required column")
    return columns


def _row(name: str, line: int, cells: list[str], columns: dict[str, int],
         user: bool) -> ApiPrice:
    def cell(column: str) -> str:
        return cells[columns[column]].strip() if column in columns else ""

    def fail(column: str, problem: str) -> InputError:
        return InputError(f"{name}:{line}:{columns[column] + 1}", column, problem)

    provider = cell("provider").lower()
    if not _PROVIDER.fullmatch(provider):
        raise fail("provider", f"must be a provider name of lower-case letters, digits, '-' "
                   f"and '.' (e.g. together, aws-bedrock), got {cell('provider')!r}")
    model = cell("model")
    if not model:
        raise fail("model", "a value is required (a costsim preset name)")
    numbers: dict[str, float | None] = {}
    estimated: list[str] = []
    for column, high, zero_ok in _NUMBERS:
        text = cell(column)
        if text.startswith("~"):
            text = text[1:].strip()
            estimated.append(column)
        if not text:
            if column in REQUIRED:
                raise fail(column, "a value is required (USD per 1M tokens)")
            numbers[column] = None
            continue
        if not _NUMBER.fullmatch(text):
            raise fail(column, f"expected a plain number >= 0 (a leading ~ marks an estimate), "
                       f"got {cell(column)!r}")
        value = float(text)
        if not math.isfinite(value) or value > high:
            raise fail(column, f"must be at most {high:g}, got {cell(column)!r}")
        if value == 0 and not zero_ok:
            raise fail(column, f"must be > 0 (leave the cell empty where nothing is published), "
                       f"got {cell(column)!r}")
        numbers[column] = value
    if numbers["input_usd_per_million_tokens"] == 0 == numbers["output_usd_per_million_tokens"]:
        raise fail("input_usd_per_million_tokens", "input and output prices are both 0: a row "
                   "needs a price")
    date = cell("effective_date")
    try:
        if not _DATE.fullmatch(date):
            raise ValueError(date)
        dt.date.fromisoformat(date)
    except ValueError:
        raise fail("effective_date", f"expected a date YYYY-MM-DD, got {date!r}") from None
    if not cell("source"):
        raise fail("source", "a value is required: where the price was published")
    input_usd = numbers["input_usd_per_million_tokens"]
    output_usd = numbers["output_usd_per_million_tokens"]
    assert input_usd is not None
    assert output_usd is not None
    return ApiPrice(provider=provider, model=model, input_usd_per_million_tokens=input_usd,
                    output_usd_per_million_tokens=output_usd, source=cell("source"),
                    effective_date=date, provider_model_id=cell("provider_model_id"),
                    requests_per_minute=numbers["requests_per_minute"],
                    tokens_per_minute=numbers["tokens_per_minute"], ttft_s=numbers["ttft_s"],
                    output_tokens_per_s=numbers["output_tokens_per_s"],
                    estimated=tuple(estimated), note=cell("note"), user_row=user)
