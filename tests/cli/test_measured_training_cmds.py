"""Measured training runs through the commands: ``estimate train --profile`` (basis,
profile_source), ``calibrate train`` (text and JSON), a scenario's ``measurements.training`` in
``costsim run`` (a measured half rate takes twice the GPU-hours), and bad files (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import Cli

RUN = ("--model", "llama-3-8b", "--gpu", "H100", "--tokens", "2e9")


def _predicted(cli: Cli, gpus: int) -> float:
    code, out, err = cli("estimate", "train", *RUN, "--gpus", str(gpus), "--json")
    assert code == 0, err
    return float(json.loads(out)["tokens_per_s"])


def _csv(tmp_path: Path, rows: list[str]) -> Path:
    path = tmp_path / "runs.csv"
    path.write_text("model,gpu,gpus,tokens_per_s,source\n" + "".join(r + "\n" for r in rows))
    return path


def test_estimate_train_profile_reports_basis_and_source(cli: Cli, tmp_path: Path) -> None:
    half = _predicted(cli, 8) / 2
    path = _csv(tmp_path, [f"llama-3-8b,NVIDIA H100 80GB HBM3,8,{half:.1f},bench 3"])
    code, out, err = cli("estimate", "train", *RUN, "--gpus", "8", "--profile", str(path),
                         "--json")
    assert code == 0, err
    payload = json.loads(out)
    assert payload["basis"] == "measured"
    assert payload["profile_source"] == f"{path} line 2 (bench 3)"
    assert payload["tokens_per_s"] == pytest.approx(half, rel=1e-6)
    assert payload["predicted_tokens_per_s"] == pytest.approx(2 * half, rel=1e-6)
    code, out, err = cli("estimate", "train", *RUN, "--gpus", "16", "--profile", str(path))
    assert code == 0, err
    assert f"predicted-adjusted from {path} line 2 (bench 3)" in out
    code, out, _ = cli("estimate", "train", *RUN, "--gpus", "8", "--json")
    assert json.loads(out)["basis"] == "predicted"
    assert json.loads(out)["profile_source"] is None


def test_estimate_train_profile_of_another_gpu_warns(cli: Cli, tmp_path: Path) -> None:
    path = _csv(tmp_path, ["llama-3-8b,A100-80GB,8,20000,"])
    code, out, err = cli("estimate", "train", *RUN, "--gpus", "8", "--profile", str(path),
                         "--json")
    assert code == 0, err
    payload = json.loads(out)
    assert payload["basis"] == "predicted"
    assert any("no measured run of llama-3-8b on H100" in w for w in payload["warnings"])


def _titan_log(tmp_path: Path) -> Path:
    lines = [f"[rank0]:[titan] 2025-03-02 10:00:{i:02d},412 - root - INFO - \x1b[31mstep: "
             f"{i:2}  \x1b[32mloss:  7.9876  \x1b[33mmemory: 61.02GiB(77.18%)  \x1b[34mtps: "
             f"{2100 if i == 1 else 6000:,}  \x1b[36mtflops: 366.00  \x1b[35mmfu: 37.01%\x1b[39m"
             for i in range(1, 11)]
    path = tmp_path / "titan.log"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_calibrate_train_json_and_text(cli: Cli, tmp_path: Path) -> None:
    predicted = _predicted(cli, 8)
    csv = _csv(tmp_path, [f"llama-3-8b,H100,8,{0.8 * predicted:.1f},"])
    code, out, err = cli("calibrate", "train", str(csv), "--json")
    assert code == 0, err
    payload = json.loads(out)
    (row,) = payload["points"]
    assert row["measured"]["tokens_per_s"] == pytest.approx(0.8 * predicted, rel=1e-6)
    assert row["predicted"]["tokens_per_s"] == pytest.approx(predicted, rel=1e-6)
    assert row["ratio"]["tokens_per_s"] == pytest.approx(0.8, rel=1e-6)
    assert row["ratio"]["mfu"] == pytest.approx(0.8, rel=1e-6)
    assert payload["summary"]["median_ratio"] == pytest.approx(0.8, rel=1e-6)
    code, out, err = cli("calibrate", "train", str(csv), str(_titan_log(tmp_path)), "--model",
                         "llama-3-8b", "--gpu", "H100", "--gpus", "8", "--seq-len", "8192")
    assert code == 0, err
    assert "pytorch-fsdp" in out
    assert "torchtitan log, median of 9 steps 2-10" in out
    assert out.strip().splitlines()[-1].startswith("Verdict: median measured/predicted")


@pytest.mark.parametrize(("argv", "fragment"), [
    (("calibrate", "train", "{log}"), "give --gpus"),
    (("calibrate", "train", "{log}", "--gpus", "8", "--gpu", "H100"), "give --model"),
    (("calibrate", "train", "{log}", "--gpus", "8", "--model", "llama-3-8b", "--gpu", "H1000"),
     "unknown GPU 'H1000'"),
    (("calibrate", "train", "{missing}"), "cannot read"),
    (("estimate", "train", *RUN, "--gpus", "8", "--profile", "{bad}"), "mfu: must be in (0, 1]"),
])
def test_bad_measured_input_exits_2_with_one_line(cli: Cli, tmp_path: Path,
                                                  argv: tuple[str, ...], fragment: str) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("model,gpu,gpus,seq_len,mfu\nllama-3-8b,H100,8,4096,45\n")
    files = {"log": str(_titan_log(tmp_path)), "missing": str(tmp_path / "nope.log"),
             "bad": str(bad)}
    code, out, err = cli(*(a.format(**files) for a in argv))
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert fragment in err


SCENARIO = """\
name: Measured training
start: 2027-01-01
horizon_months: 6
models:
  main: {{preset: llama-3-8b}}
{measurements}
phases:
  - {{name: train, kind: training, model: main, tokens: 2e9, framework: {framework}}}
plans:
  - name: on-demand
    use: {{train: {{gpu: H100, count: 8}}}}
"""


def _scenario(tmp_path: Path, name: str, measurements: str,
              framework: str = "megatron-lm") -> Path:
    path = tmp_path / name
    path.write_text(SCENARIO.format(measurements=measurements, framework=framework))
    return path


def _gpu_hours(cli: Cli, path: Path) -> tuple[float, dict[str, object]]:
    # the median of 100 replications: the model's runs draw its out-of-sample training error
    # (log-sd 0.83, costsim/data/allin_loss.csv), whose mean is exp(σ²/2) ≈ 1.4 × the median
    # and strays by tens of per cent over a handful of draws; the median is the steady figure's
    code, out, err = cli("run", str(path), "--replications", "100", "--workers", "1", "--json")
    assert code == 0, err
    plan = json.loads(out)["plans"][0]
    return float(plan["training_gpu_hours"]["p50"]), plan


@pytest.mark.usefixtures("no_charts")
def test_run_uses_a_measured_training_rate(cli: Cli, tmp_path: Path) -> None:
    half = _predicted(cli, 8) / 2
    _csv(tmp_path, [f"llama-3-8b,H100,8,{half:.1f},our cluster"])
    titan = _titan_log(tmp_path)
    model_hours, plain = _gpu_hours(cli, _scenario(tmp_path, "plain.yaml", ""))
    assert "training_rates" not in plain
    measured_hours, plan = _gpu_hours(cli, _scenario(
        tmp_path, "measured.yaml", "measurements: {training: [runs.csv]}"))
    # half the model's rate: about twice the GPU-hours (the model's runs also draw its
    # throughput error, a measured one does not)
    assert 1.7 < measured_hours / model_hours < 2.3
    (rate,) = plan["training_rates"]  # type: ignore[misc]
    assert rate["basis"] == "measured"
    assert rate["tokens_per_s"] == pytest.approx(half, rel=1e-6)
    assert "runs.csv line 2 (our cluster)" in rate["profile_source"]
    # a log given as a mapping: what it does not say comes from the entry (the model is the
    # scenario's own); a torchtitan run measures the pytorch-fsdp framework only
    measured = f"measurements: {{training: [{{path: {titan.name}, model: main, gpu: H100, " \
               "gpus: 8}]}"
    _, plan = _gpu_hours(cli, _scenario(tmp_path, "fsdp.yaml", measured, "pytorch-fsdp"))
    (rate,) = plan["training_rates"]  # type: ignore[misc]
    assert rate["basis"] == "measured"
    assert rate["tokens_per_s"] == pytest.approx(6000 * 8)
    _, plan = _gpu_hours(cli, _scenario(tmp_path, "megatron.yaml", measured))
    assert plan["training_rates"][0]["basis"] == "predicted"  # type: ignore[index]


def test_a_bad_training_file_in_a_scenario_exits_2_at_its_key(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "runs.csv").write_text("model,gpu,gpus,tokens_per_s\nllama-3-8b,H100,0,100\n")
    path = _scenario(tmp_path, "bad.yaml", "measurements: {training: [runs.csv]}")
    code, _, err = cli("validate", str(path))
    assert code == 2
    assert "measurements.training" in err
    assert "runs.csv:2" in err
    assert "gpus" in err
    path = _scenario(tmp_path, "log.yaml", f"measurements: {{training: [{{path: "
                     f"{_titan_log(tmp_path).name}, gpu: H100}}]}}")
    code, _, err = cli("validate", str(path))
    assert code == 2
    assert "give measurements.training.0.gpus" in err


@pytest.mark.parametrize(("command", "flag", "value", "message"), [
    ("train", "--gpu", "H999", "argument --gpu: unknown GPU 'H999'"),
    ("train", "--precision", "fp12", "argument --precision: unknown precision 'fp12'"),
    ("train", "--framework", "jax", "argument --framework: unknown framework 'jax'"),
    ("serve", "--gpu", "H999", "argument --gpu: unknown GPU 'H999'"),
])
def test_calibrate_refuses_a_bad_flag_even_when_the_file_does_not_need_it(
        cli: Cli, command: str, flag: str, value: str, message: str) -> None:
    """A flag that only fills what a file leaves out is still checked: a CSV that names its
    GPU, precision and framework would otherwise silently ignore a misspelt value."""
    sample = {"train": "docs/examples/training/runs.csv",
              "serve": "docs/examples/serving_profile.csv"}[command]
    path = Path(__file__).parents[2] / sample
    code, out, err = cli("calibrate", command, str(path), flag, value)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert message in err
