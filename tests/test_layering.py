"""Imports only point down (DESIGN.md §4), and each third-party library stays in its layer."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[1] / "costsim"

# DESIGN.md §4, the authoritative edge list. units and errors are open to every layer.
ALLOWED: dict[str, set[str]] = {
    "cli": {
        "scenario",
        "catalog",
        "memory",
        "perf",
        "sim",
        "optimize",
        "report",
        "sweep",
        "domain",
        "costsim",
    },
    "sweep": {"sim", "optimize", "scenario", "domain"},
    "report": {"sim", "optimize", "sweep", "domain"},
    "optimize": {"sim", "perf", "memory", "catalog", "domain"},
    "sim": {"perf", "memory", "catalog", "domain"},
    "perf": {"memory", "domain"},
    "memory": {"domain"},
    "catalog": {"domain"},
    "scenario": {"domain"},
    "domain": set(),
    "units": set(),
    "errors": set(),
    "costsim": set(),
    "__main__": {"cli"},
}
OPEN_TO_ALL = {"units", "errors"}

# Third-party libraries confined to one layer (DESIGN.md §4).
CONFINED: dict[str, set[str]] = {
    "simpy": {"sim"},
    "matplotlib": {"report"},
    "PIL": {"report"},
    "jinja2": {"report"},
    "openpyxl": {"report"},
    "yaml": {"scenario"},
    "pydantic": {"scenario"},
    "dask": {"sweep"},
    "distributed": {"sweep"},
    "pyarrow": {"sweep"},
    "scipy": {"optimize", "perf"},
}


def _layer_of(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    if parts[0] == "__init__":
        return "costsim"
    return parts[0]


def _imports(path: Path, source: str | None = None) -> list[tuple[str, int]]:
    """(module, line) of every import in ``path`` (or in ``source`` placed at ``path``)."""
    text = path.read_text(encoding="utf-8") if source is None else source
    tree = ast.parse(text, filename=str(path))
    package_parts = ("costsim", *path.relative_to(PACKAGE).parent.parts)
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative import: resolve against this module's package
                base = package_parts[: len(package_parts) - node.level + 1]
                module = ".".join((*base, node.module)) if node.module else ".".join(base)
            else:
                module = node.module or ""
            found.append((module, node.lineno))
    return found


MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_follow_the_layer_edges(path: Path) -> None:
    """A module imports only its own layer, the layers below it, units and errors."""
    layer = _layer_of(path)
    assert layer in ALLOWED, f"{path}: layer {layer!r} is not in DESIGN.md §4"
    bad = []
    for module, line in _imports(path):
        parts = module.split(".")
        if parts[0] == "costsim":
            target = parts[1] if len(parts) > 1 else "costsim"
            if target != layer and target not in ALLOWED[layer] | OPEN_TO_ALL:
                bad.append(f"line {line}: {layer} -> {module}")
        elif parts[0] in CONFINED and layer not in CONFINED[parts[0]]:
            bad.append(f"line {line}: {parts[0]} imported outside {sorted(CONFINED[parts[0]])}")
    assert not bad, f"{path.relative_to(PACKAGE)}: " + "; ".join(bad)


def test_every_layer_exists() -> None:
    """The package has a folder for each layer of DESIGN.md §4."""
    folders = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert {
        "cli",
        "sweep",
        "report",
        "optimize",
        "sim",
        "perf",
        "memory",
        "catalog",
        "scenario",
        "domain",
    } <= folders


def test_the_checker_sees_a_violation() -> None:
    """The import parser resolves absolute and relative imports (so the check can fail)."""
    source = "from costsim.perf import model\nfrom ..sim import run\nimport simpy\n"
    found = [module for module, _ in _imports(PACKAGE / "memory" / "example.py", source)]
    assert found == ["costsim.perf", "costsim.sim", "simpy"]
