"""The override grammar: ``--set KEY.PATH=V1,V2,...`` → :class:`Override`; overrides → variants.

A key path is dotted (``phases.serve.load.peak_requests_per_s``); a part holding a dot, a quote
or ``=`` is quoted, ``"…"`` or ``'…'``. Values are separated by commas; each unquoted value is
read as a plain YAML scalar in the scenario file would be (``20`` an int, ``0.5`` a float,
``true`` a bool, ``2027-03-01`` a date, ``null`` none, anything else text), so ``--set`` and
the file agree on what a value is. A value holding a comma (or one meant as text although it
reads as a number) is quoted: ``'…'`` (a quote inside written twice, as in YAML) or ``"…"``
(``\\"`` and ``\\\\`` inside). The grammar is documented in docs/sweep.md.
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from costsim.errors import InputError, printable
from costsim.scenario.yaml_io import plain_scalar

# What a value may be: a YAML scalar.
Value = str | int | float | bool | dt.date | None

# Values of one --set (or one grid axis), and variants of one sweep. A sweep of this size is
# already hours of validation and simulation on a laptop (DESIGN §1: "thousands of variants");
# a larger product is refused before any variant is built, so a typo (an extra axis) cannot
# fill the memory.
MAX_VALUES = 1000
MAX_VARIANTS = 10_000
# Characters that force a key part to be quoted when a path is written back.
_PATH_SPECIAL = frozenset(".=\"',")


@dataclass(frozen=True, slots=True)
class Override:
    """One ``--set``: the key path as parsed parts and the values it takes, in order."""

    parts: tuple[str, ...]
    values: tuple[Value, ...]
    text: str = field(default="", compare=False)  # as the user wrote it, for messages
    source: str = field(default="--set", compare=False)

    @property
    def key(self) -> str:
        """The key path in canonical dotted form."""
        return format_key(self.parts)

    def origin(self) -> str:
        """Where it came from, for messages: ``--set KEY=V1,V2``."""
        return f"{self.source} {printable(self.text or self.key)}"


@dataclass(frozen=True, slots=True)
class Variant:
    """One point of a sweep: (key path, value) settings applied in order to the scenario file.

    ``name`` is a sweep file's name for its first ``named`` settings (empty for ``--set``
    products); ``origins`` says where each setting came from. Only the settings and the name
    are the variant's identity (a cache keys on them); the rest is for messages and labels.
    """

    settings: tuple[tuple[str, Value], ...]
    name: str = ""
    origins: tuple[str, ...] = field(default=(), compare=False)
    named: int = field(default=0, compare=False)

    @property
    def label(self) -> str:
        """Readable: the name (standing for its settings), then each other setting by the
        shortest key suffix unique within the variant (``13b, peak_requests_per_s=40,
        H100=-25``)."""
        keys = [parse_key(key) for key, _ in self.settings]
        shown = []
        named = self.named if self.name else 0
        for parts, (_, value) in list(zip(keys, self.settings, strict=True))[named:]:
            for size in range(1, len(parts) + 1):
                tail = parts[-size:]
                if sum(1 for other in keys if other[-size:] == tail) == 1:
                    break
            shown.append(f"{format_key(tail)}={format_value(value)}")
        text = ", ".join([self.name, *shown] if self.name else shown)
        return text or "as written"

    def as_dict(self) -> dict[str, str | int | float | bool | None]:
        """The settings as JSON types (dates as YYYY-MM-DD), key path → value, in order."""
        return {key: _jsonable(value) for key, value in self.settings}

    def origin_of(self, index: int) -> str:
        """Where setting ``index`` came from (``--set`` when unknown)."""
        return self.origins[index] if index < len(self.origins) else "--set"


def _jsonable(value: Value) -> str | int | float | bool | None:
    if isinstance(value, dt.date):  # datetime too
        return value.isoformat()
    return value


def _refuse(source: str, text: str, rule: str) -> InputError:
    return InputError(f"{source} {printable(text)}", "", rule)


def _split(text: str, separator: str, source: str, whole: str) -> list[tuple[str, bool]]:
    """Split ``text`` at ``separator`` outside quotes → [(piece, was it quoted)]: a quoted
    piece is its inner text exactly, an unquoted one is stripped of surrounding spaces."""
    pieces: list[tuple[str, bool]] = []
    index = 0
    while True:
        start = index
        while index < len(text) and text[index] in " \t":
            index += 1
        if index < len(text) and text[index] in "\"'":
            end, inner = _quoted(text, index, source, whole)
            index = end + 1
            after = index
            while index < len(text) and text[index] != separator:
                index += 1
            if text[after:index].strip():
                raise _refuse(source, whole, "text after a closing quote: "
                              f"{printable(text[after:index].strip())!r}")
            pieces.append((inner, True))
        else:
            while index < len(text) and text[index] != separator:
                index += 1
            pieces.append((text[start:index].strip(), False))
        if index >= len(text):
            return pieces
        index += 1  # past the separator


def _quoted(text: str, start: int, source: str, whole: str) -> tuple[int, str]:
    """The quoted piece opening at ``start`` → (index of its closing quote, inner text)."""
    quote = text[start]
    inner: list[str] = []
    index = start + 1
    while index < len(text):
        char = text[index]
        if quote == "'" and char == "'":
            if text[index + 1:index + 2] == "'":  # YAML's rule: '' is one quote
                inner.append("'")
                index += 2
                continue
            return index, "".join(inner)
        if quote == '"' and char == "\\" and text[index + 1:index + 2] in ('"', "\\"):
            inner.append(text[index + 1])
            index += 2
            continue
        if quote == '"' and char == '"':
            return index, "".join(inner)
        inner.append(char)
        index += 1
    raise _refuse(source, whole, f"a quote ({quote}) is not closed")


def parse_key(text: str, source: str = "--set", whole: str | None = None) -> tuple[str, ...]:
    """A dotted key path → its parts (a part holding a dot is quoted)."""
    whole = text if whole is None else whole
    if not text.strip():
        raise _refuse(source, whole, "the key path before '=' is empty; write KEY.PATH=V1,V2,"
                      "... (e.g. phases.serve.load.peak_requests_per_s=20,40)")
    parts = []
    for part, quoted in _split(text, ".", source, whole):
        if not part:
            raise _refuse(source, whole, f"the key path {printable(text.strip())!r} has an empty "
                          "part (two dots in a row, or a dot at an end); parts are keys, names "
                          "of list items, or indexes")
        if not quoted and any(char in part for char in "=,"):
            raise _refuse(source, whole, f"the key part {part!r} holds '=' or ','; quote it")
        parts.append(part)
    return tuple(parts)


def format_key(parts: Sequence[str]) -> str:
    """Parts → the dotted key path (parts holding a special character quoted)."""
    return ".".join(f"'{part.replace(chr(39), chr(39) * 2)}'"
                    if _PATH_SPECIAL & set(part) or part != part.strip() else part
                    for part in parts)


def parse_value(text: str, quoted: bool = False) -> Value:
    """One value: a quoted one is text as written; an unquoted one is a plain YAML scalar."""
    if quoted:
        return text
    value = plain_scalar(text)
    assert value is None or isinstance(value, str | int | float | bool | dt.date)
    return value


def format_value(value: Value) -> str:
    """A value as ``--set`` text that :func:`parse_value` reads back as the same value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        text = repr(value)
        # YAML 1.1 reads a float only with a dot and a signed exponent (1.0e+20, not 1e+20)
        return text.replace("e", ".0e", 1) if "e" in text and "." not in text else text
    if isinstance(value, int | dt.date):
        return str(value) if not isinstance(value, dt.datetime) else value.isoformat(" ")
    plain = parse_value(value) == value and value == value.strip() and value and \
        not _PATH_SPECIAL & set(value) and value[0] not in "\"'"
    return value if plain else "'" + value.replace("'", "''") + "'"


def same_value(a: Value, b: Value) -> bool:
    """Equal and of the same type (1, 1.0 and true are three different values here)."""
    return type(a) is type(b) and a == b


def parse_set(text: str, source: str = "--set") -> Override:
    """``KEY.PATH=V1,V2,...`` → an :class:`Override`.

    Raises:
        InputError: no '=', an empty key path or key part, an empty value, an unclosed quote,
            a value given twice, more than :data:`MAX_VALUES` values; the message names the
            flag, the text and the rule.
    """
    key_text, sep, values_text = _split_once(text, source)
    if not sep:
        raise _refuse(source, text, "no '=': write KEY.PATH=V1,V2,... "
                      "(e.g. phases.serve.load.peak_requests_per_s=20,40,80)")
    parts = parse_key(key_text, source, text)
    if not values_text.strip():
        raise _refuse(source, text, f"no value after '=' for {format_key(parts)}; give one or "
                      "more values separated by commas (an empty text is written '')")
    pieces = _split(values_text, ",", source, text)
    if len(pieces) > MAX_VALUES:
        raise _refuse(source, text, f"{len(pieces)} values; at most {MAX_VALUES} per --set")
    values: list[Value] = []
    for number, (piece, quoted) in enumerate(pieces, start=1):
        if not piece and not quoted:
            raise _refuse(source, text, f"value {number} is empty (two commas in a row, or a "
                          "comma at an end); a value holding a comma is quoted: '…' or \"…\"")
        value = parse_value(piece, quoted)
        if any(same_value(value, seen) for seen in values):
            raise _refuse(source, text, f"the value {format_value(value)} is given twice")
        values.append(value)
    return Override(parts=parts, values=tuple(values), text=text, source=source)


def _split_once(text: str, source: str) -> tuple[str, str, str]:
    """``text`` at its first '=' outside a quoted key part."""
    index, part_start = 0, True
    while index < len(text):
        char = text[index]
        if char in "\"'" and part_start:
            index, _ = _quoted(text, index, source, text)  # to its closing quote
            part_start = False
        elif char == "=":
            return text[:index], "=", text[index + 1:]
        else:
            part_start = char == "." or (part_start and char in " \t")
        index += 1
    return text, "", ""


def _check_size(sizes: list[int], overrides: Sequence[Override]) -> None:
    """Refuse a product over :data:`MAX_VARIANTS` before building it."""
    count = math.prod(sizes)
    if count > MAX_VARIANTS:
        shown = " × ".join(f"{size:,}" for size in sizes)
        raise InputError(" ".join(override.origin() for override in overrides), "",
                         f"{shown} = {count:,} variants; at most {MAX_VARIANTS:,} per sweep")


def cartesian(overrides: Sequence[Override]) -> tuple[Variant, ...]:
    """Every combination of the overrides' values, the first override varying slowest.

    No override gives one variant: the scenario as written.

    Raises:
        InputError: the same key path in two overrides, or more than :data:`MAX_VARIANTS`.
    """
    seen: dict[tuple[str, ...], Override] = {}
    for override in overrides:
        if override.parts in seen:
            raise InputError(override.origin(), override.key, "this key path is already set by "
                             f"{seen[override.parts].origin()}; give each key once with all "
                             "its values (KEY=V1,V2)")
        seen[override.parts] = override
    _check_size([len(override.values) for override in overrides], overrides)
    keys = [override.key for override in overrides]
    origins = tuple(override.origin() for override in overrides)
    return tuple(Variant(settings=tuple(zip(keys, combo, strict=True)), origins=origins)
                 for combo in itertools.product(*(o.values for o in overrides)))


def crossed(listed: Sequence[Variant], overrides: Sequence[Override]) -> tuple[Variant, ...]:
    """Every listed variant combined with every point of the overrides' product, listed
    variants outer (a sweep file's variants and its grid, or its variants and ``--set``
    flags); each keeps its name, the overrides' settings follow its own.

    Raises:
        InputError: a key both in a listed variant and in an override, a key path in two
            overrides, or more than :data:`MAX_VARIANTS` variants.
    """
    _check_size([len(listed), *(len(override.values) for override in overrides)], overrides)
    for variant in listed:
        for override in overrides:
            for index, (key, _) in enumerate(variant.settings):
                if key == override.key:
                    raise InputError(override.origin(), "", f"{key} is also set by "
                                     f"{variant.origin_of(index)}; a key is either in a listed "
                                     "variant or swept")
    grid = cartesian(overrides)
    return tuple(Variant(settings=variant.settings + point.settings, name=variant.name,
                         origins=variant.origins + point.origins, named=variant.named)
                 for variant in listed for point in grid)
