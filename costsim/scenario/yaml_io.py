"""Read a scenario file's YAML safely, keeping the line of every key for error messages.

Refused before any value reaches the models: a file over :data:`MAX_SCENARIO_BYTES` (checked
on the bytes, before parsing), text that is not UTF-8 or holds control characters, YAML that
PyYAML's safe loader refuses (``!!python/object`` and every other non-standard tag), a key given
twice in one mapping (a silent last-one-wins would hide a typo), and alias expansion beyond
:data:`MAX_NODES` nodes (a "billion laughs" file stays small on disk but expands
exponentially).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from costsim.errors import ScenarioError, printable

# DESIGN §8: a scenario is a hand-written file; the largest shipped one is ~10 KB.
MAX_SCENARIO_BYTES = 1024 * 1024
# Nodes after alias expansion. A real scenario has a few hundred; 100,000 leaves room for a
# generated one with thousands of plans, and refuses a billion-laughs file in milliseconds.
MAX_NODES = 100_000

KeyPath = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class YamlDocument:
    """The parsed document and the 1-based line of each key path (list items by index)."""

    data: Any
    lines: dict[KeyPath, int]

    def line_of(self, path: KeyPath) -> int:
        """The line of ``path``, or of its closest ancestor the file has (1 at worst)."""
        for end in range(len(path), -1, -1):
            line = self.lines.get(path[:end])
            if line is not None:
                return line
        return 1


def read_scenario_bytes(path: Path) -> bytes:
    """The file's bytes, refused over :data:`MAX_SCENARIO_BYTES` before anything parses them."""
    name = str(path)
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_SCENARIO_BYTES + 1)
    except OSError as exc:
        raise ScenarioError(name, "", f"cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_SCENARIO_BYTES:
        raise ScenarioError(name, "", f"file is over the limit of {MAX_SCENARIO_BYTES:,} bytes "
                            "(1 MiB); a scenario is a hand-written file")
    return data


def decode_scenario_text(data: bytes, name: str) -> str:
    """UTF-8 text without control characters (binary junk is refused here)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ScenarioError(f"{name}:{line}", "", f"not UTF-8 text (byte 0x{data[exc.start]:02x}"
                            "); save the file as UTF-8") from None
    for index, char in enumerate(text):
        if char == "\x00" or (ord(char) < 32 and char not in "\t\n\r"):
            line = text.count("\n", 0, index) + 1
            raise ScenarioError(f"{name}:{line}", "", f"binary data (control character "
                                f"{char!r}); a scenario is a YAML text file")
    return text


class _Loader(yaml.SafeLoader):
    """The safe loader, but an impossible date (2027-02-30) or an integer too long for Python
    to convert (over 4,300 digits) stays text, so that validation reports it at its key and
    line instead of the loader failing without either."""

    def construct_yaml_timestamp(self, node: yaml.ScalarNode) -> Any:
        try:
            return super().construct_yaml_timestamp(node)
        except ValueError:
            return self.construct_scalar(node)

    def construct_yaml_int(self, node: yaml.ScalarNode) -> Any:
        try:
            return super().construct_yaml_int(node)
        except ValueError:
            return self.construct_scalar(node)


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _Loader.construct_yaml_timestamp)
_Loader.add_constructor("tag:yaml.org,2002:int", _Loader.construct_yaml_int)


def plain_scalar(text: str) -> Any:
    """``text`` read as an unquoted scalar in a scenario file is (``20`` → 20, ``true`` →
    True, ``2027-03-01`` → a date, ``null`` → None, anything else the text itself), with the
    same loader and the same leniency (an impossible date stays text)."""
    loader = _Loader("")
    try:
        tag = loader.resolve(yaml.ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
        return loader.construct_object(yaml.ScalarNode(tag, text), deep=True)
    except (ValueError, OverflowError, TypeError, yaml.YAMLError):
        return text
    finally:
        loader.dispose()


def parse_yaml(text: str, name: str) -> YamlDocument:
    """Parse one YAML document with the safe loader; errors name the file and line."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise ScenarioError(f"{name}:1", "", "the file is empty; expected a mapping with "
                                "name, start, horizon_months, models, phases and plans")
        lines: dict[KeyPath, int] = {}
        _index(node, (), lines, [0], name)
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{name}:{mark.line + 1}" if mark is not None else name
        problem = " ".join(part for part in (exc.context, exc.problem) if part)
        if "python/" in problem:
            problem += " (Python object tags are refused: scenario files are plain data)"
        raise ScenarioError(where, "", f"not valid YAML: {printable(problem)}") from None
    except yaml.YAMLError as exc:
        raise ScenarioError(name, "", f"not valid YAML: {printable(str(exc))}") from None
    except RecursionError:
        raise ScenarioError(name, "", "not valid YAML: nested too deeply") from None
    except ScenarioError:  # a duplicate key or too many nodes, already located
        raise
    except (ValueError, OverflowError, TypeError) as exc:  # a scalar PyYAML cannot build
        raise ScenarioError(name, "", f"not valid YAML: {printable(str(exc))}") from None
    finally:
        loader.dispose()
    return YamlDocument(data=data, lines=lines)


def _index(node: yaml.Node, path: KeyPath, lines: dict[KeyPath, int], count: list[int],
           name: str) -> None:
    """Record each key's line, refuse duplicate keys, and bound the expanded node count."""
    count[0] += 1
    if count[0] > MAX_NODES:
        raise ScenarioError(f"{name}:{node.start_mark.line + 1}", "",
                            f"expands to more than {MAX_NODES:,} YAML nodes (aliases "
                            "multiplying one another?); refused")
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen: dict[object, int] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            if key is None:
                raise ScenarioError(f"{name}:{key_node.start_mark.line + 1}",
                                    ".".join(map(str, path)), "a key must be a plain name")
            if key in seen:
                raise ScenarioError(f"{name}:{key_node.start_mark.line + 1}",
                                    ".".join((*map(str, path), key)),
                                    f"duplicate key (first given on line {seen[key]})")
            seen[key] = key_node.start_mark.line + 1
            lines.setdefault((*path, key), key_node.start_mark.line + 1)
            _index(value_node, (*path, key), lines, count, name)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _index(item, (*path, index), lines, count, name)

