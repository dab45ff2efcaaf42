"""Issue 23: one answer per question across commands. doctor's plan line is the planner's verdict, asked as
`ortprov plan` asks it (commands/planning.plan_hosts); on a machine without a driver it used to say
"onnxruntime-gpu ... fits this host" while plan said there was no GPU to plan for, and its suggested
`ortprov apply --python <its own python>` exited 3. Every ortprov command doctor suggests must work as written.

The host-file cases are pure (the planner and doctor's rules on saved hosts); one case runs the real commands
on this machine, whatever it has (a driver or not), and compares them.
"""

from __future__ import annotations

import json
import re
import shlex

import pytest

from provisioner.commands.doctor import _plan
from provisioner.commands.options import PlanningOptions
from provisioner.commands.planning import plan_hosts
from provisioner.doctor import diagnose
from provisioner.errors import NoCompatiblePlan
from provisioner.matrix.load import load_matrix
from provisioner.plan import Plan
from provisioner.userfiles import read_host_file
from tests.support.cli import REPO, run_ortprov

HOSTS = REPO / "tests" / "hosts"


@pytest.mark.parametrize("name", sorted(p.name for p in HOSTS.glob("*.json")))
def test_doctor_plans_each_saved_host_as_plan_does(name: str) -> None:
    facts = read_host_file(HOSTS / name)
    matrix = load_matrix()
    planned = _plan(facts, matrix)
    try:
        verdict: Plan | NoCompatiblePlan = plan_hosts((facts,), matrix, PlanningOptions())
    except NoCompatiblePlan as refused:
        verdict = refused
    summary = planned.summary("/opt/venv/bin/python")
    if isinstance(verdict, Plan):
        assert summary.ok is True and summary.build and verdict.ort_version in summary.build
    else:
        assert summary.ok is False and verdict.message in summary.text, summary.text
        assert "fits this host" not in summary.text


def test_without_a_driver_the_fixes_plan_as_plan_would_and_say_how() -> None:
    facts = read_host_file(HOSTS / "cpu-dev-machine.json")
    assert not facts.driver.present
    planned = _plan(facts, load_matrix())
    assert isinstance(planned.verdict, NoCompatiblePlan) and "no NVIDIA driver" in planned.verdict.message
    assert isinstance(planned.for_fixes, Plan) and planned.flags == " --driver none"
    findings = diagnose(facts, None, None, planned.for_fixes, matrix=load_matrix(), plan_flags=planned.flags)
    applies = [f.fix for f in findings if "ortprov apply" in f.fix]
    assert all("--driver none" in fix for fix in applies), applies
    assert not any(f.code == "no-wheel-for-platform" for f in findings)  # the refusal is not a platform problem


@pytest.mark.parametrize("container", [None, "docker"])
def test_without_a_driver_one_cause_and_no_fix_that_replaces_the_working_cpu_build(container: str | None) -> None:
    """Issue 37: on a machine with no driver, doctor listed `apply --driver none` (a GPU build replacing the CPU
    onnxruntime that works, for a GPU that is not there) and both no-driver and gpu-hidden for the one cause."""
    import dataclasses

    from provisioner.verify.report import Failure, VerifyReport

    facts = read_host_file(HOSTS / "cpu-dev-machine.json")
    facts = dataclasses.replace(facts, environment=dataclasses.replace(facts.environment, container=container))
    assert not facts.driver.present and any(d.name == "onnxruntime" for d in facts.onnxruntime)
    planned = _plan(facts, load_matrix())
    report = VerifyReport(
        ok=False,
        status="failed",
        mode="session",
        provider="cuda",
        python="/opt/venv/bin/python",
        failures=(Failure("no-driver", "libcuda.so.1: cannot open shared object file"),),
    )
    findings = diagnose(facts, report, None, planned.for_fixes, matrix=load_matrix(), plan_flags=planned.flags)
    blocking = [f.code for f in findings if f.blocking]
    assert blocking == ["gpu-hidden" if container else "no-driver"], [(f.code, f.severity) for f in findings]
    assert not any("ortprov apply" in f.fix for f in findings), [f.fix for f in findings]
    (waiting,) = [f for f in findings if f.code == "cpu-package-only"]
    assert waiting.severity == "info" and "once `nvidia-smi` works here" in waiting.fix


def suggested_commands(fixes: list[str]) -> list[list[str]]:
    """The `ortprov ...` commands in fix texts, up to their first two spaces or `(`."""
    found = []
    for fix in fixes:
        for match in re.finditer(r"ortprov (?:apply|plan) [^(`;]*?(?=  |\(|`|;|$)", fix):
            found.append(shlex.split(match.group(0).strip()))
    return found


def test_on_this_machine_doctor_and_plan_give_one_answer_and_doctors_commands_work() -> None:
    """This machine, as it is: no driver here (the usual CI runner), or one (a GPU host)."""
    plan = run_ortprov("plan", "--json")
    doctor = run_ortprov("doctor", "--json", "--timeout", "120")
    assert plan.returncode in (0, 3) and doctor.returncode in (0, 1), (plan.stderr, doctor.stderr)
    line = json.loads(doctor.stdout)["plan"]
    if plan.returncode == 0:
        assert line["ok"] is True and json.loads(plan.stdout)["ort_version"] in line["build"]
    else:
        assert line["ok"] is False and json.loads(plan.stdout)["error"] in line["text"]
    fixes = [finding["fix"] for finding in json.loads(doctor.stdout)["findings"]]
    for words in suggested_commands(fixes):
        if words[1] == "apply":
            words.append("--dry-run")
        ran = run_ortprov(*words[1:])
        assert ran.returncode == 0, (" ".join(words), ran.stderr)


def test_one_fix_for_unsupported_gpu_arch_under_cuda_force_ptx_jit_in_verify_and_doctor() -> None:
    """Issue 37: verify's unsupported-gpu-arch fix ignored CUDA_FORCE_PTX_JIT while doctor named it. The same
    report gives the same fix whether doctor (with the host's facts) or verify (with the child's environment)
    reads it."""
    import dataclasses

    from provisioner.doctor.fixes import UNSET_PTX_JIT
    from provisioner.facts import RuntimeEnvironment
    from provisioner.verify.report import Failure, VerifyReport

    message = "CUDA failure 209: no kernel image is available for execution on the device ; GPU=0"
    report = VerifyReport(
        ok=False, status="failed", mode="session", provider="cuda", python="/opt/venv/bin/python",
        failures=(Failure("session-failed", message),),
    )  # fmt: skip
    facts = read_host_file(HOSTS / "h100-driver580.json")
    matrix = load_matrix()
    for value, forced in (("1", True), ("0", False), (None, False)):
        env = dataclasses.replace(facts.environment, cuda_force_ptx_jit=value)
        doctor = diagnose(dataclasses.replace(facts, environment=env), report, matrix=matrix)
        verify = diagnose(None, report, matrix=matrix, environment=RuntimeEnvironment(cuda_force_ptx_jit=value))
        (by_doctor,) = [f.fix for f in doctor if f.code == "unsupported-gpu-arch"]
        (by_verify,) = [f.fix for f in verify if f.code == "unsupported-gpu-arch"]
        assert (by_doctor == UNSET_PTX_JIT, by_verify == UNSET_PTX_JIT) == (forced, forced), (
            value,
            by_doctor,
            by_verify,
        )
