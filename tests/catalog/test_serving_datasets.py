"""The optional ``dataset`` column of the published serving tables and the shipped length
distributions (costsim/catalog/serving_datasets.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsim.catalog.serving_datasets import (
    length_distribution,
    parse_dataset,
    read_serving_rows,
)
from costsim.domain.request_lengths import DatasetKind
from costsim.errors import InputError

HEADER = "id,kind,model,prompt_tokens,output_tokens,concurrency,figure,notes"
ROWS = ('T1,max-throughput,mistral-7b,230,223,320,1591.4,"ShareGPT, 320 prompts"',
        "T2,batch1-decode,llama-2-7b,24,200,1,46.4,fixed prompts")


def _write(tmp_path: Path, header: str, rows: tuple[str, ...]) -> Path:
    path = tmp_path / "serving.csv"
    path.write_text("\n".join((header, *rows)) + "\n", encoding="utf-8")
    return path


def test_a_file_without_the_column_reads_as_fixed(tmp_path: Path) -> None:
    rows = read_serving_rows(_write(tmp_path, HEADER, ROWS))
    assert [row["dataset"] for row in rows] == ["fixed", "fixed"]
    assert rows[0]["notes"] == "ShareGPT, 320 prompts"


def test_a_file_with_the_column_keeps_each_value(tmp_path: Path) -> None:
    rows = read_serving_rows(_write(tmp_path, HEADER + ",dataset",
                                    (ROWS[0] + ",sharegpt", ROWS[1] + ",",
                                     ROWS[1].replace("T2", "T3") + ",other:llmperf")))
    assert [row["dataset"] for row in rows] == ["sharegpt", "fixed", "other:llmperf"]


@pytest.mark.parametrize("value", ["ShareGPT-ish", "other:", "other: x", "random", "sharegpt2"])
def test_a_bad_value_names_file_row_column_rule_and_value(tmp_path: Path, value: str) -> None:
    path = _write(tmp_path, HEADER + ",dataset", (ROWS[0] + ",sharegpt", ROWS[1] + f",{value}"))
    with pytest.raises(InputError) as caught:
        read_serving_rows(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: row 3, column dataset: must be 'fixed', 'sharegpt' or "
                              "'other:<name>'")
    assert message.endswith(f"got {value.strip()!r}")
    assert "\n" not in message


def test_a_row_after_a_multi_line_cell_is_numbered_as_a_spreadsheet_does(tmp_path: Path) -> None:
    path = _write(tmp_path, HEADER + ",dataset",
                  ('T1,max-throughput,mistral-7b,230,223,320,1591.4,"two\nlines",sharegpt',
                   ROWS[1] + ",bogus"))
    with pytest.raises(InputError, match=r": row 4, column dataset: "):
        read_serving_rows(path)


def test_parse_dataset_values() -> None:
    assert parse_dataset(" sharegpt ", file="f", row=2).kind is DatasetKind.SHAREGPT
    other = parse_dataset("other:lmsys-chat-1m", file="f", row=2)
    assert (other.kind, other.name, other.label) == (DatasetKind.OTHER, "lmsys-chat-1m",
                                                     "other:lmsys-chat-1m")
    assert not parse_dataset("", file="f", row=2).varied
    assert other.varied


def test_the_sharegpt_distribution_is_shipped_with_its_source() -> None:
    dist = length_distribution(DatasetKind.SHAREGPT)
    # vLLM's and SGLang's sample_sharegpt_requests filters
    assert (dist.min_tokens, dist.max_prompt_tokens, dist.max_total_tokens) == (4, 1024, 2048)
    assert "2309.06180" in dist.source
    assert "benchmark_serving.py" in dist.source
