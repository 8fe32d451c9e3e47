"""The shipped API price table and the reader of API price files (bad rows: one line each)."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsim.catalog.api_prices import (
    api_price_table,
    find_api_price,
    is_api_price_header,
    read_api_price_file,
    shipped_api_prices,
)
from costsim.catalog.models import preset_names
from costsim.errors import CatalogError, InputError

HEADER = ("provider,model,input_usd_per_million_tokens,output_usd_per_million_tokens,"
          "requests_per_minute,ttft_s,source,effective_date\n")
GOOD = "acme,llama-3.1-8b,0.5,~1.5,600,0.3,quote,2026-11-15\n"


def test_the_shipped_table_prices_presets_from_five_providers_with_sources() -> None:
    rows = shipped_api_prices()
    assert len({row.provider for row in rows}) >= 5
    presets = set(preset_names())
    for row in rows:
        assert row.model in presets, row.model
        assert row.source
        assert row.effective_date
    # a figure marked ~ in the file is an estimate; a plain one is published
    together = find_api_price(rows, "together", "llama-3.1-8b")
    assert together.estimate
    assert not find_api_price(rows, "deepinfra", "llama-3.1-8b").estimate


def test_a_user_row_replaces_the_shipped_one(tmp_path: Path) -> None:
    path = tmp_path / "api.csv"
    path.write_text(HEADER + "deepinfra,llama-3.1-8b,0.01,0.02,,,my quote,2026-11-30\n",
                    encoding="utf-8")
    (row,) = read_api_price_file(path)
    assert row.user_row
    assert "input_usd_per_million_tokens" not in row.estimated
    table = api_price_table((row,))
    assert find_api_price(table, "deepinfra", "llama-3.1-8b").input_usd_per_million_tokens \
        == 0.01
    assert len(table) == len(shipped_api_prices())
    assert is_api_price_header(HEADER)
    assert not is_api_price_header("cloud,region,gpu\n")


@pytest.mark.parametrize(("row", "column", "rule"), [
    ("acme,llama-3.1-8b,-0.5,1.5,600,0.3,quote,2026-11-15", 3, "plain number"),
    ("acme,llama-3.1-8b,abc,1.5,600,0.3,quote,2026-11-15", 3, "plain number"),
    ("acme,llama-3.1-8b,0,0,600,0.3,quote,2026-11-15", 3, "both 0"),
    ("acme,llama-3.1-8b,0.5,5000,600,0.3,quote,2026-11-15", 4, "at most 1000"),
    ("acme,llama-3.1-8b,0.5,1.5,0,0.3,quote,2026-11-15", 5, "must be > 0"),
    ("acme,llama-3.1-8b,0.5,1.5,600,0.3,,2026-11-15", 7, "source"),
    ("acme,llama-3.1-8b,0.5,1.5,600,0.3,quote,15/11/2026", 8, "YYYY-MM-DD"),
    ("Acme Inc,llama-3.1-8b,0.5,1.5,600,0.3,quote,2026-11-15", 1, "provider name"),
    ("acme,,0.5,1.5,600,0.3,quote,2026-11-15", 2, "preset"),
    ("acme,llama-3.1-8b,0.5,1.5,600,0.3,quote", 8, "expected 8 fields"),
])
def test_a_bad_row_names_file_line_column_and_rule(tmp_path: Path, row: str, column: int,
                                                    rule: str) -> None:
    path = tmp_path / "api.csv"
    path.write_text(HEADER + GOOD + row + "\n", encoding="utf-8")
    with pytest.raises(InputError) as error:
        read_api_price_file(path)
    message = str(error.value)
    assert message.startswith(f"{path}:3:{column}")
    assert rule in message
    assert "\n" not in message


def test_duplicates_unknown_columns_and_empty_files_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "api.csv"
    path.write_text(HEADER + GOOD + GOOD, encoding="utf-8")
    with pytest.raises(InputError, match="duplicate of line 2"):
        read_api_price_file(path)
    path.write_text(HEADER.replace("ttft_s", "ttft") + GOOD, encoding="utf-8")
    with pytest.raises(InputError, match="unknown column; did you mean 'ttft_s'"):
        read_api_price_file(path)
    path.write_text(HEADER, encoding="utf-8")
    with pytest.raises(InputError, match="no price rows"):
        read_api_price_file(path)


def test_an_unknown_provider_or_model_is_named() -> None:
    rows = shipped_api_prices()
    with pytest.raises(CatalogError, match="did you mean 'together'"):
        find_api_price(rows, "togther", "llama-3.1-8b")
    with pytest.raises(InputError, match="no price for model 'gpt2'"):
        find_api_price(rows, "groq", "gpt2")
