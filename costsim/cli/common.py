"""Shared pieces of the command line: a one-line-error parser, JSON and table output."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NoReturn

from costsim.errors import CostsimError, printable

EXIT_OK = 0
EXIT_INTERNAL_ERROR = 1  # the command finished, but part of it hit a costsim bug (it says which)
EXIT_BAD_INPUT = 2

Handler = Callable[[argparse.Namespace], int]


class UsageError(CostsimError):
    """Bad command-line usage (a missing or malformed flag)."""


class HelpFormatter(argparse.HelpFormatter):
    """Wraps prose paragraphs to the terminal; keeps indented lines (the examples) as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        import textwrap  # argparse imports it too; only --help gets here

        lines = []
        for line in text.splitlines():
            if line.startswith("  ") or not line.strip():
                lines.append(indent + line)
            else:
                lines.append(textwrap.fill(line, width, initial_indent=indent,
                                           subsequent_indent=indent))
        return "\n".join(lines)


def examples(*command_lines: str) -> str:
    """An epilog listing example command lines (every command's help ends with some)."""
    return "examples:\n" + "\n".join(f"  {line}" for line in command_lines)


def _refuse_repeats(action_class: type[argparse.Action]) -> type[argparse.Action]:
    """``action_class`` that refuses a destination set twice to different values in one parse:
    ``--tp 2 --tp 4`` or ``--flash-attention --no-flash-attention`` is a contradiction, never a
    silent last-one-wins."""

    class Once(action_class):  # type: ignore[misc,valid-type]
        def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                     values: Any, option_string: str | None = None) -> None:
            value = self.const if self.nargs == 0 else values
            given: dict[str, tuple[str | None, Any]] | None = getattr(parser, "given", None)
            if given is not None:
                if self.dest in given and given[self.dest][1] != value:
                    first, before = given[self.dest]
                    if first == option_string:
                        parser.error(f"argument {option_string}: given twice with different "
                                     f"values ({before} and {value})")
                    parser.error(f"argument {option_string}: contradicts {first} given before")
                given[self.dest] = (option_string, value)
            super().__call__(parser, namespace, values, option_string)

    Once.__name__ = f"Once{action_class.__name__}"
    return Once


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line naming the command, then exit code 2.

    A flag given twice with different values is an error, an abbreviated flag is unknown; help
    wraps prose and keeps examples.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        # No prefix matching: "--micro-batc 3" or "--tok 1e12" must not silently become a flag.
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self.given: dict[str, tuple[str | None, Any]] = {}
        for name, action_class in ((None, argparse._StoreAction),
                                   ("store", argparse._StoreAction),
                                   ("store_true", argparse._StoreTrueAction),
                                   ("store_false", argparse._StoreFalseAction)):
            self.register("action", name, _refuse_repeats(action_class))

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None
                         ) -> tuple[argparse.Namespace, list[str]]:
        self.given = {}
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {printable(message)}\n")
        raise SystemExit(EXIT_BAD_INPUT)


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    """Add the shared ``--json`` switch."""
    parser.add_argument("--json", action="store_true",
                        help="machine-readable JSON on stdout (default: a table)")


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
