"""doctor --log on hostile input: every pattern linear on 1 MB lines, binary and a missing stdin refused with one
line (exit 2), a log over the read limit cut and said so. Speed targets live in benchmarks/bench_doctor_log.py."""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING

import pytest

from provisioner.doctor import evidence, normalize, patterns
from provisioner.doctor.rules import analyze_log
from tests.support.cli import run_ortprov

if TYPE_CHECKING:
    from pathlib import Path

PATTERNS = {
    f"{module.__name__.rsplit('.', 1)[1]}.{name}": value
    for module in (patterns, normalize)
    for name, value in vars(module).items()
    if isinstance(value, re.Pattern)
}
PATTERNS |= {
    f"patterns.{group}[{i}]": p
    for group in ("LOADER_AND_MISSING", "MISSING", "LOADING", "FIXED_BY")
    for i, p in enumerate(getattr(patterns, group))
}
PATTERNS |= {f"normalize._RECORD_PREFIXES[{i}]": p for i, p in enumerate(normalize._RECORD_PREFIXES)}
PATTERNS |= {f"normalize._LINE_PREFIXES[{i}]": p for i, p in enumerate(normalize._LINE_PREFIXES)}
# each pattern's worst cases: long runs of what its bounded repeats and alternatives consume, never completing
WORST = ("a" * 64, " " * 64, "9" * 64, "CUDA failure ", "GPU ", "cuda-", "x.so.1", "[ 'CPU", "results ", "Driver ")


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_no_pattern_backtracks_on_a_megabyte_line(name: str):
    pattern = PATTERNS[name]
    for unit in WORST:
        line = unit * (1_000_000 // len(unit))
        start = time.perf_counter()
        pattern.search(line)
        took = time.perf_counter() - start
        assert took < 30.0, f"{name} took {took:.1f} s on a 1 MB line of {unit[:12]!r}: super-linear"


def test_a_megabyte_line_is_read_at_its_ends():
    line = "x" * 1_000_000 + " libcudnn.so.9: cannot open shared object file"
    assert [f.code for f in analyze_log(line)] == ["cudnn-missing"]


def test_binary_input_is_refused_with_one_line(tmp_path: Path):
    blob = tmp_path / "core.bin"
    blob.write_bytes(b"\x7fELF\0\0\0" + bytes(range(256)) * 100)
    for source, why in ((str(blob), "binary"), ("/dev/zero", "is a device, not a file")):
        result = run_ortprov("doctor", "--log", source, timeout=60)
        assert result.returncode == 2
        assert why in result.stderr and "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) <= 2  # the line and its hint


def test_stdin_closed_or_empty_is_one_clear_line():
    result = run_ortprov("doctor", "--log", "-", input_text="", timeout=60)
    assert result.returncode == 2 and "empty" in result.stderr and "Traceback" not in result.stderr


def test_a_log_over_the_limit_is_cut_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from provisioner import userfiles

    monkeypatch.setattr(evidence, "READ_LIMIT", 4096)
    log = tmp_path / "big.log"
    log.write_text("libcudnn.so.9: cannot open shared object file\n" + "noise line\n" * 2000 + "the end\n")
    read = userfiles.read_log(str(log))
    assert read.cut and read.note and "first and last" in read.note
    assert len(read.text) <= 4096 + 1 and read.text.startswith("libcudnn") and read.text.endswith("the end\n")


def test_a_chinese_windows_log_in_gbk_is_read(tmp_path: Path):
    log = tmp_path / "zh.log"
    line = "ImportError: DLL load failed while importing onnxruntime_pybind11_state: 动态链接库(DLL)初始化例程失败。\n"
    log.write_bytes(line.encode("gbk"))
    result = run_ortprov("doctor", "--log", str(log), "--json", timeout=60)
    assert '"msvc-runtime-missing"' in result.stdout
