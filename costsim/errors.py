"""The exception hierarchy. Only the CLI catches :class:`CostsimError` (message, exit code 2)."""

from __future__ import annotations

from collections.abc import Iterable


class CostsimError(Exception):
    """Base of every error caused by user input or data; the CLI turns it into exit code 2."""


class InputError(CostsimError, ValueError):
    """A value given by the user breaks a rule.

    The message names where the value came from (a file or a flag), the key path inside it,
    the rule and the value.
    """

    def __init__(self, source: str, key_path: str, problem: str) -> None:
        self.source = source
        self.key_path = key_path
        self.problem = problem
        super().__init__(str(self))

    def __str__(self) -> str:
        where = ": ".join(part for part in (self.source, self.key_path) if part)
        return f"{where}: {self.problem}" if where else self.problem


class ConfigError(InputError):
    """A model config (Hugging Face ``config.json``) is malformed or unsupported."""


class ScenarioError(InputError):
    """A scenario file is invalid."""


class CatalogError(CostsimError, LookupError):
    """An unknown name (model preset, GPU, cloud, region, ...) was asked for."""

    def __init__(self, kind: str, name: str, known: Iterable[str], source: str = "") -> None:
        self.kind = kind
        self.name = name
        self.suggestions = suggest(name, known)
        self.source = source
        super().__init__(str(self))

    def __str__(self) -> str:
        prefix = f"{self.source}: " if self.source else ""
        message = f"{prefix}unknown {self.kind} '{printable(self.name)}'"
        if self.suggestions:
            options = " or ".join(f"'{s}'" for s in self.suggestions)
            message += f"; did you mean {options}?"
        return message


class InfeasibleError(CostsimError):
    """No configuration satisfies the constraints (memory, deadline, SLO)."""


def printable(text: str) -> str:
    """``text`` with every character a terminal cannot show as itself (newlines, escape
    sequences, NUL, lone surrogates) written as its Python escape, so that a message naming a
    user's value stays one readable line."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii")
                   for ch in text)


def name_key(name: str) -> str:
    """Return the lookup key of a name: lower case, with spaces, '-' and '_' removed.

    Every catalog lookup (GPU aliases, presets, clouds) and every suggestion uses this one rule.
    """
    return "".join(ch for ch in name.lower() if ch not in " _-")


def suggest(name: str, known: Iterable[str], limit: int = 3) -> list[str]:
    """Return up to ``limit`` known names close to ``name`` (case, spaces, '-' and '_' ignored)."""
    import difflib  # only a misspelt name needs it; kept off the CLI's start-up path

    by_key: dict[str, str] = {}
    for candidate in known:
        by_key.setdefault(name_key(candidate), candidate)
    keys = difflib.get_close_matches(name_key(name), list(by_key), n=limit, cutoff=0.6)
    return [by_key[key] for key in keys]
