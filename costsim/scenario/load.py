"""Load a scenario file: bytes → YAML → validated models → domain objects, or one error line.

Every error is a :class:`~costsim.errors.ScenarioError` whose source is ``FILE:LINE`` and whose
key path is the file's (``plans[1].use.serve.gpu``), so the CLI prints one line naming the file,
line, key path, rule and value. One pipeline, :func:`load_document`, validates a file as
written, a mapping (:func:`load_mapping`) and a sweep variant (``overrides.load_variant``, whose
errors name the ``--set`` that made the edit instead of a line).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from costsim.domain.scenario import Scenario
from costsim.errors import ScenarioError, printable, suggest
from costsim.scenario.build import Builder, BuildError, KnownNames
from costsim.scenario.resolved import resolved_scenario
from costsim.scenario.spec import ScenarioSpec
from costsim.scenario.spec_common import NUMBER_PATTERN
from costsim.scenario.variant import Variant
from costsim.scenario.yaml_io import (
    KeyPath,
    YamlDocument,
    decode_scenario_text,
    parse_yaml,
    read_scenario_bytes,
)

# Loc entries pydantic adds that are not keys of the file (union tags, model names).
_NOT_KEYS = re.compile(r"^(model|generic|one|buckets|entry|fleet|experiments|training|serving|"
                       r"reservation|savings-plan|capacity-block|"
                       r"fixed|normal|lognormal|uniform|triangular|function-.*|[A-Z]\w*|"
                       r"\[key\])$")  # [key]: the error is about a mapping's key itself


# The values of the tag keys of tagged objects, for "needs 'kind': one of ...".
_TAGS = {"kind": ("experiments", "training", "serving"),
         "dist": ("fixed", "normal", "lognormal", "uniform", "triangular")}


@dataclass(frozen=True, slots=True)
class LoadedScenario:
    """A validated scenario with what a report needs to cite it."""

    scenario: Scenario
    path: Path
    sha256: str
    resolved: dict[str, Any]
    price_file: Path | None
    # (path, SHA-256 of its bytes) of every file the scenario reads besides itself (arch
    # configs, the price file), sorted: a sweep's cache keys on them
    referenced_sha256: tuple[tuple[str, str], ...] = ()
    # the file as its author wrote it, every default filled in, in the file's own keys
    # (plans[].use.<phase>, prices.overrides[]): `diff` names changed inputs by these paths
    as_written: dict[str, Any] = field(default_factory=dict)
    # the sweep variant applied to the file (none: the file as written)
    variant: Variant | None = None

    @property
    def inputs(self) -> dict[str, Any]:
        """What a run rests on, for ``summary.json``'s ``inputs``: the resolved scenario, and
        the file as written under ``scenario_file``."""
        return {**self.resolved, "scenario_file": self.as_written}


def display_path(path: KeyPath) -> str:
    """``("plans", 1, "use", "serve")`` → ``plans[1].use.serve``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _file_path(doc: YamlDocument, loc: tuple[Any, ...]) -> KeyPath:
    """The part of a pydantic location that names keys of the file (tags skipped)."""
    node: Any = doc.data
    path: list[str | int] = []
    for part in loc:
        if (isinstance(node, dict) and part in node) or (
                isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)):
            node = node[part]
            path.append(part)
        elif isinstance(part, str) and _NOT_KEYS.match(part):
            continue
        else:
            path.append(part)  # a missing key: the error is about the mapping that lacks it
            break
    return tuple(path)


def _value(value: Any) -> str:
    if isinstance(value, dict | list):
        return ""
    text = printable(repr(value))
    return f", got {text[:60]}{'...' if len(text) > 60 else ''}"


def _problem(error: Any) -> tuple[KeyPath, str]:
    """The rule an error breaks, in the file's words, and any key the rule names."""
    kind, ctx, value = error["type"], error.get("ctx") or {}, error.get("input")
    if kind == "unknown_key":
        return (ctx["key"],), f"unknown key{ctx['hint']}"
    if kind == "missing":
        return (), "missing required key"
    if kind == "union_tag_not_found":
        tag = str(ctx.get("discriminator", "kind")).strip("'")
        return (), f"needs '{tag}': one of {', '.join(_TAGS.get(tag, ('see the key reference',)))}"
    if kind in ("union_tag_invalid", "enum", "literal_error"):
        expected = re.findall(r"'([^']*)'", str(ctx.get("expected_tags") or
                                                   ctx.get("expected", "")))
        got = value if kind != "union_tag_invalid" else ctx.get("tag")
        hint = suggest(str(got), expected)
        extra = f"; did you mean {' or '.join(repr(h) for h in hint)}?" if hint else ""
        return (), f"must be one of {', '.join(expected)}, got {printable(repr(got))}{extra}"
    message = str(error["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    message = message.replace("Input should be", "must be").replace("input should be", "must be")
    message = re.sub(r"a valid dictionary( or (instance of \w+|object to extract fields from))?",
                     "a mapping of keys", message)
    message = re.sub(r"(List|Dictionary) should have at least (\d+) items? after validation, "
                     r"not \d+", r"needs at least \2 entry", message)
    message = re.sub(r"(List|Dictionary) should have at most (\d+) items? after validation, "
                     r"not (\d+)", r"takes at most \2 entries, got \3", message)
    if kind in ("value_error", "assertion_error") or "got" in message:
        return (), message
    return (), message + _value(value)


def from_validation(doc: YamlDocument, where: Locate, exc: ValidationError) -> ScenarioError:
    """The first (by line) of pydantic's errors about ``doc``, in the file's words."""
    found = []
    for error in exc.errors(include_url=False):
        extra, problem = _problem(error)
        path = (*_file_path(doc, tuple(error["loc"])), *extra)
        found.append((doc.line_of(path), path, problem))
    _, path, problem = min(found, key=lambda item: item[0])
    return ScenarioError(where(path), display_path(path), problem)


def _domain_path(doc: YamlDocument, base: KeyPath, key: str) -> KeyPath:
    """A domain key path (``plans.spot.use.train.count``: list items by name) in file terms."""
    node: Any = doc.data
    for part in base:
        if isinstance(node, dict):
            node = node.get(part)
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
        else:
            node = None
    path = list(base)
    for part in [p for p in key.split(".") if p]:
        if isinstance(node, dict) and part in node:
            node = node[part]
            path.append(part)
        elif isinstance(node, list):
            index = next((i for i, item in enumerate(node) if isinstance(item, dict)
                          and str(item.get("name")) == part), None)
            if index is None and part.isdigit() and int(part) < len(node):
                index = int(part)
            if index is None:
                continue
            node = node[index]
            path.append(index)
        elif path and path[-1] == part:
            continue
    return tuple(path)


# Where an error at a key path of the mapping is reported: ``FILE:LINE`` for a file as written.
Locate = Callable[[KeyPath], str]


def read_document(path: Path) -> tuple[bytes, YamlDocument]:
    """The scenario file's bytes and its parsed YAML, which must be a mapping.

    Raises:
        ScenarioError: unreadable, too big, not UTF-8 text, not YAML, or not a mapping.
    """
    name = str(path)
    data = read_scenario_bytes(path)
    doc = parse_yaml(decode_scenario_text(data, name), name)
    if not isinstance(doc.data, dict):
        raise ScenarioError(f"{name}:1", "", "expected a mapping of keys (name, start, "
                            f"horizon_months, models, phases, plans), got "
                            f"{type(doc.data).__name__}")
    return data, doc


def load_scenario(path: Path, names: KnownNames) -> LoadedScenario:
    """Read, validate and build the scenario in ``path``.

    Raises:
        ScenarioError: the first problem, as ``FILE:LINE: key.path: rule, got value``.
    """
    data, doc = read_document(path)
    return load_document(doc, path, names, sha256=hashlib.sha256(data).hexdigest())


def load_mapping(data: Mapping[str, Any], path: Path, names: KnownNames) -> LoadedScenario:
    """Validate and build a scenario held as a mapping (YAML's types) exactly as if it were
    the file ``path``: relative paths resolve from ``path``'s folder and errors name
    ``path``; ``sha256`` is that of the mapping's canonical JSON (there are no bytes)."""
    canonical = json.dumps(data, sort_keys=True, default=str, ensure_ascii=False)
    return load_document(YamlDocument(data=dict(data), lines={}), path, names,
                         sha256=hashlib.sha256(canonical.encode()).hexdigest())


def load_document(doc: YamlDocument, path: Path, names: KnownNames, *, sha256: str,
                  locate: Locate | None = None, variant: Variant | None = None
                  ) -> LoadedScenario:
    """Validate and build the parsed document of scenario file ``path`` (the one pipeline
    of files, mappings and sweep variants).

    ``locate`` names the source of an error at a key path (default ``FILE:LINE``).

    Raises:
        ScenarioError: the first problem: ``SOURCE: key.path: rule, got value``.
    """
    name = str(path)
    where = locate or (lambda key: f"{name}:{doc.line_of(key)}" if doc.lines else name)
    try:
        spec = ScenarioSpec.model_validate(doc.data)
    except ValidationError as exc:
        raise from_validation(doc, where, exc) from None
    builder = Builder(names, path.parent,
                      lambda key: f"{path.name}:{doc.line_of(key)} {display_path(key)}")
    try:
        scenario = builder.scenario(spec)
    except BuildError as exc:
        # a domain key names the whole path (prices.gpu_price_change_pct.H100) or only the
        # key inside the object being built (count): take whichever reaches deeper
        # or a path below that object (fleet.1.traffic)
        key = max(_domain_path(doc, (), exc.domain_key),
                  _domain_path(doc, exc.path, exc.domain_key.rsplit(".", 1)[-1]),
                  _domain_path(doc, exc.path, exc.domain_key), key=len)
        raise ScenarioError(where(key), display_path(key), exc.problem) from None
    referenced = tuple((str(file), _file_sha256(file, name))
                       for file in sorted(builder.referenced))
    return LoadedScenario(scenario=scenario, path=path, sha256=sha256,
                          resolved=resolved_scenario(scenario), price_file=builder.price_file,
                          referenced_sha256=referenced, variant=variant,
                          as_written=_without_default_kind(spec.model_dump(
                              mode="json", by_alias=True,
                              # a file without servers, quotas or a currency reads as it
                              # always did
                              exclude={key for key in ("servers", "quotas", "currency",
                                                       "fx_rate_per_usd")
                                       if not getattr(spec, key)} or None)))


def _without_default_kind(written: dict[str, Any]) -> dict[str, Any]:
    """``written`` without ``kind: reservation`` on commitments (the default kind): a file
    of reservations reads as it always did."""
    for plan in written.get("plans", ()):
        for commitment in plan.get("commitments", ()):
            if commitment.get("kind") == "reservation":
                del commitment["kind"]
    return written


def _file_sha256(file: Path, name: str) -> str:
    try:
        with file.open("rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError as exc:
        raise ScenarioError(name, "", f"cannot read {file}: {exc.strerror or exc}") from None


_BOUNDS = {"ge": "minimum", "le": "maximum", "gt": "exclusiveMinimum", "lt": "exclusiveMaximum"}


def _numeric_strings(node: Any) -> Any:
    """Every number in the schema also accepts its string form (``5e7``), as the loader does."""
    if isinstance(node, list):
        return [_numeric_strings(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _numeric_strings(value) for key, value in node.items()}
    if out.get("type") in ("number", "integer"):
        # a bound on an optional number comes out in pydantic's spelling: use JSON Schema's
        for mine, theirs in _BOUNDS.items():
            if mine in out:
                out[theirs] = out.pop(mine)
        number = {k: v for k, v in out.items() if k not in ("title", "description", "default")}
        rest = {k: v for k, v in out.items() if k in ("title", "description", "default")}
        return {**rest, "anyOf": [number, {"type": "string", "pattern": NUMBER_PATTERN}]}
    return out


def json_schema() -> dict[str, Any]:
    """The JSON Schema of scenario files (``costsim schema``), for editors' autocompletion."""
    schema: dict[str, Any] = _numeric_strings(ScenarioSpec.model_json_schema(mode="validation"))
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "costsim scenario"
    return schema
