"""Issue 23: property-based fuzzing (hypothesis) of every declared option of every command and of every field of
a host file. Whatever the value, ortprov answers with at most one `error:` line, never a traceback, never exit
70 (a bug), and a refusal is exit 2 with exactly one error line.

The values are drawn from the classes of the 486 bad inputs of issue 23: numbers (negative, zero, huge, with
thousands of digits, floats, inf, nan, 1e308, hex), durations past what the OS can sleep, Unicode digits
(full-width, Arabic-Indic, Devanagari, mathematical), empty and blank values, values that are options (`--json`,
`-v`, `-`), paths of special files (a FIFO with no writer, devices, /proc, a folder, a binary file, a missing
one, a name 5000 long), text that is not UTF-8 (lone surrogates, as Python reads such argv), control characters,
and any Unicode text. A host file gets any JSON value at any of its fields.

The runs are in this process (cli.main, milliseconds each), with a context that makes each command stop early
and cheaply once every option is checked (a target interpreter that is not one, a saved plan that is not JSON, a
log for doctor, a dead index). The examples are derandomized (the same on every run, so CI cannot flake) and
bounded; `HYPOTHESIS_PROFILE=explore` draws many more, at random.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from provisioner.commands.options import OPTIONS, PLANNING, Declared
from tests.unit.test_fuzz_cli import HOSTS, SEED_HOSTS, assert_one_error, commands, leaves, replaced, run_in_process

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

settings.register_profile(
    "ci",
    max_examples=30,
    derandomize=True,
    deadline=None,
    database=None,  # nothing written into the checkout
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.register_profile(
    "explore",
    max_examples=2000,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# what makes each command stop early once its options are checked (a bad value is refused before these act)
CHEAP: dict[str, tuple[str, ...]] = {
    "detect": ("--python", "{tmp}/a-file"),
    "plan": ("--driver", "580", "--gpu-cc", "9.0"),
    "dockerfile": ("--driver", "580", "--gpu-cc", "9.0"),
    "apply": ("--dry-run", "--python", "{tmp}/a-file"),
    "download": ("--dest", "{tmp}/wheels", "--plan", "{tmp}/error.log"),
    "verify": ("--python", "{tmp}/a-file"),
    "doctor": ("--log", "{tmp}/error.log"),
    "tune": ("{tmp}/binary", "--python", "{tmp}/a-file"),
    "matrix update": ("--index-url", "http://127.0.0.1:9/simple/", "--retries", "0", "--timeout", "2"),
}

DIGITS = (0xFF10, 0x0660, 0x0966, 0x1D7CE)  # full-width, Arabic-Indic, Devanagari, mathematical bold zero


def in_digits(text: str, zero: int) -> str:
    """`text` with its ASCII digits written in another script's digits."""
    return "".join(chr(zero + int(c)) if c.isascii() and c.isdigit() else c for c in text)


NUMBERS = st.one_of(
    st.integers(-(10**6), 10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(4000, 6000).map(lambda n: "9" * n),
    st.sampled_from(["1e308", "-1e308", "inf", "-inf", "nan", "0", "-0", "0x10", "1_000", "99999999", "2147483648"]),
)
VERSIONS = st.sampled_from(["8.6", "580", "3.12", "12.4", "1.20", "2.28", "535.104.05", "9.0", "8.0,9.0", "120"])
UNICODE_DIGITS = st.builds(in_digits, VERSIONS | NUMBERS, st.sampled_from(DIGITS))
EMPTY = st.sampled_from(["", " ", "\t", "\n"])
OPTION_LIKE = st.sampled_from(["--json", "-v", "-q", "-y", "--", "-", "--help", "--driver=580"])
PATHS = st.sampled_from(
    [
        "{tmp}/fifo",
        "/dev/null",
        "/dev/zero",
        "/dev/full",
        "/proc/self/mem",
        "/proc/self/status",
        "{tmp}/a-folder",
        "{tmp}/a-file",
        "{tmp}/binary",
        "{tmp}/deep.json",
        "{tmp}/no-such-file",
        "{tmp}/a-file/below",
        "/" + "y" * 300,
        "x" * 5000,
        ".",
        "~",
        "~no-such-user/x",
    ]
)
TEXT = st.text(st.characters(blacklist_characters="\x00"), max_size=40)  # argv cannot hold a NUL
NOT_UTF8 = st.builds(lambda text, byte: text + chr(0xDC00 + byte), TEXT, st.integers(0x80, 0xFF))
VALUES = st.one_of(NUMBERS, VERSIONS, UNICODE_DIGITS, EMPTY, OPTION_LIKE, PATHS, NOT_UTF8, TEXT)


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The files the values and contexts name: a log, a file, a folder, a binary file, a FIFO, deep JSON."""
    tmp = tmp_path_factory.mktemp("property")
    (tmp / "error.log").write_text("libcudnn.so.9: cannot open shared object file\n", encoding="utf-8")
    (tmp / "a-file").write_text("not a folder\n", encoding="utf-8")
    (tmp / "a-folder").mkdir()
    (tmp / "binary").write_bytes(bytes(range(256)) * 64)
    (tmp / "deep.json").write_bytes(b"[" * 100_000 + b"]" * 100_000)
    os.mkfifo(tmp / "fifo")
    return tmp


@pytest.fixture(autouse=True)
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test in a folder of its own: a relative --venv or --dest lands there, not in the checkout."""
    monkeypatch.chdir(tmp_path)


def declared_options(command: Any) -> list[tuple[str, Declared]]:
    """(flag, declaration) of every option of a command that takes a value (the positional argument as "")."""
    found = []
    for param in command.params:
        declared = {**PLANNING, **OPTIONS}.get(str(param.name))
        if declared is None or getattr(param, "hidden", False) or declared.annotation is bool:
            continue
        found.append(("" if declared.argument else declared.flags[-1], declared))
    return found


def command_cases() -> Iterator[Any]:
    for name, command in commands():
        yield pytest.param(name, declared_options(command), id=name)


@pytest.mark.parametrize(("name", "options"), list(command_cases()))
def test_every_option_of_every_command_takes_any_value_without_a_bug(
    place: Path, name: str, options: list[tuple[str, Declared]]
) -> None:
    assert options, f"{name} declares no option with a value"

    @given(option=st.sampled_from(options), value=VALUES)
    def check(option: tuple[str, Declared], value: str) -> None:
        flag, _ = option
        value = value.replace("{tmp}", str(place))
        context = [arg.format(tmp=place) for arg in CHEAP.get(name, ())]
        if not flag:  # the positional argument (tune's MODEL) replaces the context's first word
            given_args, context = [value], context[1:]
        else:
            given_args = [flag, value]
        args = [*name.split(), *context, *given_args]
        code, _, stderr = run_in_process(*args)
        bad = code == 2  # whatever is refused is refused in one line
        assert_one_error(code, stderr, bad, " ".join(args))

    check()


# -- host files: any JSON value at any field ----------------------------------------------------------------

JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**40), 10**40),
    st.floats(allow_nan=False, allow_infinity=False),
    TEXT,
    UNICODE_DIGITS,
    VERSIONS,
)
JSON_VALUES = st.recursive(
    JSON_SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3), max_leaves=8
)


def host_fields() -> list[tuple[str, tuple[Any, ...]]]:
    fields = []
    for seed in SEED_HOSTS:
        document = json.loads((HOSTS / seed).read_text(encoding="utf-8"))
        fields += [(seed, path) for path, _ in leaves(document)]
    return fields


@given(field=st.sampled_from(host_fields()), value=JSON_VALUES)
@settings(max_examples=150 if os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci" else 5000)
def test_any_value_at_any_field_of_a_host_file_is_planned_or_refused_in_one_line(
    tmp_path_factory: pytest.TempPathFactory, field: tuple[str, tuple[Any, ...]], value: Any
) -> None:
    seed, path = field
    document = json.loads((HOSTS / seed).read_text(encoding="utf-8"))
    file = tmp_path_factory.mktemp("host") / "host.json"
    file.write_text(json.dumps(replaced(document, path, value)), encoding="utf-8")
    code, _, stderr = run_in_process("plan", "--host", str(file))
    assert_one_error(code, stderr, code == 2, f"plan --host {seed} with {path} = {value!r}")


@given(data=st.binary(max_size=2000) | st.builds(lambda t: t.encode("utf-8", "surrogatepass"), TEXT))
@settings(max_examples=60 if os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci" else 2000)
def test_any_bytes_as_a_host_file_are_refused_in_one_line(
    tmp_path_factory: pytest.TempPathFactory, data: bytes
) -> None:
    file = tmp_path_factory.mktemp("bytes") / "host.json"
    file.write_bytes(data)
    code, _, stderr = run_in_process("plan", "--host", str(file))
    assert_one_error(code, stderr, True, f"plan --host ({data[:60]!r})")


# -- plan files: any text at any string of a step (issue 37: a plan's text output crashed where --json printed it)

PLAN_TEXT = st.one_of(
    TEXT,
    st.sampled_from(["onnxruntime-gpu==1.31.1; rm -rf x", "x==1 y", "x==1\n--index-url http://e/", "-e .", "x @ y"]),
)


def plan_strings(document: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The paths of every string a step of a saved plan holds (packages, URLs, names, environment)."""
    return [path for path, value in leaves(document) if path[:1] == ("steps",) and isinstance(value, str)]


@pytest.fixture(scope="module")
def saved_plan(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    code, stdout, stderr = run_in_process("plan", "--json", "--driver", "580", "--gpu-cc", "9.0", "--python", "3.11")
    assert code == 0, stderr
    document: dict[str, Any] = json.loads(stdout)
    return document


def test_a_plan_file_with_any_text_in_a_step_is_refused_on_load_in_every_output_mode(
    tmp_path_factory: pytest.TempPathFactory, saved_plan: dict[str, Any]
) -> None:
    paths = plan_strings(saved_plan)
    assert any(path[-2:-1] == ("packages",) for path in paths)

    @given(path=st.sampled_from(paths), value=PLAN_TEXT)
    def check(path: tuple[Any, ...], value: str) -> None:
        folder = tmp_path_factory.mktemp("plan")
        file = folder / "plan.json"
        file.write_text(json.dumps(replaced(saved_plan, path, value)), encoding="utf-8")
        base = ("apply", "--plan", str(file), "--dry-run", "--venv", str(folder / "venv"))
        text_code, _, text_err = run_in_process(*base)
        json_code, json_out, json_err = run_in_process(*base, "--json")
        case = f"{path} = {value!r}"
        assert_one_error(text_code, text_err, text_code == 2, case)
        assert_one_error(json_code, json_err, json_code == 2, case)
        assert text_code == json_code, f"{case}: text exit {text_code}, --json exit {json_code}"
        if text_code == 2:  # refused on load: the error object names the plan file, not printed as a valid plan
            assert "plan file" in json.loads(json_out)["error"], case

    check()


def test_a_plan_whose_requirement_has_text_after_the_version_is_refused_naming_it(
    tmp_path: Path, saved_plan: dict[str, Any]
) -> None:
    path = next(p for p in plan_strings(saved_plan) if p[-2:-1] == ("packages",))
    file = tmp_path / "plan.json"
    file.write_text(json.dumps(replaced(saved_plan, path, "onnxruntime-gpu==1.31.1; rm -rf x")), encoding="utf-8")
    for extra in ((), ("--json",)):
        code, stdout, stderr = run_in_process(
            "apply", "--plan", str(file), "--dry-run", "--venv", str(tmp_path / "venv"), *extra
        )
        assert code == 2, stderr
        assert "step 1 (install): requirement 'onnxruntime-gpu==1.31.1; rm -rf x' is not a PEP 508" in stderr
        assert "internal error" not in stderr + stdout


# -- host files: a name field with something invisible in it (issue 37: "no wheel for linux-x86_64 ... it has
# wheels for linux-x86_64", exit 3, for an arch of "x86_64\u0000")

INVISIBLE = st.sampled_from(["\x00", "\t", "\n", "\r", "\x7f", "\x85", "\u00a0", "\u200b", "\ufeff", " ", "\u2028"])


@given(field=st.sampled_from(["os", "arch"]), extra=INVISIBLE, where=st.sampled_from(["before", "after"]))
@settings(max_examples=40 if os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci" else 1000)
def test_a_platform_name_with_anything_invisible_is_bad_input_naming_the_field(
    tmp_path_factory: pytest.TempPathFactory, field: str, extra: str, where: str
) -> None:
    document = json.loads((HOSTS / SEED_HOSTS[0]).read_text(encoding="utf-8"))
    value = document["platform"][field]
    file = tmp_path_factory.mktemp("host") / "host.json"
    bad = extra + value if where == "before" else value + extra
    file.write_text(json.dumps(replaced(document, ("platform", field), bad)), encoding="utf-8")
    code, _, stderr = run_in_process("plan", "--host", str(file))
    assert_one_error(code, stderr, True, f"platform.{field} = {bad!r}")
    assert f"$.platform.{field}: {bad!r} is not" in stderr


# -- logs: any text in any encoding a byte-order mark names (issue 37: a UTF-32 log, or one starting with a
# UTF-16 BOM, read as "nothing about ONNX Runtime")

CAUSE = "libcudnn.so.9: cannot open shared object file: No such file or directory"
ENCODINGS = ("utf-8", "utf-8-sig", "utf-16", "utf-16-be", "utf-32", "utf-32-be")
BOMS = {"utf-16-be": b"\xfe\xff", "utf-32-be": b"\x00\x00\xfe\xff"}  # Python writes no BOM for these


def encoded(text: str, encoding: str) -> bytes:
    return BOMS.get(encoding, b"") + text.encode(encoding, "surrogatepass")


def doctor_codes(stdout: str) -> list[str]:
    return [finding["code"] for finding in json.loads(stdout)["findings"]]


@given(
    before=st.text(st.characters(blacklist_categories=["Cs"]), max_size=60),
    encoding=st.sampled_from(ENCODINGS),
    stdin=st.booleans(),
)
@settings(max_examples=60 if os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci" else 2000)
def test_a_log_in_any_encoding_its_bom_names_is_read_as_its_text(
    tmp_path_factory: pytest.TempPathFactory, before: str, encoding: str, stdin: bool
) -> None:
    text = f"{before}\n{CAUSE}\n"
    file = tmp_path_factory.mktemp("log") / "error.log"
    file.write_bytes(encoded(text, encoding))
    args = ("doctor", "--log", "-" if stdin else str(file), "--json")
    code, stdout, stderr = run_in_process(*args, stdin_bytes=file.read_bytes() if stdin else None)
    assert_one_error(code, stderr, False, f"{encoding} {text!r}")
    assert "cudnn-missing" in doctor_codes(stdout), f"{encoding} via {'stdin' if stdin else 'file'}: {stdout[:300]}"


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("stdin", [False, True], ids=["file", "stdin"])
def test_a_long_log_cut_to_its_head_and_tail_keeps_its_encoding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encoding: str, stdin: bool
) -> None:
    """The head and the tail of a log longer than READ_LIMIT are joined on a code unit of its encoding: the
    cause at its end is still read (a UTF-16 tail that starts mid-character decodes to other text)."""
    monkeypatch.setattr("provisioner.doctor.evidence.READ_LIMIT", 4096)
    file = tmp_path / "error.log"
    file.write_bytes(encoded("starting the service, ünïcode…\n" * 400 + "x" + f"\n{CAUSE}\n", encoding))
    args = ("doctor", "--log", "-" if stdin else str(file), "--json")
    code, stdout, stderr = run_in_process(*args, stdin_bytes=file.read_bytes() if stdin else None)
    assert code in (0, 1), stderr
    assert "cudnn-missing" in doctor_codes(stdout), f"{encoding}: {stdout[:300]}"


@pytest.mark.parametrize(
    "data", [b"\xff\xfea\x00\x00\xd8b\x00", b"\xff\xfea\x00b", b"\x00\x00\xfe\xff\x00\x11\x00\x00"]
)
def test_a_log_its_bom_does_not_decode_is_refused_saying_so(tmp_path: Path, data: bytes) -> None:
    file = tmp_path / "error.log"
    file.write_bytes(data)
    code, _, stderr = run_in_process("doctor", "--log", str(file))
    assert_one_error(code, stderr, True, repr(data))
    assert "byte-order mark but is not UTF-" in stderr


# -- an empty name is no name (issue 37: `tune --inputs ''` read the current folder)

NAMING = ("DIR", "FILE", "FILE|-", "PATH", "DIR|URL", "URL")


def naming_options() -> Iterator[Any]:
    for name, command in commands():
        for flag, declared in declared_options(command):
            if flag and declared.metavar in NAMING:
                yield pytest.param(name, flag, id=f"{name} {flag}")


@pytest.mark.parametrize(("name", "flag"), list(naming_options()))
@pytest.mark.parametrize("empty", ["", " ", "\t"])
def test_an_empty_name_of_a_file_folder_or_url_is_refused_naming_the_flag(
    place: Path, name: str, flag: str, empty: str
) -> None:
    context = [arg.format(tmp=place) for arg in CHEAP.get(name, ())]
    if flag in context:  # the context's own value of this flag is replaced
        at = context.index(flag)
        context = context[:at] + context[at + 2 :]
    code, _, stderr = run_in_process(*name.split(), *context, flag, empty)
    assert_one_error(code, stderr, True, f"{name} {flag} {empty!r}")  # never read as "." (the current folder)
    if declared_by_flag(name, flag).metavar == "DIR":  # a folder: refused as a name, before anything reads it
        assert f"error: {flag} is empty" in stderr, stderr


def declared_by_flag(name: str, flag: str) -> Declared:
    command = dict(commands())[name]
    return next(declared for each, declared in declared_options(command) if each == flag)
