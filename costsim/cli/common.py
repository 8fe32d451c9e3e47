"""Shared pieces of the command line: a one-line-error parser, JSON and table output."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NoReturn

from costsim.errors import CostsimError

EXIT_OK = 0
EXIT_INTERNAL_ERROR = 1  # the command finished, but part of it hit a costsim bug (it says which)
EXIT_BAD_INPUT = 2

Handler = Callable[[argparse.Namespace], int]


class UsageError(CostsimError):
    """Bad command-line usage (a missing or malformed flag)."""


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line naming the command, then exit code 2."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(EXIT_BAD_INPUT)


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    """Add the shared ``--json`` switch."""
    parser.add_argument("--json", action="store_true", help="machine-readable output on stdout")


def _json_default(value: object) -> object:
    if hasattr(value, "value"):
        return value.value  # enums
    raise TypeError(f"cannot serialise {type(value).__name__}")


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def print_json(payload: Any) -> None:
    """Write ``payload`` as indented JSON on stdout (NaN and infinities become null)."""
    import json  # here, not at the top: `costsim --help` never writes JSON

    sys.stdout.write(json.dumps(_finite(payload), indent=2, default=_json_default) + "\n")


def format_table(
    rows: Sequence[Sequence[object]], header: Sequence[str], right_align: Iterable[int] = (),
    *, max_width: int | None = None, shrink: Sequence[int] = (),
) -> str:
    """Render rows as a plain-text table with a header rule.

    With ``max_width``, the ``shrink`` columns (widest first) are cut, their long cells ending in
    '…', until the table fits; the other columns are never cut.
    """
    cells = [[str(c) for c in header]]
    cells += [["" if c is None else str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    if max_width is not None and shrink:
        widths = _fit(widths, max_width, shrink, min_width=[len(str(c)) for c in header])
        for row in cells[1:]:
            for i in shrink:
                if len(row[i]) > widths[i]:
                    row[i] = row[i][: widths[i] - 1] + "…"
    right = set(right_align)

    def line(row: list[str]) -> str:
        parts = [
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(cells[0]), rule, *(line(row) for row in cells[1:])])


def _fit(widths: list[int], max_width: int, shrink: Sequence[int], min_width: list[int]
         ) -> list[int]:
    """Narrow the ``shrink`` columns one character at a time, widest first, to fit."""
    widths = list(widths)
    total = sum(widths) + 2 * (len(widths) - 1)
    while total > max_width:
        i = max(shrink, key=lambda j: widths[j] - max(min_width[j], 4))
        if widths[i] <= max(min_width[i], 4):
            break  # nothing left to cut: the table stays wider than asked
        widths[i] -= 1
        total -= 1
    return widths
