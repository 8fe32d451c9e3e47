"""Rewriting rows of a defaults data file (costsim/data/allin_loss.csv: key, value, unit,
source), shared by the scripts that estimate its values (fit_allin_loss.py,
serving_model_error.py, training_model_error.py): each ships its estimate with ``--write`` and
fails ``--check`` when the file differs from it."""

from __future__ import annotations

import csv
import io
import sys
from collections.abc import Mapping
from pathlib import Path


def with_rows(current: str, rows: Mapping[str, tuple[float, str]], *,
              new_after: str | None = None, unit: str = "log-sd") -> str:
    """``current`` with each key's row given ``(value, source)``: the value written to 4
    significant digits; a key the file lacks is added after the row ``new_after`` with ``unit``
    (without ``new_after`` a missing key is an error)."""
    table = list(csv.DictReader(io.StringIO(current)))
    keys = [row["key"] for row in table]
    for key, (value, source) in rows.items():
        row = {"key": key, "value": f"{value:.4g}", "unit": unit, "source": source}
        if key in keys:
            table[keys.index(key)].update(value=row["value"], source=source)
        elif new_after is not None:
            table.insert(keys.index(new_after) + 1, row)
            keys = [r["key"] for r in table]
        else:
            raise KeyError(f"{key}: no such row in the defaults file")
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(table[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(table)
    return out.getvalue()


def write_or_check(path: Path, current: str, wanted: str, what: str, *, write: bool,
                   check: bool, root: Path) -> int:
    """``--write``: replace ``path`` by ``wanted`` when they differ; ``--check``: exit status 1
    (and one line naming the file and ``what``) when they differ; else 0."""
    if wanted == current:
        return 0
    name = path.relative_to(root)
    if write:
        path.write_text(wanted, encoding="utf-8")
        print(f"wrote {what} into {name}")
        return 0
    if check:
        print(f"{name}: {what} differs from the estimate (rerun with --write)", file=sys.stderr)
        return 1
    return 0
