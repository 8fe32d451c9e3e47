"""The small serving scenario several simulator and optimizer tests build: one month of one
serving phase of Llama-3-8B (1,000 prompt + 200 output tokens a request) under the plans a test
names, and an offline benchmark of it on an H100 to measure its capacity (DESIGN §12)."""

from __future__ import annotations

from pathlib import Path

H100_PLAN = "  - name: h100\n    use: {serve: {gpu: H100}}\n"


def serving_scenario(name: str, *, peak_requests_per_s: float, diurnal: bool,
                     plans: str = H100_PLAN, extra: str = "") -> str:
    """The scenario's YAML: ``plans`` is the `plans:` list's text, ``extra`` top-level keys."""
    return (f"name: {name}\n"
            "start: 2027-01-01\n"
            "horizon_months: 1\n"
            "models:\n"
            "  chat: {preset: llama-3-8b}\n"
            "phases:\n"
            "  - {name: serve, kind: serving, duration_months: 1, model: chat,\n"
            f"     load: {{peak_requests_per_s: {peak_requests_per_s:g}, "
            f"diurnal: {'true' if diurnal else 'false'}}},\n"
            "     requests: {prompt_tokens: 1000, output_tokens: 200}}\n"
            f"plans:\n{plans}{extra}\n")


def measured_h100(folder: Path, requests_per_s: float) -> str:
    """Write ``folder``/bench.csv, an offline benchmark of the phase's requests at
    ``requests_per_s`` (a benchmark file never names its GPU), and return the `measurements:`
    block that reads it on an H100."""
    (folder / "bench.csv").write_text(
        "model,prompt_tokens,output_tokens,request_rate,requests_per_s,source\n"
        f"llama-3-8b,1000,200,inf,{requests_per_s},offline run\n")
    return "measurements:\n  serving:\n    - {path: bench.csv, gpu: NVIDIA H100 80GB HBM3}\n"
