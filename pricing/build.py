"""Build costsim's shipped price book from the raw catalog in ``pricing/raw/``.

    python pricing/build.py          # writes costsim/data/price_book*.csv
    python pricing/build.py --check  # exit 1 if the shipped files differ from a fresh build

The output is a pure function of ``pricing/raw/*.csv``, ``pricing/anomalies.csv`` and the GPU
catalog ``costsim/data/gpus.csv``: same inputs, same bytes. Rules are documented in
``pricing/README.md``.
"""

from __future__ import annotations

import argparse
import csv
import io
import re
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from costsim.catalog.gpus import find_gpu  # noqa: E402
from costsim.catalog.resources import csv_optional_float  # noqa: E402
from costsim.domain.pricing import PriceFlag  # noqa: E402

RAW_DIR = REPO / "pricing" / "raw"
ANOMALIES = REPO / "pricing" / "anomalies.csv"
OUT_DIR = REPO / "costsim" / "data"
BOOK_NAME = "price_book.csv"
EXCLUDED_NAME = "price_book_excluded.csv"

# docs/pricing.md: marketplaces are used only when a plan names them.
MARKETPLACES = frozenset({"vast", "hyperbolic", "mithril"})

# A region whose per-GPU on-demand price is below this share of the median of the same instance
# type's other regions is flagged (catches the GCP H100/A100 split of SOURCE.md §5).
LOW_REGION_RATIO = 0.6
# GCP's bimodal catalog (SOURCE.md §5): a jump of 30 %+ between neighbouring regional prices of
# one machine type separates the suspect low SKU from list prices (host VM price included).
GCP_SPLIT_RATIO = 1.3
GCP_MAX_LOW_SHARE = 0.8
# Spot at or below 10 % of on-demand: the thin-market rows of SOURCE.md §5 (AWS g4dn af-south-1).
LOW_SPOT_RATIO = 0.1001
# What a blank source region becomes: the rows stay (the price is real) but say so.
UNSPECIFIED_REGION = "unspecified"


@dataclass(frozen=True)
class CloudSource:
    """Provenance of one per-cloud raw file (SOURCE.md §2)."""

    source: str
    commit: str
    effective_date: str
    date_note: str


_V9_NOTE = ("approximate: SkyPilot v9 snapshot date unknown (SOURCE.md §2.3, 'early to mid "
            "2026'); 2026-05-20 is the anycloud-sh/catalog snapshot that matched it")
_OLD_NOTE = ("approximate upper bound: SkyPilot {v} file, may be older (SOURCE.md §2.3)")
_V9_COMMIT = "2c3d7ea7d76bf84cf80d382e946c1609571485fd"
_SNAPSHOT_DATE = "2026-05-20"


def _skypilot(version: str, cloud: str, commit: str = _V9_COMMIT) -> CloudSource:
    """A cloud whose file is SkyPilot's own ``{version}/{cloud}/vms.csv`` (SOURCE.md §2)."""
    note = _V9_NOTE if version == "v9" else _OLD_NOTE.format(v=version)
    return CloudSource(f"SkyPilot catalog {version} {cloud}/vms.csv", commit, _SNAPSHOT_DATE,
                       note)


CLOUD_SOURCES: dict[str, CloudSource] = {
    "aws": _skypilot("v9", "aws"),
    "gcp": CloudSource("SkyPilot catalog v9 gcp/vms.csv + anycloud-sh/catalog gcp/vms.csv "
                       "(g2/n1 hosts); total = host VM + GPU", _V9_COMMIT, _SNAPSHOT_DATE,
                       _V9_NOTE),
    "azure": CloudSource("anycloud-sh/catalog azure/vms.csv (SkyPilot schema)",
                         "62ff0a987e0c257a89235415d2877812fb1aaf29", _SNAPSHOT_DATE,
                         "snapshot commit date"),
    "lambda": _skypilot("v9", "lambda"),
    "fluidstack": _skypilot("v9", "fluidstack"),
    "seeweb": _skypilot("v9", "seeweb"),
    "nebius": _skypilot("v9", "nebius", "d9bf3aa4d21f5c1e1f3d8fde27adf0204c46fbc8"),
    "ibm": _skypilot("v9", "ibm", "a5be53865774cac59df537ba1842e45ffc8be722"),
    "vast": CloudSource("SkyPilot catalog v9 vast/vms.csv (rows from anycloud-sh/catalog)",
                        "336ccee423bc67d6f76949d21105246926ab9fe9", "2026-04-29",
                        "commit date of the anycloud file; marketplace offers are volatile"),
    "verda": _skypilot("v8", "verda", "000c1d0bf24621f4ac37cfa585f0897c1aa1d9cf"),
    "hyperstack": _skypilot("v8", "hyperstack", "fdc9d908ab0b2af9f468f139fb3f662c8c6b3257"),
    "hyperbolic": _skypilot("v8", "hyperbolic", "0082b0435f3912ae4c566856b272455cc78f4f61"),
    "mithril": _skypilot("v8", "mithril", "1f9eb0c264f9a6d78833766f4b18353ac7dfdde9"),
    "paperspace": _skypilot("v6", "paperspace", "e520054145d1bce6748bcf18c9a25ddd6ea9a348"),
}

BOOK_COLUMNS = (
    "cloud", "region", "instance_type", "gpu", "provider_gpu_name", "gpus_per_instance",
    "vcpus", "host_ram_gib", "gpu_memory_gib", "on_demand_usd_per_hour", "spot_usd_per_hour",
    "marketplace", "flags", "note", "source", "source_commit", "effective_date", "date_note",
)
EXCLUDED_COLUMNS = ("cloud", "region", "instance_type", "provider_gpu_name",
                    "accelerator_count", "reason")


@dataclass(frozen=True)
class Resolution:
    """The canonical GPU of a raw row, or why there is none."""

    gpu: str | None
    assumed: bool = False


def _canonical(name: str) -> str | None:
    spec = find_gpu(name)
    return None if spec is None else spec.name


def resolve_gpu(cloud: str, instance_type: str, accelerator: str,
                gpu_memory_gib: float) -> Resolution:
    """Map a provider GPU name to a canonical costsim GPU (rules in pricing/README.md)."""
    itype = instance_type.lower()
    name = accelerator
    if cloud == "lambda":
        if name == "H100":
            return Resolution("H100-PCIe" if "pcie" in itype else "H100")
        if name == "A100":
            # Lambda sells gpu_{1,2,4}x_a100 as "40 GB PCIe"; _sxm4 and the 8x box are SXM4.
            if "sxm4" in itype or itype.startswith("gpu_8x_"):
                return Resolution("A100")
            return Resolution("A100-PCIe", assumed=True)
        if name == "RTX6000":  # Quadro RTX 6000 (Turing, 24 GB), not the Ada card
            return Resolution(None)
    if cloud == "azure":
        if name == "A100-80GB" and re.match(r"standard_nc\d+ads_a100_v4", itype):
            return Resolution("A100-80GB-PCIe")  # NC A100 v4 = A100 80GB PCIe
        if name == "H100" and re.match(r"standard_ncc?\d+adi?s_h100_v5", itype):
            return Resolution("H100-NVL")  # NC H100 v5 = H100 NVL 94 GB
    if cloud == "vast":
        large = gpu_memory_gib >= 60
        if name == "A100":
            if "pcie" in itype:
                return Resolution("A100-80GB-PCIe" if large else "A100-PCIe")
            return Resolution("A100-80GB" if large else "A100")
        if name == "H100":
            return Resolution("H100-NVL" if "nvl" in itype else "H100")
        if name == "V100":
            return Resolution("V100-32GB" if gpu_memory_gib >= 24 else "V100")
    if cloud == "seeweb":
        if name == "A100" and gpu_memory_gib >= 60:
            return Resolution("A100-80GB", assumed=True)  # form factor not stated
        if name == "RTX6000":
            return Resolution(None)
    return Resolution(_canonical(name))


def _fmt(value: float | None) -> str:
    if value is None:
        return ""
    text = repr(round(value, 6))
    return text.removesuffix(".0")


def _load_anomalies(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _matches(rule: dict[str, str], row: dict[str, str]) -> bool:
    return all(rule[key] in ("*", row[key]) for key in ("cloud", "instance_type", "region"))


def _raw_rows(raw_dir: Path) -> Iterator[dict[str, str]]:
    """Every row of the per-cloud raw files, file by file in name order."""
    for path in sorted(raw_dir.glob("*.csv")):
        if path.name == "gpus.csv":
            continue
        with path.open(newline="", encoding="utf-8") as handle:
            yield from csv.DictReader(handle)


def build(raw_dir: Path = RAW_DIR, anomalies_path: Path = ANOMALIES) -> dict[str, str]:
    """Return ``{file name: text}`` of the built files."""
    rows: list[dict[str, str]] = []
    excluded: list[dict[str, str]] = []
    anomalies = _load_anomalies(anomalies_path)
    for raw in _raw_rows(raw_dir):
        cloud = raw["cloud"]
        meta = CLOUD_SOURCES[cloud]
        count = float(raw["accelerator_count"])
        # Vast's regions are "state, country, continent" with the state often blank
        # (", CN, AS"): empty parts are dropped rather than shown as a leading comma.
        region = ", ".join(part.strip() for part in raw["region"].split(",") if part.strip())
        base = {"cloud": cloud, "region": region or UNSPECIFIED_REGION,
                "instance_type": raw["instance_type"],
                "provider_gpu_name": raw["accelerator"],
                "accelerator_count": raw["accelerator_count"]}
        if count < 1 or count != int(count):
            excluded.append({**base, "reason": "fractional GPU instance"})
            continue
        memory = float(raw["gpu_memory_gib"] or 0)
        resolution = resolve_gpu(cloud, raw["instance_type"], raw["accelerator"], memory)
        if resolution.gpu is None:
            excluded.append({**base, "reason": "GPU not in costsim's GPU catalog"})
            continue
        flags: list[PriceFlag] = []
        on_demand = csv_optional_float(raw["price_per_hour_usd"])
        spot = csv_optional_float(raw["spot_price_per_hour_usd"])
        if on_demand is None:
            flags.append(PriceFlag.MISSING_ON_DEMAND)
        if on_demand is not None and spot is not None:
            if spot > on_demand:
                flags.append(PriceFlag.SPOT_ABOVE_ON_DEMAND)
            elif spot <= on_demand * LOW_SPOT_RATIO:
                flags.append(PriceFlag.SPOT_SUSPICIOUSLY_LOW)
        if not region:
            flags.append(PriceFlag.REGION_UNSPECIFIED)
        if cloud == "lambda":
            flags.append(PriceFlag.LISTED_EVERYWHERE)
        if resolution.assumed:
            flags.append(PriceFlag.GPU_VARIANT_ASSUMED)
        row = {
            **base,
            "gpu": resolution.gpu,
            "gpus_per_instance": str(int(count)),
            "vcpus": str(round(float(raw["vcpus"]))),
            "host_ram_gib": _fmt(float(raw["memory_gib"])),
            "gpu_memory_gib": _fmt(memory),
            "on_demand_usd_per_hour": _fmt(on_demand),
            "spot_usd_per_hour": _fmt(spot),
            "marketplace": "true" if cloud in MARKETPLACES else "false",
            "flags": ";".join(flags),
            "note": "",
            "source": meta.source,
            "source_commit": meta.commit,
            "effective_date": meta.effective_date,
            "date_note": meta.date_note,
        }
        for rule in anomalies:
            if _matches(rule, row) and rule["flag"] not in row["flags"].split(";"):
                PriceFlag(rule["flag"])  # a typo in anomalies.csv must fail the build
                _add_flag(row, rule["flag"])
                _add_note(row, rule["note"])
        rows.append(row)
    _flag_low_regions(rows)
    _note_unspecified_regions(rows)
    rows.sort(key=lambda r: (r["cloud"], r["instance_type"], r["region"]))
    excluded.sort(key=lambda r: (r["cloud"], r["instance_type"], r["region"]))
    return {BOOK_NAME: _csv_text(BOOK_COLUMNS, rows),
            EXCLUDED_NAME: _csv_text(EXCLUDED_COLUMNS, excluded)}


def _add_note(row: dict[str, str], note: str) -> None:
    row["note"] = "; ".join(n for n in (row["note"], note) if n)


def _add_flag(row: dict[str, str], flag: str) -> None:
    row["flags"] = ";".join(f for f in (row["flags"], flag) if f)


def _note_unspecified_regions(rows: list[dict[str, str]]) -> None:
    """Say on each region-less row which regions the same cloud does name (a hint, not a guess).

    The source leaves the region blank (Seeweb, SOURCE.md §5); costsim does not invent one, since
    region matters for data residency, latency and egress, but a user can check these first.
    """
    named: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        if row["region"] != UNSPECIFIED_REGION:
            named[row["cloud"]].add(row["region"])
    for row in rows:
        if row["region"] == UNSPECIFIED_REGION:
            regions = ", ".join(sorted(named[row["cloud"]])) or "none"
            _add_note(row, f"region blank in the source; {row['cloud']} regions named in the "
                           f"catalog: {regions}")


def _flag_low_regions(rows: list[dict[str, str]]) -> None:
    by_type: dict[tuple[str, str], list[dict[str, str]]] = defaultdict(list)
    for row in rows:
        if row["marketplace"] == "false" and row["on_demand_usd_per_hour"]:
            by_type[(row["cloud"], row["instance_type"])].append(row)

    def price(row: dict[str, str]) -> float:
        return float(row["on_demand_usd_per_hour"])

    for (cloud, _), group in by_type.items():
        if len(group) < 3:
            continue
        if cloud == "gcp":
            low = _gcp_low_cluster(sorted(group, key=price), price)
        else:
            median = statistics.median(price(r) for r in group)
            low = [r for r in group if price(r) < LOW_REGION_RATIO * median]
        for row in low:
            _add_flag(row, PriceFlag.ANOMALOUS_LOW_REGION)


def _gcp_low_cluster(ordered: list[dict[str, str]],
                     price: Callable[[dict[str, str]], float]) -> list[dict[str, str]]:
    """The lower mode of a bimodal GCP price list (SOURCE.md §5), if one is identifiable.

    GCP's catalog has a low SKU in many regions, so a median is no reference: split at the
    largest relative gap between neighbouring prices; when it exceeds GCP_SPLIT_RATIO the lower
    cluster is flagged, unless it holds nearly every region (then neither mode can be trusted
    over the other, as for B200, and no row is flagged).
    """
    gaps = [(price(ordered[i + 1]) / price(ordered[i]), i) for i in range(len(ordered) - 1)]
    ratio, index = max(gaps)
    low = ordered[: index + 1]
    if ratio < GCP_SPLIT_RATIO or len(low) > GCP_MAX_LOW_SHARE * len(ordered):
        return []
    return low


def _csv_text(columns: tuple[str, ...], rows: list[dict[str, str]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, extrasaction="ignore",
                            lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def main(argv: list[str] | None = None) -> int:
    """Write (or, with --check, compare) the built files."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--raw", type=Path, default=RAW_DIR)
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if the files in --out differ from a fresh build")
    args = parser.parse_args(argv)
    built = build(args.raw)
    stale = []
    for name, text in built.items():
        target = args.out / name
        if args.check:
            if not target.exists() or target.read_bytes() != text.encode("utf-8"):
                stale.append(name)
        else:
            target.write_bytes(text.encode("utf-8"))
            print(f"wrote {target} ({text.count(chr(10)) - 1} rows)")
    if stale:
        print("stale: " + ", ".join(stale) + " (run python pricing/build.py)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
