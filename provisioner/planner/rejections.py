"""Why the other candidates lost: the rejections a plan lists, and the NoCompatiblePlan error (every reason, and for
a GPU no build has code for, the build that has it or the source build that would)."""

from __future__ import annotations

from provisioner.errors import NoCompatiblePlan
from provisioner.matrix.query import build_gpu_code, gpu_code_for
from provisioner.plan import Rejection, Request
from provisioner.planner.common import Existing, Verdict, host_name, short_label, unique
from provisioner.planner.gpucode import driver_gpu_gaps
from provisioner.versions import vtuple

TYPE_CHECKING = False  # `typing` costs ~7 ms to import; the fast path of `ortprov plan` does without it
if TYPE_CHECKING:
    from provisioner.facts import HostFacts
    from provisioner.matrix.model import Matrix, OrtBuild


def rejections_for_plan(chosen: Verdict, verdicts: list[Verdict], hosts: tuple[HostFacts, ...] = ()) -> list[Rejection]:
    """Candidates newer than (or as new as) the chosen one that lost, and why (a loser without GPU code for a
    host's GPU names the code the chosen build has for it)."""
    newest = vtuple(chosen.build.ort_version)
    out: list[Rejection] = []
    for verdict in verdicts:
        if verdict is chosen or vtuple(verdict.build.ort_version) < newest:
            continue
        if verdict.problems:
            reason = "; ".join(verdict.problems)
            has = _code_it_has(chosen.build, verdict.missing_code, hosts)
            out.append(Rejection(verdict.build.label, reason + (f"; {has}" if has else "")))
        elif verdict.unread_code and not chosen.unread_code:
            ccs = ", ".join(sorted({cc for _, cc in verdict.unread_code}, key=vtuple))
            has = _code_it_has(chosen.build, verdict.unread_code, hosts)
            out.append(
                Rejection(
                    verdict.build.label,
                    f"its CUDA release supports compute capability {ccs}, but its wheels were not read (a side "
                    f"feed's): whether they hold code for it is unknown; {has or short_label(chosen.build)} "
                    f"(read from its wheels)",
                )
            )
        elif verdict.build.ort_version == chosen.build.ort_version:
            out.append(
                Rejection(
                    verdict.build.label,
                    f"runs, but {short_label(chosen.build)} is preferred: {_why_preferred(chosen, verdict)}",
                )
            )
    return out


def newest_loss(chosen: Verdict, verdicts: list[Verdict]) -> str | None:
    """One sentence for the default output: why the newest candidate lost, when the chosen build is older."""
    newer = [v for v in verdicts if v.problems and vtuple(v.build.ort_version) > vtuple(chosen.build.ort_version)]
    if not newer:
        return None
    newest = max(newer, key=lambda v: vtuple(v.build.ort_version))
    more = len(newest.problems) - 1
    return f"{short_label(newest.build)} is newer, but {newest.problems[0]}" + (
        f" (and {more} more reason{'s' if more > 1 else ''}: -v)" if more else ""
    )


def read_alternatives(chosen: Verdict, verdicts: list[Verdict], hosts: tuple[HostFacts, ...]) -> list[str]:
    """For a chosen build whose GPU code was not read: the newest build whose wheels were read to hold code for that
    GPU, and why it lost (a user may rather meet its condition than trust an unread wheel)."""
    said = []
    for index, cc in chosen.unread_code:
        if index >= len(hosts):
            continue
        tag = hosts[index].platform.tag
        for verdict in verdicts:
            code = build_gpu_code(verdict.build, tag)
            found = gpu_code_for(code[0], code[1], cc) if code is not None else (None, None)
            has = found[0] or (f"{found[1]} PTX" if found[1] else None)
            if has and verdict is not chosen:
                why = verdict.problems[0] if verdict.problems else "it was not chosen"
                said.append(
                    f"{short_label(verdict.build)} is the newest build whose {tag} wheels were read to hold code for "
                    f"compute capability {cc} ({has}), but {why}"
                )
                break
    return unique(said)


def _code_it_has(build: OrtBuild, missing: tuple[tuple[int, str], ...], hosts: tuple[HostFacts, ...]) -> str:
    """ "1.28.0 has sm_100a": the chosen build's code for the compute capabilities a loser lacks."""
    said = []
    for index, cc in missing:
        if index >= len(hosts):
            continue
        code = build_gpu_code(build, hosts[index].platform.tag)
        if code is None:
            continue
        cubin, jit = gpu_code_for(code[0], code[1], cc)
        has = cubin or (f"{jit} PTX" if jit else None)
        if has:
            said.append(f"{build.ort_version} has {has}" + (f" for {cc}" if len(missing) > 1 else ""))
    return ", ".join(unique(said))


def _why_preferred(chosen: Verdict, loser: Verdict) -> str:
    if loser.minor_compat and not chosen.minor_compat:
        return "the driver supports its CUDA fully, without minor-version compatibility"
    if chosen.score > loser.score:
        return "it reuses CUDA libraries already present"
    if chosen.build.index_url is None and loser.build.index_url is not None:
        return "it is on PyPI, not a side index"
    return "it is built for a newer CUDA"


def mixed_cuda_error(
    chosen: Verdict, verdicts: list[Verdict], hosts: tuple[HostFacts, ...], existing: Existing, mixing: str
) -> NoCompatiblePlan:
    """No build of the CUDA the environment already loads runs, and the one that would run mixes a library of the
    same name but another CUDA major into the process: refused, with why and the override."""
    present = " and ".join(f"CUDA {m}" for m in existing.cuda if m != chosen.build.cuda_major)
    wanted = {m for m in existing.cuda if m != chosen.build.cuda_major}
    own = [v for v in verdicts if v.build.cuda_major in wanted and v.problems]
    why = f"; the newest, {short_label(own[0].build)}: {own[0].problems[0]}" if own else ""
    rejected = [Rejection(v.build.label, "; ".join(v.problems) or "runs, but see the error") for v in verdicts]
    where = "this host" if len(hosts) == 1 else f"all {len(hosts)} hosts"
    return NoCompatiblePlan(
        f"no onnxruntime-gpu build for {present}, the CUDA this environment's process already loads, runs on "
        f"{where}{why}",
        rejected=rejected,
        hint=(
            f"{mixing}. `--cuda {chosen.build.cuda_major}` plans {short_label(chosen.build)} anyway, at that risk; "
            f"safer: a separate environment, whose process loads no CUDA {'/'.join(str(m) for m in sorted(wanted))} "
            f"libraries"
        ),
    )


def driver_gpu_error(hosts: tuple[HostFacts, ...], matrix: Matrix) -> NoCompatiblePlan | None:
    """The no-plan error for hosts whose driver cannot run their GPU (too old for its architecture, or a branch that
    dropped it): no onnxruntime build can help there, so no candidate is judged."""
    gaps = [gap for i, h in enumerate(hosts) for gap in driver_gpu_gaps(h, host_name(h, i, len(hosts)), matrix)]
    if not gaps:
        return None
    gap = gaps[0][0]
    hint = (
        f"install {gap.needed}, then plan again (--driver: its version)"
        if gap.kind == "too-old"
        else f"with {gap.needed} installed, plan again (--driver: its version): the builds it runs are planned then"
    )
    return NoCompatiblePlan(
        "no onnxruntime-gpu build can run here: " + "; ".join(sentence for _, sentence in gaps), hint=hint
    )


def no_plan(verdicts: list[Verdict], hosts: tuple[HostFacts, ...], request: Request) -> NoCompatiblePlan:
    rejected = [Rejection(v.build.label, "; ".join(v.problems)) for v in verdicts]
    pinned = (
        " matching "
        + " and ".join(
            p
            for p in (
                f"--ort {request.ort}" if request.ort else "",
                f"--cuda {request.cuda}" if request.cuda else "",
            )
            if p
        )
        if (request.ort or request.cuda)
        else ""
    )
    would = _what_would_run(verdicts, hosts)
    if len(hosts) == 1:
        message = f"no onnxruntime-gpu build{pinned} runs on this host"
        first = verdicts[0].problems[0] if verdicts and verdicts[0].problems else ""
        hint = "\n      ".join(([f"the newest candidate: {first}"] if first else []) + would) or None
        return NoCompatiblePlan(message, rejected=rejected, hint=hint)
    counts = [sum(1 for v in verdicts if i in v.blocking_hosts) for i in range(len(hosts))]
    worst = max(counts)
    blockers = [host_name(h, i, len(hosts)) for i, h in enumerate(hosts) if counts[i] == worst]
    message = (
        f"no onnxruntime-gpu build{pinned} runs on all {len(hosts)} hosts; {' and '.join(blockers)} "
        f"{'blocks' if len(blockers) == 1 else 'block'} it"
    )
    hint = "\n      ".join(["plan for the blocking host separately, or upgrade it", *would])
    return NoCompatiblePlan(message, rejected=rejected, hint=hint)


def _what_would_run(verdicts: list[Verdict], hosts: tuple[HostFacts, ...]) -> list[str]:
    """For GPUs no candidate holds code for: the builds whose wheels do have it (rejected for other reasons),
    and the source build that would."""
    lacking = sorted({cc for v in verdicts for _, cc in v.missing_code}, key=vtuple)
    lines = []
    for cc in lacking:
        with_code = [
            v
            for v in verdicts
            if cc not in {c for _, c in v.missing_code}
            and all(build_gpu_code(v.build, h.platform.tag) is not None for h in hosts)
        ]
        if with_code:
            older = with_code[0]
            lines.append(
                f"{short_label(older.build)} holds GPU code for compute capability {cc}, but "
                f"{'; '.join(older.problems) or 'it was not chosen'}"
            )
        digits = cc.replace(".", "")
        lines.append(
            f"no release's wheels hold code that runs on compute capability {cc}: build onnxruntime from source "
            f"for it (./build.sh --use_cuda --cmake_extra_defines CMAKE_CUDA_ARCHITECTURES={digits})"
            if not with_code
            else f"or build onnxruntime from source for it (CMAKE_CUDA_ARCHITECTURES={digits})"
        )
    return lines
