"""Request-length datasets of serving benchmarks: which lengths a measured figure was run with
(one fixed size, ShareGPT's conversations, or another varied-length set), and the shape of a
length distribution a benchmark replay draws from (issue 18, fifth serving round)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class DatasetKind(StrEnum):
    """How a benchmark chose its request lengths."""

    FIXED = "fixed"  # every request the stated size (random tokens, a fixed prompt)
    SHAREGPT = "sharegpt"  # prompts and reply lengths sampled from ShareGPT's conversations
    OTHER = "other"  # another varied-length set, named (``other:<name>``)


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestDataset:
    """The length dataset of a serving figure: ``fixed``, ``sharegpt`` or ``other:<name>``."""

    kind: DatasetKind
    name: str = ""

    @property
    def label(self) -> str:
        """The cell text this value is written as."""
        return f"other:{self.name}" if self.kind is DatasetKind.OTHER else self.kind.value

    @property
    def varied(self) -> bool:
        """Whether requests differ in length (a burst of them drains a tail)."""
        return self.kind is not DatasetKind.FIXED


FIXED_DATASET = RequestDataset(kind=DatasetKind.FIXED)


@dataclass(frozen=True, slots=True, kw_only=True)
class LengthDistribution:
    """The shape of a benchmark's prompt and output lengths, in tokens: exponential between
    the benchmark's filters (``min_tokens`` <= each length, prompt <= ``max_prompt_tokens``,
    prompt + output <= ``max_total_tokens``), its scale set per replay so that the mean equals
    the figure's stated mean."""

    dataset: DatasetKind
    min_tokens: int
    max_prompt_tokens: int
    max_total_tokens: int
    source: str
