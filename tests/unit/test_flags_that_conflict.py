"""Issue 37: two flags that ask for different things are refused, and a flag that changes the plan for one
format only says so where it is not that format (nothing accepted silently)."""

from __future__ import annotations

import pytest

from tests.unit.test_fuzz_cli import assert_one_error, run_in_process

H100 = ("--driver", "580", "--gpu-cc", "9.0", "--python", "3.12", "--platform", "linux-x86_64")
BASE_NOTE = "note: --base cuda: planned for the nvidia/cuda image"


@pytest.mark.parametrize("provider", ["cuda"])
def test_tensorrt_and_another_provider_are_refused(tmp_path, provider: str) -> None:  # noqa: ANN001
    code, _, stderr = run_in_process("verify", "--provider", provider, "--tensorrt", "--python", str(tmp_path))
    assert_one_error(code, stderr, True, "verify --provider cuda --tensorrt")
    assert f"error: --tensorrt and --provider {provider} ask for different providers" in stderr


def test_tensorrt_twice_over_is_one_request(tmp_path) -> None:  # noqa: ANN001
    code, _, stderr = run_in_process("verify", "--provider", "tensorrt", "--tensorrt", "--python", str(tmp_path))
    assert code == 2 and "ask for different providers" not in stderr  # refused for the folder, not the flags


@pytest.mark.parametrize("fmt", ["text", "json", "pip", "uv", "requirements", "conda"])
def test_base_cuda_outside_a_dockerfile_says_what_it_did(fmt: str) -> None:
    args = ["plan", *H100, "--base", "cuda"]
    code, _, stderr = run_in_process(*args, *(["--json"] if fmt == "json" else ["--format", fmt]))
    assert code == 0, stderr
    assert BASE_NOTE in stderr


def test_base_cuda_for_a_dockerfile_needs_no_note() -> None:
    for args in (("dockerfile", *H100, "--base", "cuda"), ("plan", *H100, "--format", "dockerfile", "--base", "cuda")):
        code, _, stderr = run_in_process(*args)
        assert code == 0 and BASE_NOTE not in stderr, stderr
