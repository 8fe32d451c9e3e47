"""The price-book figures in README.md and docs/pricing.md are the shipped book's, so that they
cannot drift."""

from __future__ import annotations

import re
from pathlib import Path

from costsim.catalog.prices import price_book

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def test_readme_offering_cloud_and_server_counts_match_the_book() -> None:
    text = " ".join(README.read_text(encoding="utf-8").split())
    found = re.search(r"price book of ([\d,]+) GPU offerings on (\d+) clouds, plus (\d+) "
                      r"owned-server configurations", text)
    assert found, "README no longer states the price book's size in the expected sentence"
    offerings = price_book().offerings()
    rentals = [o for o in offerings if o.cloud != "owned"]
    assert int(found.group(1).replace(",", "")) == len(rentals)
    assert int(found.group(2)) == len({o.cloud for o in rentals})
    assert int(found.group(3)) == len(offerings) - len(rentals)


def test_docs_pricing_counts_match_the_book() -> None:
    text = " ".join((ROOT / "docs" / "pricing.md").read_text(encoding="utf-8").split())
    found = re.search(r"price book: ([\d,]+) GPU offerings from (\d+) clouds", text)
    assert found, "docs/pricing.md no longer states the price book's size in the expected words"
    rentals = [o for o in price_book().offerings() if o.cloud != "owned"]
    assert int(found.group(1).replace(",", "")) == len(rentals)
    assert int(found.group(2)) == len({o.cloud for o in rentals})
