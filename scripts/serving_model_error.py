"""The serving model's error out of sample: measured / predicted on the four blind held-out sets
as each was rated, and the log-sd the simulator draws for predicted serving capacity.

Each held-out set was rated once, by the model at its rating commit, on rows that model had not
seen (docs/performance.md §4): validation/heldout at 032b9d9, validation/heldout2 at a9f9fba,
validation/heldout3 at 32a49c4, validation/heldout4 at 8d146d5 (its printed rating is kept in
validation/heldout4/rating_8d146d5.txt). Their per-row ratios are reproduced by running the rating
commit's own predictors (``scripts.published_table.check_serving``, what that commit's
``scripts/validation_table.py --heldout`` prints) in a checkout of that commit:

    git worktree add --detach /tmp/rate-032b9d9 032b9d9
    PYTHONPATH=/tmp/rate-032b9d9 python scripts/serving_model_error.py --rate \\
        --checkout /tmp/rate-032b9d9 --set heldout --commit 032b9d9     # CSV rows on stdout

and saved in ``costsim/data/serving_model_error.csv`` (ratios only: heldout/'s figures come
from sources issue 18 reserves and stay out of costsim/data). From that file:

    python scripts/serving_model_error.py            # per-row table, per-set figures, the value
    python scripts/serving_model_error.py --write    # write serving_error_sigma into
                                                     # costsim/data/allin_loss.csv
    python scripts/serving_model_error.py --check    # exit 1 when the data file differs

The estimator (:func:`serving_error_sigma`) was written down before any ratio was computed
(this file's first commit holds the rule and no data):

* **Rows:** every row a rating rated (a ratio and a tolerance) except ``card-ratio`` rows, which
  divide two other rows' predictions (not a capacity, and their errors are those rows').
* **Statistic:** x = ln(measured / predicted); σ = √(weighted mean of x²): the RMS about 0,
  not about the mean, so the bias a new prediction carries is part of the error (the simulator
  keeps the median at 1, see below).
* **Weights:** each source table of a set (its ``group`` column: rows that share a benchmark,
  its harness and its setup) has weight 1, shared equally by its rows. The rows of one table
  err together (one engine version, one harness, one workload shape); a buyer's deployment is
  one new such setup, so the setups, not the rows, are the independent draws.
* **One σ for every kind** (batch-1 decode, maximum throughput, latency at a rate): a replica's
  capacity at the SLO (:mod:`costsim.sim.serving_prep`) is one figure in which either regime
  may bind, and the simulator carries no kind per capacity; the per-kind figures are printed
  for information, not used.
* **Floor:** σ ≥ ``throughput_error_sigma`` (0.111, the model's error on its own rows).
* **No bias correction of the median:** after each rating the model was changed on what the
  set showed (heldout's gpt-fast rows moved with the int8/int4 kernel factor; heldout2's rows
  became fit/check rows SP63-SP87), so a past set's mean is not the current model's bias; and
  the sign of the bias differs by kind and card (GDDR batch-1 decode pessimistic, continuous
  batching optimistic), so one factor would mis-centre one to centre the other. A median
  correction would be a fit on seen data that only a fourth set could check.

Printed for information (not the default): the per-row unweighted RMS, the mean of x (the
bias), each set's σ, each kind's σ, and σ with each set left out.

The check (validation/ERROR_BANDS_PLAN.md, written before any of its figures): **leave one set
out** — σ from the other sets by the estimator above, then the share of the left-out set's rows
(card ratios excluded) with |ln ratio| ≤ 1.2816 σ (inside the P10-P90 of a lognormal error about
the prediction); per fold and pooled over the folds (:func:`leave_one_set_out`).
"""

from __future__ import annotations

import argparse
import csv
import io
import math
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts.defaults_file import with_rows, write_or_check

ROOT = Path(__file__).resolve().parents[1]
DATA_CSV = ROOT / "costsim" / "data" / "serving_model_error.csv"
DEFAULTS_CSV = ROOT / "costsim" / "data" / "allin_loss.csv"
KEY = "serving_error_sigma"
FIELDS = ("set", "row_id", "kind", "engine", "gpu", "group", "ratio", "commit")
# The four ratings (docs/performance.md §4, the held-out checks): set -> rating commit.
RATINGS = {"heldout": "032b9d9", "heldout2": "a9f9fba", "heldout3": "32a49c4",
           "heldout4": "8d146d5"}
EXCLUDED_KINDS = ("card-ratio",)
# z of the 90th percentile of a normal: a lognormal error's P10-P90 is exp(±Z90 σ).
Z90 = 1.2816
FLOOR_KEY = "throughput_error_sigma"


@dataclass(frozen=True, slots=True, kw_only=True)
class Ratio:
    """One held-out row as rated: measured / predicted."""

    set: str
    row_id: str
    kind: str
    engine: str
    gpu: str
    group: str
    ratio: float
    commit: str

    @property
    def log(self) -> float:
        return math.log(self.ratio)


# --- the estimator (written before any ratio was computed) -------------------------------------

def used(rows: Iterable[Ratio]) -> list[Ratio]:
    """The rows the estimator reads: every rated row but the card-ratio ones."""
    return [r for r in rows if r.kind not in EXCLUDED_KINDS]


def _weights(rows: Sequence[Ratio]) -> list[float]:
    """Weight 1 per (set, group), shared equally by its rows."""
    count: dict[tuple[str, str], int] = defaultdict(int)
    for r in rows:
        count[(r.set, r.group)] += 1
    return [1.0 / count[(r.set, r.group)] for r in rows]


def weighted_rms(rows: Sequence[Ratio]) -> float:
    """√(Σ w·x² / Σ w) over ``rows``, x = ln ratio, w per source table (:func:`_weights`)."""
    rows = used(rows)
    if not rows:
        raise ValueError("no rated rows")
    weights = _weights(rows)
    return math.sqrt(sum(w * r.log**2 for w, r in zip(weights, rows, strict=True))
                     / sum(weights))


def serving_error_sigma(rows: Sequence[Ratio], floor: float) -> float:
    """The serving model's out-of-sample log-sd: :func:`weighted_rms`, at least ``floor``."""
    return max(weighted_rms(rows), floor)


def inside_band(row: Ratio, sigma: float) -> bool:
    """Whether ``row``'s ratio lies inside exp(±Z90·σ), the P10-P90 of a lognormal error."""
    return abs(row.log) <= Z90 * sigma


@dataclass(frozen=True, slots=True, kw_only=True)
class Fold:
    """One leave-one-set-out fold: σ from the other sets, coverage on the left-out one."""

    left_out: str
    sigma: float
    inside: int
    rows: int


def leave_one_set_out(rows: Sequence[Ratio], floor: float) -> list[Fold]:
    """Per set (in first-seen order): :func:`serving_error_sigma` of every other set's rows and
    how many of the set's own rows (card ratios excluded) lie inside its band."""
    rows = used(rows)
    folds = []
    for name in dict.fromkeys(r.set for r in rows):
        sigma = serving_error_sigma([r for r in rows if r.set != name], floor)
        own = [r for r in rows if r.set == name]
        folds.append(Fold(left_out=name, sigma=sigma,
                          inside=sum(inside_band(r, sigma) for r in own), rows=len(own)))
    return folds


# --- figures printed for information -----------------------------------------------------------

def row_rms(rows: Sequence[Ratio]) -> float:
    rows = used(rows)
    return math.sqrt(sum(r.log**2 for r in rows) / len(rows))


def weighted_mean_log(rows: Sequence[Ratio]) -> float:
    rows = used(rows)
    weights = _weights(rows)
    return sum(w * r.log for w, r in zip(weights, rows, strict=True)) / sum(weights)


# --- the data file ------------------------------------------------------------------------------

def read_ratios(path: Path = DATA_CSV) -> list[Ratio]:
    with path.open(encoding="utf-8", newline="") as handle:
        return [Ratio(set=row["set"], row_id=row["row_id"], kind=row["kind"],
                      engine=row["engine"], gpu=row["gpu"], group=row["group"],
                      ratio=float(row["ratio"]), commit=row["commit"])
                for row in csv.DictReader(handle)]


def ratios_text(rows: Sequence[Ratio]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(FIELDS)
    for r in rows:
        writer.writerow((r.set, r.row_id, r.kind, r.engine, r.gpu, r.group, f"{r.ratio:.4g}",
                         r.commit))
    return out.getvalue()


# --- rating in a checkout of the rating commit --------------------------------------------------

def rate(checkout: Path, set_name: str, commit: str) -> list[Ratio]:
    """The set's rows as the model of ``checkout`` rates them: that commit's own
    ``scripts.published_table.check_serving`` (run with PYTHONPATH=checkout, so that its costsim
    and scripts are imported, not this worktree's)."""
    import costsim
    import scripts.published_table as table
    from costsim.catalog.perf_defaults import perf_defaults

    for module in (costsim, table):
        where = Path(module.__file__ or "").resolve()
        if not where.is_relative_to(checkout.resolve()):
            raise SystemExit(f"--rate: {module.__name__} comes from {where}, not from "
                             f"{checkout} (set PYTHONPATH={checkout})")
    path = checkout / "validation" / set_name / "serving.csv"
    checks = table.check_serving(table.read_rows(path), perf_defaults())
    return [Ratio(set=set_name, row_id=c.row["id"], kind=c.row["kind"],
                  engine=c.row["costsim_engine"], gpu=c.row["gpu"], group=c.row["group"],
                  ratio=float(c.ratio), commit=commit)
            for c in checks if c.within is not None and c.ratio is not None]


# --- report -------------------------------------------------------------------------------------

def _floor() -> float:
    with DEFAULTS_CSV.open(encoding="utf-8", newline="") as handle:
        rows = {row["key"]: row for row in csv.DictReader(handle)}
    return float(rows[FLOOR_KEY]["value"])


def report(rows: Sequence[Ratio], floor: float) -> str:
    lines = ["| set | row | kind | engine | gpu | group | measured / predicted | commit |",
             "|---|---|---|---|---|---|---:|---|"]
    lines += [f"| {r.set} | {r.row_id} | {r.kind} | {r.engine} | {r.gpu} | {r.group} "
              f"| {r.ratio:.3g} | {r.commit} |" for r in rows]
    lines += ["", "| rows | n | groups | range | mean ln | weighted RMS | row RMS |",
              "|---|---:|---:|---|---:|---:|---:|"]

    def line(name: str, part: Sequence[Ratio]) -> str:
        part = used(part)
        groups = len({(r.set, r.group) for r in part})
        low, high = min(r.ratio for r in part), max(r.ratio for r in part)
        return (f"| {name} | {len(part)} | {groups} | {low:.2f}-{high:.2f} "
                f"| {weighted_mean_log(part):+.3f} | {weighted_rms(part):.3f} "
                f"| {row_rms(part):.3f} |")

    for name in RATINGS:
        lines.append(line(name, [r for r in rows if r.set == name]))
    for kind in sorted({r.kind for r in used(rows)}):
        lines.append(line(f"kind {kind}", [r for r in rows if r.kind == kind]))
    for name in RATINGS:
        lines.append(line(f"without {name}", [r for r in rows if r.set != name]))
    lines.append(line(f"all {len({r.set for r in rows})}", rows))
    folds = leave_one_set_out(rows, floor)
    lines += ["", "leave one set out (validation/ERROR_BANDS_PLAN.md): sigma from the other sets, "
              "rows of the left-out set inside exp(+-1.2816 sigma)", "",
              "| left out | sigma from the others | inside | share |", "|---|---:|---:|---:|"]
    lines += [f"| {f.left_out} | {f.sigma:.4f} | {f.inside}/{f.rows} | {f.inside / f.rows:.0%} |"
              for f in folds]
    pooled_in, pooled_n = sum(f.inside for f in folds), sum(f.rows for f in folds)
    lines.append(f"| pooled | - | {pooled_in}/{pooled_n} | {pooled_in / pooled_n:.0%} |")
    sigma = serving_error_sigma(rows, floor)
    extra = math.sqrt(max(0.0, sigma**2 - floor**2))
    low, high = math.exp(-Z90 * sigma), math.exp(Z90 * sigma)
    rated = used(rows)
    below = sum(r.ratio < low for r in rated)
    above = sum(r.ratio > high for r in rated)
    lines += ["", f"{KEY} = {sigma:.4f} (floor {floor:g}); the serving-only factor on top of the "
              f"shared throughput error: sqrt({sigma:.4f}^2 - {floor:g}^2) = {extra:.4f}; "
              f"P10-P90 of the capacity factor: x{low:.2f}-x{high:.2f}",
              f"rows inside that band (in sample: sigma was measured on them): "
              f"{len(rated) - below - above}/{len(rated)}; below it {below}, above it {above}"]
    return "\n".join(lines)


def source_text(rows: Sequence[Ratio]) -> str:
    rows = used(rows)
    sets = ", ".join(f"validation/{name} at {commit} "
                     f"({sum(r.set == name for r in rows)} rows)"
                     for name, commit in RATINGS.items())
    groups = len({(r.set, r.group) for r in rows})
    return (f"the serving model's log-sd error out of sample, by scripts/serving_model_error.py "
            f"from costsim/data/serving_model_error.csv: measured / predicted on the four blind "
            f"held-out sets as each was rated ({sets}; card-ratio rows excluded); RMS of "
            f"ln(ratio) about 0 (the bias is part of the error, the median stays 1), each of the "
            f"{groups} source tables weighted 1 and shared by its rows, one value for every kind "
            f"of row, kept at or above throughput_error_sigma (docs/performance.md, The serving "
            f"model's error out of sample); a predicted serving capacity with the default "
            f"uncertainty carries it in full, a measured one keeps its measurement's error")


def defaults_text(rows: Sequence[Ratio], current: str, floor: float) -> str:
    """``current`` (allin_loss.csv's text) with the serving_error_sigma row written (added after
    training_error_sigma when absent)."""
    return with_rows(current, {KEY: (serving_error_sigma(rows, floor), source_text(rows))},
                     new_after="training_error_sigma")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rate", action="store_true",
                        help="rate --set with the checkout's model and print CSV rows")
    parser.add_argument("--checkout", type=Path, help="with --rate: the rating commit's tree")
    parser.add_argument("--set", choices=tuple(RATINGS), help="with --rate: the held-out set")
    parser.add_argument("--commit", help="with --rate: the rating commit (recorded per row)")
    parser.add_argument("--write", action="store_true",
                        help=f"write {KEY} into costsim/data/allin_loss.csv")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when costsim/data/allin_loss.csv differs")
    args = parser.parse_args(argv)
    if args.rate:
        if args.checkout is None or args.set is None or args.commit is None:
            parser.error("--rate needs --checkout, --set and --commit")
        sys.stdout.write(ratios_text(rate(args.checkout, args.set, args.commit)))
        return 0
    rows = read_ratios()
    floor = _floor()
    print(report(rows, floor))
    current = DEFAULTS_CSV.read_text(encoding="utf-8")
    return write_or_check(DEFAULTS_CSV, current, defaults_text(rows, current, floor), KEY,
                          write=args.write, check=args.check, root=ROOT)


if __name__ == "__main__":
    sys.exit(main())
