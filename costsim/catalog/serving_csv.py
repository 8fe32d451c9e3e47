"""The serving profile CSV (DESIGN §12; docs/performance.md "Measured serving profiles"): one
row a measured point. Cells may be empty except ``model``, ``gpu``, ``prompt_tokens``,
``output_tokens`` and one of ``requests_per_s`` / ``output_tokens_per_s``. A p99 column
(``ttft_p99_s``, ``tpot_p99_s``) stands in for an empty p95 cell: a p99 is never below the p95,
so reading it as the p95 errs on the safe side (fewer requests per replica)."""

from __future__ import annotations

import csv
import io

from costsim.catalog.serving_draft import ServingDraft, number, whole
from costsim.domain.measurements import ServingFileContext
from costsim.errors import InputError, suggest

COLUMNS = ("model", "gpu", "engine", "precision", "quant", "tp", "prompt_tokens",
           "output_tokens", "concurrency", "request_rate", "requests_per_s",
           "output_tokens_per_s", "ttft_p50_s", "ttft_p95_s", "ttft_p99_s", "tpot_p50_s",
           "tpot_p95_s", "tpot_p99_s", "source")
REQUIRED = ("model", "gpu", "prompt_tokens", "output_tokens")
THROUGHPUT = ("requests_per_s", "output_tokens_per_s")
OFFLINE_RATES = ("", "inf", "infinity", "offline")


def read_serving_csv(text: str, file: str, context: ServingFileContext) -> list[ServingDraft]:
    """Every row of a serving profile CSV as a draft; ``context`` fills empty cells.

    Raises:
        InputError: a missing or unknown column, an empty required cell, a bad number (naming
            the file, the row as a spreadsheet numbers it and the column).
    """
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader)
    except StopIteration:
        raise InputError(file, "", "empty file: a serving profile CSV needs a header row "
                                   f"({', '.join(REQUIRED)}, ...)") from None
    names = [h.strip().lower() for h in header]
    for name in names:
        if name not in COLUMNS:
            hint = suggest(name, COLUMNS)
            extra = f"; did you mean {' or '.join(repr(h) for h in hint)}?" if hint else ""
            raise InputError(file, "header", f"unknown column {name!r}{extra} (columns: "
                                             f"{', '.join(COLUMNS)})")
    if len(set(names)) != len(names):
        raise InputError(file, "header", "a column is named twice")
    given = {"model": context.model, "gpu": context.gpu}
    missing = [c for c in REQUIRED if c not in names and given.get(c) is None]
    if missing:
        raise InputError(file, "header", f"missing required column(s) {', '.join(missing)}")
    if not any(c in names for c in THROUGHPUT):
        raise InputError(file, "header", "needs a requests_per_s or an output_tokens_per_s "
                                         "column (the achieved throughput)")
    drafts = []
    for line, cells in enumerate(reader, start=2):
        if not any(c.strip() for c in cells):
            continue  # a blank line
        if len(cells) != len(names):
            raise InputError(file, f"row {line}", f"has {len(cells)} cells, the header "
                                                  f"{len(names)}")
        drafts.append(_draft(dict(zip(names, (c.strip() for c in cells), strict=True)),
                             file, f"row {line}", context))
    if not drafts:
        raise InputError(file, "", "no measured rows below the header")
    return drafts


def _draft(row: dict[str, str], file: str, where: str,
           context: ServingFileContext) -> ServingDraft:
    def cell(key: str, fallback: str | int | None = None) -> str | None:
        value = row.get(key, "")
        return value if value else (None if fallback is None else str(fallback))

    for key in REQUIRED:
        fallback = {"model": context.model, "gpu": context.gpu}.get(key)
        if cell(key, fallback) is None:
            raise InputError(file, where, f"column {key} is required (empty cell)")
    if not any(cell(key) for key in THROUGHPUT):
        raise InputError(file, where, "needs requests_per_s or output_tokens_per_s (the "
                                      "achieved throughput; both cells empty)")
    rate_text = (cell("request_rate") or "").lower()
    rate = (None if rate_text in OFFLINE_RATES
            else number(rate_text, file, where, "request_rate", positive=True))

    def num(key: str) -> float | None:
        return number(cell(key), file, where, key, positive=True)

    def seconds(key: str) -> float | None:
        return number(cell(key), file, where, key)

    ttft95 = seconds("ttft_p95_s")
    tpot95 = seconds("tpot_p95_s")
    ttft99 = seconds("ttft_p99_s")
    tpot99 = seconds("tpot_p99_s")
    return ServingDraft(
        where=where, model=cell("model", context.model), gpu=cell("gpu", context.gpu),
        engine=cell("engine", context.engine), precision=cell("precision", context.precision),
        quant=cell("quant", context.quant),
        tp=whole(cell("tp", context.tp), file, where, "tp"),
        prompt_tokens=num("prompt_tokens"), output_tokens=num("output_tokens"),
        concurrency=whole(cell("concurrency"), file, where, "concurrency"),
        request_rate_per_s=rate, requests_per_s=num("requests_per_s"),
        output_tokens_per_s=num("output_tokens_per_s"),
        ttft_p50_s=seconds("ttft_p50_s"), ttft_p95_s=ttft95 if ttft95 is not None else ttft99,
        tpot_p50_s=seconds("tpot_p50_s"), tpot_p95_s=tpot95 if tpot95 is not None else tpot99,
        source=cell("source") or "")
