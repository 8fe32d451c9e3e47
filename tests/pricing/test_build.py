"""pricing/build.py regenerates the shipped price book byte for byte from pricing/raw/."""

from __future__ import annotations

import csv
import importlib.util
import io
import shutil
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).parents[2]
RAW = REPO / "pricing" / "raw"
DATA = REPO / "costsim" / "data"


def _build_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pricing_build", REPO / "pricing" / "build.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


def test_build_reproduces_shipped_files_byte_for_byte() -> None:
    """A fresh build from pricing/raw equals the committed costsim/data files."""
    built = _build_module().build(RAW)
    assert set(built) == {"price_book.csv", "price_book_excluded.csv"}
    for name, text in built.items():
        assert (DATA / name).read_bytes() == text.encode("utf-8"), f"{name} is stale"


def test_build_check_mode_detects_a_stale_file(tmp_path: Path) -> None:
    """--check exits 1 when a shipped file differs, 0 when it matches."""
    build = _build_module()
    out = tmp_path / "out"
    out.mkdir()
    assert build.main(["--out", str(out)]) == 0
    assert build.main(["--out", str(out), "--check"]) == 0
    book = out / "price_book.csv"
    book.write_text(book.read_text().replace("55.04", "55.05"))
    assert build.main(["--out", str(out), "--check"]) == 1


def test_build_output_follows_the_raw_input(tmp_path: Path) -> None:
    """The build reads the raw folder it is given: a changed raw price changes the book."""
    raw = tmp_path / "raw"
    shutil.copytree(RAW, raw)
    aws = raw / "aws.csv"
    aws.write_bytes(aws.read_bytes().replace(b",p5.48xlarge,H100,8,192,2048,80.0,us-east-1,55.04,",
                                             b",p5.48xlarge,H100,8,192,2048,80.0,us-east-1,60.0,"))
    text = _build_module().build(raw)["price_book.csv"]
    assert "p5.48xlarge,H100,H100,8,192,2048,80,60," in text


def test_raw_copy_is_complete() -> None:
    """Every per-cloud raw file and SOURCE.md sit in pricing/raw (the build needs no ../shared)."""
    names = {path.name for path in RAW.iterdir()}
    assert "SOURCE.md" in names
    assert {"aws.csv", "gcp.csv", "azure.csv", "lambda.csv", "vast.csv", "mithril.csv"} <= names


def test_blank_regions_are_named_unspecified_with_a_note(tmp_path: Path) -> None:
    """A blank source region becomes `unspecified`, flagged, with the cloud's named regions."""
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "seeweb.csv").write_text(
        "cloud,instance_type,accelerator,accelerator_count,vcpus,memory_gib,gpu_memory_gib,"
        "region,price_per_hour_usd,spot_price_per_hour_usd\n"
        "seeweb,A,H100,1,16,256,80,,1.89,\n"
        "seeweb,B,L4,1,4,32,24,it-fr2,0.38,\n"
        "seeweb,C,L4,1,4,32,24,it-mi1,0.38,\n")
    text = _build_module().build(raw)["price_book.csv"]
    rows = {row["instance_type"]: row for row in csv.DictReader(io.StringIO(text))}
    assert rows["A"]["region"] == "unspecified"
    assert rows["A"]["flags"] == "region-unspecified"
    assert rows["A"]["note"] == ("region blank in the source; seeweb regions named in the "
                                 "catalog: it-fr2, it-mi1")
    assert rows["B"]["note"] == ""
