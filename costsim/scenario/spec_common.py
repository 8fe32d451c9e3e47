"""Building blocks of the scenario file's pydantic models: numbers, names, distributions.

Every model forbids unknown keys and non-finite numbers; numbers accept YAML numbers and
numeric strings (PyYAML reads ``5e7``, an exponent without a sign, as a string; ``1_000`` as a
number), never booleans. Ranges live on each field (``ge``/``le``) so the JSON Schema and
``scenarios/README.md`` state them.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    model_validator,
)
from pydantic_core import PydanticCustomError

from costsim.errors import suggest

# A plain decimal or exponent number, optionally signed, with YAML 1.1's digit separators.
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _number(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError(f"expected a number, got {str(value).lower()}")
    if isinstance(value, str):
        text = value.strip().replace("_", "")
        if not _NUMBER.fullmatch(text):
            raise ValueError(f"expected a number, got {value!r}")
        number = float(text)
        return int(number) if number.is_integer() and abs(number) < 2**63 else number
    return value


def _names(value: Any) -> Any:
    """``after: train`` means ``after: [train]``."""
    return [value] if isinstance(value, str) else value


def _term(value: Any) -> Any:
    """``term: 1`` and ``term: 1y`` are the same term."""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value}y"
    return value.strip().lower() if isinstance(value, str) else value


def _date(value: Any) -> Any:
    """A date as YYYY-MM-DD (YAML gives a date object; a string must have that exact form)."""
    if isinstance(value, dt.datetime):
        raise ValueError(f"expected a date YYYY-MM-DD without a time, got {value}")
    if isinstance(value, str) and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value.strip()):
        raise ValueError(f"expected a date YYYY-MM-DD, got {value!r}")
    return value


# The JSON Schema shows these as numbers with their ranges; load.json_schema adds the string form.
Number = Annotated[float, BeforeValidator(_number)]
Whole = Annotated[int, BeforeValidator(_number)]
NUMBER_PATTERN = r"^\s*[+-]?(\d[\d_]*\.?[\d_]*|\.\d[\d_]*)([eE][+-]?\d+)?\s*$"
def _printable(value: str) -> str:
    """A name (a plan, phase, model, cloud, GPU, the scenario's) is printable text on one line:
    reports print it in table cells and CSV rows, where a line break, a tab or a control
    character (an escape sequence, a right-to-left override) would break the row or hide what
    the text says."""
    if not value.isprintable():
        bad = next(char for char in value if not char.isprintable())
        what = {"\n": "a line break", "\r": "a line break", "\t": "a tab"}.get(
            bad, f"the non-printing character U+{ord(bad):04X}")
        raise ValueError(f"must be printable text on one line, without line breaks or tabs; "
                         f"{value!r} has {what}")
    return value


Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200),
                 AfterValidator(_printable)]
Names = Annotated[list[Name], BeforeValidator(_names, json_schema_input_type=Name | list[Name]),
                  Field(max_length=1000)]
Term = Annotated[Literal["1y", "3y"],
                 BeforeValidator(_term, json_schema_input_type=Literal["1y", "3y", 1, 3])]
Date = Annotated[dt.date, BeforeValidator(_date, json_schema_input_type=dt.date)]


class Spec(BaseModel):
    """Base of every scenario-file model: unknown keys are errors, numbers are finite."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False,
                              str_strip_whitespace=True, validate_default=False)

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        """An unknown key is an error naming the key, with "did you mean" (extra='forbid'
        alone says neither)."""
        if isinstance(data, dict):
            known = list(cls.model_fields)
            for key in data:
                if key not in cls.model_fields:
                    hint = suggest(str(key), known)
                    text = f"; did you mean {' or '.join(repr(h) for h in hint)}?" if hint else (
                        f" (known: {', '.join(known)})")
                    raise PydanticCustomError("unknown_key", "unknown key{hint}",
                                              {"key": str(key), "hint": text})
        return data


# -- distributions (the `uncertainty:` block and a job's size) -----------------------------------
# The domain (costsim/domain/uncertainty.py) checks each family's own rules; these bounds only
# keep the numbers in what a planner would write.
BIG = 1e12


class FixedSpec(Spec):
    """No uncertainty: always `value` (a plain number means the same)."""

    dist: Literal["fixed"] = Field(description="the family")
    value: Number = Field(ge=-BIG, le=BIG, description="the value")


class NormalSpec(Spec):
    """Normal(mean, sd), clipped to [low, high] when given."""

    dist: Literal["normal"] = Field(description="the family")
    mean: Number = Field(ge=-BIG, le=BIG, description="mean")
    sd: Number = Field(ge=0, le=BIG, description="standard deviation")
    low: Number | None = Field(None, ge=-BIG, le=BIG, description="clip below (none: no clip)")
    high: Number | None = Field(None, ge=-BIG, le=BIG, description="clip above (none: no clip)")


class LogNormalSpec(Spec):
    """A multiplicative factor median·exp(sigma·Z): an estimate's error of about ±sigma."""

    dist: Literal["lognormal"] = Field(description="the family")
    sigma: Number = Field(ge=0, le=3, description="log-space standard deviation")
    median: Number = Field(1.0, gt=0, le=BIG, description="median")


class UniformSpec(Spec):
    """Uniform on [low, high]."""

    dist: Literal["uniform"] = Field(description="the family")
    low: Number = Field(ge=-BIG, le=BIG, description="lowest value")
    high: Number = Field(ge=-BIG, le=BIG, description="highest value")


class TriangularSpec(Spec):
    """Triangular(low, mode, high): at least, most likely, at most."""

    dist: Literal["triangular"] = Field(description="the family")
    low: Number = Field(ge=-BIG, le=BIG, description="lowest value")
    mode: Number = Field(ge=-BIG, le=BIG, description="most likely value")
    high: Number = Field(ge=-BIG, le=BIG, description="highest value")


def _number_as_fixed(value: Any) -> Any:
    """A plain number (or numeric string) is a fixed distribution."""
    if isinstance(value, dict | bool):
        return value
    try:
        return {"dist": "fixed", "value": _number(value)}
    except ValueError:
        return value


DistSpec = Annotated[
    FixedSpec | NormalSpec | LogNormalSpec | UniformSpec | TriangularSpec,
    Field(discriminator="dist"),
    BeforeValidator(_number_as_fixed, json_schema_input_type=(
        float | FixedSpec | NormalSpec | LogNormalSpec | UniformSpec | TriangularSpec)),
]
