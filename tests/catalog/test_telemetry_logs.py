"""Reading GPU telemetry logs: nvidia-smi --query-gpu CSV (with and without units and header,
[N/A] cells, interleaved GPUs, garbled rows) and dcgmi dmon tables; each sample is written here
in the tool's own format (docs/telemetry.md)."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from costsim.catalog.telemetry_logs import read_telemetry_log
from costsim.domain.telemetry import TelemetryFormat
from costsim.errors import InputError

MIB = 2**20

# nvidia-smi --query-gpu=timestamp,index,name,uuid,utilization.gpu,memory.used,memory.total,
#   power.draw --format=csv -l 5   (two GPUs, one row per GPU per poll)
SMI_UNITS = (
    "timestamp, index, name, uuid, utilization.gpu [%], memory.used [MiB], "
    "memory.total [MiB], power.draw [W]\n") + """\
2025/03/14 13:02:00.431, 0, NVIDIA H100 80GB HBM3, GPU-aaaa, 0 %, 4 MiB, 81559 MiB, 69.70 W
2025/03/14 13:02:00.431, 1, NVIDIA H100 80GB HBM3, GPU-bbbb, 0 %, 4 MiB, 81559 MiB, [N/A]
2025/03/14 13:02:05.433, 0, NVIDIA H100 80GB HBM3, GPU-aaaa, 97 %, 61234 MiB, 81559 MiB, 640.12 W
2025/03/14 13:02:05.433, 1, NVIDIA H100 80GB HBM3, GPU-bbbb, [N/A], 60112 MiB, 81559 MiB, 611.00 W
"""


def _write(tmp_path: Path, text: str, name: str = "gpu.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_csv_with_units_reads_every_gpu_row_in_bytes(tmp_path: Path) -> None:
    log = read_telemetry_log(_write(tmp_path, SMI_UNITS))
    assert log.format is TelemetryFormat.NVIDIA_SMI_CSV
    assert [s.device for s in log.samples] == ["GPU-aaaa", "GPU-bbbb"] * 2
    assert [s.line for s in log.samples] == [2, 3, 4, 5]
    third = log.samples[2]
    assert third.memory_used_bytes == 61234 * MIB
    assert third.memory_total_bytes == 81559 * MIB
    assert third.utilization_pct == 97.0
    assert third.gpu_name == "NVIDIA H100 80GB HBM3"
    # [N/A] in a read column is a missing value, not a problem; power.draw is not read
    assert log.samples[3].utilization_pct is None
    assert log.missing_cells == 1
    assert log.problems == ()


def test_nounits_and_any_column_order(tmp_path: Path) -> None:
    # --format=csv,nounits keeps the units in the header, drops them from the cells
    text = ("memory.total [MiB], utilization.gpu [%], pci.bus_id, memory.used [MiB]\n"
            "40960, 12, 00000000:07:00.0, 1024\n"
            "40960, 0, 00000000:0F:00.0, 2048\n")
    log = read_telemetry_log(_write(tmp_path, text))
    assert [(s.device, s.memory_used_bytes, s.utilization_pct) for s in log.samples] == [
        ("00000000:07:00.0", 1024 * MIB, 12.0), ("00000000:0F:00.0", 2048 * MIB, 0.0)]
    assert all(s.gpu_name is None for s in log.samples)


def test_noheader_needs_the_query_list(tmp_path: Path) -> None:
    text = "0, NVIDIA A10G, 45 %, 10240 MiB\n1, NVIDIA A10G, 0 %, [Not Supported]\n"
    path = _write(tmp_path, text)
    with pytest.raises(InputError, match=r"gpu\.csv: line 1 is not an nvidia-smi CSV header.*"
                                         r"--columns"):
        read_telemetry_log(path)
    log = read_telemetry_log(path, columns=["index", "gpu_name", "utilization.gpu",
                                            "memory.used"])
    assert [(s.device, s.gpu_name, s.memory_used_bytes) for s in log.samples] == [
        ("0", "NVIDIA A10G", 10240 * MIB), ("1", "NVIDIA A10G", None)]
    assert log.missing_cells == 1


def test_repeated_headers_and_blank_lines_are_skipped(tmp_path: Path) -> None:
    # `while true; do nvidia-smi --query-gpu=... --format=csv; echo; sleep 5; done`
    block = "utilization.gpu [%], memory.used [MiB]\n{u} %, {m} MiB\n\n"
    text = "".join(block.format(u=u, m=m) for u, m in ((5, 100), (50, 900), (0, 300)))
    log = read_telemetry_log(_write(tmp_path, text))
    assert [s.memory_used_bytes for s in log.samples] == [100 * MIB, 900 * MIB, 300 * MIB]
    assert [s.line for s in log.samples] == [2, 5, 8]
    assert log.problems == ()


def test_garbled_rows_are_reported_by_line_and_the_rest_is_read(tmp_path: Path) -> None:
    text = ("index, utilization.gpu [%], memory.used [MiB], memory.total [MiB]\n"
            "0, 40 %, 1000 MiB, 81559 MiB\n"
            "0, forty %, 1000 MiB, 81559 MiB\n"  # line 3: not a number
            "0, 140 %, 1000 MiB, 81559 MiB\n"  # line 4: above 100 %
            "0, 40 %, 90000 MiB, 81559 MiB\n"  # line 5: used above total
            "0, 40 %, 7 GiB, 81559 MiB\n"  # line 6: a unit nvidia-smi never writes
            "0, 41 %, 2000 MiB, 81559 MiB\n"
            "0, 42 %, 20")  # line 8: cut off when the logger was killed
    log = read_telemetry_log(_write(tmp_path, text))
    assert [s.memory_used_bytes for s in log.samples] == [1000 * MIB, 2000 * MIB]
    lines = [p.line for p in log.problems]
    assert lines == [3, 4, 5, 6, 8]
    messages = {p.line: p.message for p in log.problems}
    assert "utilization.gpu: 'forty %' is not a number in %" in messages[3]
    assert "above 100 %" in messages[4]
    assert "above the total" in messages[5]
    assert "'7 GiB' is not a number in MiB" in messages[6]
    assert "3 cells where the header has 4" in messages[8]


def test_memory_used_from_total_minus_free(tmp_path: Path) -> None:
    text = "memory.total [MiB], memory.free [MiB]\n24576 MiB, 4576 MiB\n"
    log = read_telemetry_log(_write(tmp_path, text))
    assert log.samples[0].memory_used_bytes == 20000 * MIB
    assert log.samples[0].utilization_pct is None


@pytest.mark.parametrize(("text", "rule"), [
    ("", "the file is empty"),
    ("timestamp, name, temperature.gpu\n2025/01/01 00:00:00.000, NVIDIA L4, 40\n",
     "no column costsim reads"),
    ("utilization.gpu [%], memory.used [MiB]\nabc, def\n1 %\n",
     r"no readable GPU sample in this nvidia-smi-csv log \(line 2: memory.used: 'def'"),
    ("memory.used [GiB]\n1\n", r"memory\.used: unit \[GiB\] where nvidia-smi writes \[MiB\]"),
])
def test_an_unreadable_file_is_bad_input_naming_file_and_reason(tmp_path: Path, text: str,
                                                                rule: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(InputError, match=rule) as info:
        read_telemetry_log(path)
    assert str(path) in str(info.value)


def test_a_missing_file_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nope\.csv: cannot read the file"):
        read_telemetry_log(tmp_path / "nope.csv")


def test_powershell_utf16_output_is_read(tmp_path: Path) -> None:
    path = tmp_path / "ps.csv"
    path.write_bytes(codecs.BOM_UTF16_LE + "utilization.gpu [%], memory.used [MiB]\r\n"
                     "33 %, 512 MiB\r\n".encode("utf-16-le"))
    log = read_telemetry_log(path)
    assert log.samples[0].memory_used_bytes == 512 * MIB
    assert log.samples[0].utilization_pct == 33.0


# dcgmi dmon -e 203,252,250 : '#Entity' header, 'ID' unit line, one row per GPU per poll,
# the header printed again every 14 polls, N/A for a blank value.
DMON = """\
#Entity   GPUTL           FBUSD           FBTTL
ID
GPU 0     0               522             81559
GPU 1     N/A             522             81559
GPU 0     95              70123           81559
GPU 1     97              69011           81559
GPU-I 7   30              10240           20096
#Entity   GPUTL           FBUSD           FBTTL
ID
GPU 0     96              70400           81559
GPU 1     oops            1               81559


dmon was stopped do to receiving a signal
"""


def test_dcgmi_dmon_rows_with_na_and_repeated_headers(tmp_path: Path) -> None:
    log = read_telemetry_log(_write(tmp_path, DMON, "dmon.txt"))
    assert log.format is TelemetryFormat.DCGMI_DMON
    assert log.columns == ("GPUTL", "FBUSD", "FBTTL")
    assert [(s.line, s.device, s.utilization_pct, s.memory_used_bytes) for s in log.samples] == [
        (3, "0", 0.0, 522 * MIB), (4, "1", None, 522 * MIB), (5, "0", 95.0, 70123 * MIB),
        (6, "1", 97.0, 69011 * MIB), (10, "0", 96.0, 70400 * MIB)]
    assert all(s.memory_total_bytes == 81559 * MIB and s.gpu_name is None for s in log.samples)
    assert log.missing_cells == 1
    problems = {p.line: p.message for p in log.problems}
    assert "GPUTL: 'oops' is not a number" in problems[11]
    assert "1 GPU-I" in problems[7]
    assert "whole GPUs" in problems[7]


def test_dcgmi_dmon_name_with_spaces_and_graphics_activity_ratio(tmp_path: Path) -> None:
    # dcgmi dmon -e 50,1001,252 : DVNAM holds spaces; GRACT is a 0-1 ratio
    text = ("#Entity   DVNAM                       GRACT           FBUSD\n"
            "ID\n"
            "GPU 0     NVIDIA H100 80GB HBM3       0.250           40000\n"
            "GPU 1     NVIDIA H100 80GB HBM3       N/A             N/A\n")
    log = read_telemetry_log(_write(tmp_path, text, "dmon.txt"))
    assert [(s.gpu_name, s.utilization_pct, s.memory_used_bytes) for s in log.samples] == [
        ("NVIDIA H100 80GB HBM3", 25.0, 40000 * MIB), ("NVIDIA H100 80GB HBM3", None, None)]


def test_dcgmi_rows_before_a_header_are_problems(tmp_path: Path) -> None:
    text = "GPU 0  50  1000\n#Entity   GPUTL  FBUSD\nID\nGPU 0  50  1000\n"
    log = read_telemetry_log(_write(tmp_path, text, "dmon.txt"))
    assert len(log.samples) == 1
    assert log.problems[0].line == 1
    assert "before any '#Entity' header" in log.problems[0].message
