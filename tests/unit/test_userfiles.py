"""Issue 23/24: one reader of the files a user names (provisioner/userfiles.py), with the limits of
provisioner/validate.py. Every kind of file (host, plan, log, --shapes, model, the matrix folder) refuses the
same classes of input in one line naming it, exit 2: a named pipe with no writer (it used to hang), a device,
a folder, an empty name, a file too large, text that is not UTF-8, JSON nested 100,000 deep or holding a
5000-digit integer. A corrupt file in the cache of `ortprov matrix update` is named in one warning and the
shipped data used, by every command that loads the matrix.

The FIFO cases run as real processes with a timeout (a hang fails the test instead of stalling it); the others
in this process, through cli.main.
"""

from __future__ import annotations

import json
import os
import shutil
from typing import TYPE_CHECKING

import pytest

from provisioner import userfiles
from provisioner.errors import BadInput
from provisioner.matrix.load import shipped_dir
from tests.support.cli import REPO, run_ortprov
from tests.unit.test_fuzz_cli import assert_one_error, run_in_process

if TYPE_CHECKING:
    from pathlib import Path

HOST = REPO / "tests" / "hosts" / "h100-driver580.json"

# each reader, by the command line that makes ortprov read FILE
READERS: dict[str, tuple[str, ...]] = {
    "host file": ("plan", "--host", "{file}"),
    "plan file": ("apply", "--plan", "{file}", "--dry-run"),
    "log file": ("doctor", "--log", "{file}"),
    "--shapes": ("tune", "{model}", "--shapes", "{file}"),
    "model file": ("verify", "--model", "{file}"),
    "MODEL": ("tune", "{file}"),
}
TEXT_READERS = ("host file", "plan file", "--shapes")  # read whole, strictly UTF-8, JSON


@pytest.fixture
def model(tmp_path: Path) -> Path:
    """A file that stands for a model (readers refuse what they are given before a model is run)."""
    path = tmp_path / "model.onnx"
    path.write_bytes(b"\x08\x07")
    return path


def args_for(reader: str, file: str, model: Path) -> list[str]:
    return [arg.format(file=file, model=model) for arg in READERS[reader]]


@pytest.mark.parametrize("reader", list(READERS))
def test_a_named_pipe_with_no_writer_is_refused_at_once(tmp_path: Path, model: Path, reader: str) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    result = run_ortprov(*args_for(reader, str(fifo), model), timeout=60)  # it used to wait forever
    assert_one_error(result.returncode, result.stderr, True, f"{reader} fifo")
    assert "is a pipe (FIFO), not a file" in result.stderr


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        ("device", "is a device, not a file"),
        ("folder", "is a folder, not a file"),
        ("missing", "does not exist"),
        ("empty name", "empty"),
    ],
)
def test_what_is_not_a_regular_file_is_refused_naming_it(
    tmp_path: Path, model: Path, reader: str, kind: str, reason: str
) -> None:
    file = {"device": "/dev/null", "folder": str(tmp_path), "missing": str(tmp_path / "nope"), "empty name": ""}[kind]
    code, _, stderr = run_in_process(*args_for(reader, file, model))
    assert_one_error(code, stderr, True, f"{reader} {kind}")
    assert reason in stderr, stderr


BAD_TEXT: dict[str, tuple[bytes, str]] = {
    "Latin-1": (b'[{"x": "caf\xe9"}]', "is not UTF-8 text (byte 0xe9 at offset"),
    "UTF-16": (json.dumps([{"x": [1]}]).encode("utf-16"), "is UTF-16 text, not UTF-8"),
    "deep": (b"[" * 100_000 + b"]" * 100_000, "is nested 100000 levels deep (at most 100)"),
    "a huge integer": (b'[{"x": [1, ' + b"9" * 5000 + b"]}]", "holds an integer of 5000 digits"),
    "NaN": (b'[{"x": [NaN]}]', "holds NaN, which is not JSON"),
    "too large": (b" " * (userfiles.HOST_FILE_LIMIT + 1), "is larger than 8 MiB"),
}


@pytest.mark.parametrize("reader", TEXT_READERS)
@pytest.mark.parametrize("kind", list(BAD_TEXT))
def test_text_is_decoded_strictly_and_json_held_to_its_limits(
    tmp_path: Path, model: Path, reader: str, kind: str
) -> None:
    data, reason = BAD_TEXT[kind]
    file = tmp_path / "input.json"
    file.write_bytes(data)
    code, _, stderr = run_in_process(*args_for(reader, str(file), model))
    assert_one_error(code, stderr, True, f"{reader} {kind}")
    [line] = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert reason in line and f"{file.name}'" in line, line


def test_a_host_file_comes_through_a_pipe_with_dash() -> None:
    host = HOST.read_text(encoding="utf-8")
    piped = run_ortprov("plan", "--host", "-", input_text=host)
    saved = run_ortprov("plan", "--host", str(HOST))
    assert piped.returncode == saved.returncode == 0, piped.stderr
    assert piped.stdout.splitlines()[0] == saved.stdout.splitlines()[0]
    empty = run_ortprov("plan", "--host", "-", input_text="")
    assert empty.returncode == 2 and empty.stderr.startswith("error: host file on stdin is empty\n")


def test_the_readers_raise_bad_input_naming_the_file(tmp_path: Path) -> None:
    file = tmp_path / "plan.json"
    file.write_text('{"error": "no GPU", "hint": null}', encoding="utf-8")
    with pytest.raises(BadInput, match="holds an error, not a plan: no GPU"):
        userfiles.read_plan_file(file)
    with pytest.raises(BadInput, match=r"model file '.*' is a folder, not a file"):
        userfiles.model_file(str(tmp_path), "--model")
    with pytest.raises(userfiles.Unreadable, match="is a device"):
        userfiles.read_bytes("/dev/zero", 10)
    assert userfiles.read_host_file(HOST).driver.version


# -- the matrix: --dir and the cache of `matrix update` ---------------------------------------------------------


def copy_of_the_matrix(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for path in shipped_dir().glob("*.yaml"):
        shutil.copy2(path, folder / path.name)
    return folder


CORRUPT: dict[str, bytes] = {
    "not UTF-8": b"schema_version: 1\ndate: 2099-01-01\n\xff\xfe",
    "not YAML": b"schema_version: 1\ndate: 2099-01-01\n[[[[",
    "deep": b"date: 2099-01-01\n" + b"[" * 100_000,
    "empty": b"",
}


@pytest.mark.parametrize("kind", list(CORRUPT))
def test_a_corrupt_cached_matrix_is_named_in_a_warning_and_the_shipped_data_used(tmp_path: Path, kind: str) -> None:
    cache = tmp_path / "cache"
    cuda = copy_of_the_matrix(cache / "matrices") / "cuda.yaml"
    cuda.write_bytes(CORRUPT[kind])
    log = tmp_path / "error.log"
    log.write_text("libcudnn.so.9: cannot open shared object file\n", encoding="utf-8")
    runs = [(("plan", "--driver", "580", "--gpu-cc", "9.0", "--python", "3.12"), 0)]
    if kind == "not UTF-8":  # the case: it broke every command that loads the matrix
        runs += [(("doctor", "--log", str(log)), 1), (("matrix", "show", "--cuda", "13"), 0)]  # doctor: a finding
    for args, code in runs:
        result = run_ortprov(*args, cache=cache)
        assert result.returncode == code and "Traceback" not in result.stderr, (args, result.stderr)
        warnings = [line for line in result.stderr.splitlines() if "ignored the cached matrix" in line]
        assert len(warnings) == 1 and str(cuda) in warnings[0] and "using the shipped data" in warnings[0], (
            args,
            result.stderr,
        )


def test_matrix_check_names_a_matrix_file_that_is_not_a_file(tmp_path: Path) -> None:
    folder = copy_of_the_matrix(tmp_path / "m")
    (folder / "cuda.yaml").unlink()
    os.mkfifo(folder / "cuda.yaml")
    result = run_ortprov("matrix", "check", "--dir", str(folder), "--json", timeout=60)
    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout)["problems"] == [
        "cuda.yaml: (file): is a pipe (FIFO), not a file: reading it could wait for a writer forever"
    ]
