"""The pure planner: (hosts, Matrix, Request) -> Plan, or NoCompatiblePlan that explains every loser.

Nothing here reads the machine or the network, and no version number lives in this code: which build
needs which driver, compute capability, Python, platform and libraries comes from the Matrix.

Rules, in order:
0. A host whose driver cannot run its GPU at all (its CUDA predates the GPU's compute capability, or its branch
   dropped the GPU's architecture: `matrix/query.driver_gpu_gap`) gets NoCompatiblePlan before any candidate.
1. Candidates are the matrix builds that match `--ort` and `--cuda` (BadInput when a pin names nothing).
2. A candidate runs on a host when the host's platform has a wheel (and its glibc meets the wheel's floor),
   the target Python has a wheel for that platform, the driver meets the CUDA release's floor (or the CUDA
   major's minor-version-compatibility floor), and every GPU runs the GPU code read from the platform's wheel:
   a cubin of the same major and a minor <= the GPU's (an `a` cubin: exactly that GPU), or PTX of its compute
   capability or older, JIT-compiled only by a driver that supports the build's CUDA (where the wheel was not
   read: the CUDA release's compute capabilities). With --tensorrt the platform's wheels must ship a TensorRT
   provider; with --cuda-libraries system a probed host's loader path must hold every library the provider
   links, and cuDNN; with NVIDIA wheels, none of them may install over the files of an installed distribution
   that stays (torch's nvidia-cudnn-cu12 and nvidia-cudnn-cu13 share nvidia/cudnn/), and every library its CUDA
   provider imports must be a file of one of them, or come with the driver or the OS. Unknown facts (no driver
   on a build server, no GPU, no Python) are not rejected on: they become notes. A host no candidate runs on
   gets NoCompatiblePlan with every reason, and for a GPU no build has code for, the build that has it or the
   source build that would.
3. Of the candidates that run on every host: a build whose wheels were read to hold code for every GPU over one
   judged by its CUDA release alone (said in its Why, with the newest read build that has the code); then a build
   of the CUDA major the target's process already loads (`process.py`: torch, NVIDIA wheels, conda packages,
   LD_LIBRARY_PATH, the ld.so cache; the first met where it loads several) over a newer release of another (said,
   with what that one would mix into the process); then the newest release (the newest candidate's reason for
   losing is one line of the plan's reasons); within it, the build whose CUDA/cuDNN majors match libraries
   already present, then the PyPI build, then the newest CUDA. Where no build of the environment's CUDA runs and
   the one that does would load a second copy of a library under the same name (libcudnn.so.9 for another CUDA
   major), NoCompatiblePlan says so and that `--cuda N` plans it anyway, at that risk.
4. NVIDIA library wheels are pinned exactly (already-installed versions first, then the newest versions
   whose CUDA minor the driver supports), among the versions with a wheel for every host's platform; a
   build whose needed library has no wheel at all for a host's platform does not run there (rule 2);
   conflicting onnxruntime flavours are uninstalled first.

The package, one module per step of that story (each pure, like this one):
- `candidates.py`: rule 1;
- `judge.py`: rule 2 for one candidate (platform, Python, driver, the library wheels for the platform, system
  libraries, files installed over, the provider's closure), with `gpucode.py` (the GPU code against each GPU)
  and `tensorrt.py` (--tensorrt: what can be served, and the plan's TensorRT version, step, reason and notes);
- `preference.py`: rule 3 and the sentences that say why the chosen build won; `process.py`: the libraries the
  process loads, their CUDA majors, and what a build of another major mixes in;
- `libraries.py`: rule 4's pins, the closure lines, what --cuda-libraries system needs;
- `steps.py`: the uninstall, install and loader-hook steps, and `retarget` (a plan for the environment it runs in);
- `rejections.py`: why the others lost, and the NoCompatiblePlan error;
- `common.py`: what they share (the verdict on one candidate, the libraries already present, names in sentences).
"""

from __future__ import annotations

from provisioner.errors import BadInput
from provisioner.matrix.query import build_tensorrt
from provisioner.plan import Plan
from provisioner.planner.candidates import candidates
from provisioner.planner.common import Existing, driver_cuda_version, host_name, short_label, unique
from provisioner.planner.judge import judge
from provisioner.planner.libraries import closure_lines, library_pins, system_library_notes
from provisioner.planner.plugin import PLUGIN_PROVIDERS, make_plugin_plan
from provisioner.planner.preference import (
    choice_reason,
    environment_lines,
    existing_libraries,
    other_major_lines,
    preference,
    reuse_reasons,
)
from provisioner.planner.rejections import (
    driver_gpu_error,
    mixed_cuda_error,
    newest_loss,
    no_plan,
    read_alternatives,
    rejections_for_plan,
)
from provisioner.planner.steps import conflicting_flavours, install_steps, loader_hook, plain_code_line, retarget
from provisioner.planner.tensorrt import (
    tensorrt_notes,
    tensorrt_reason,
    tensorrt_source,
    tensorrt_steps,
    tensorrt_version,
)

TYPE_CHECKING = False  # `typing` costs ~7 ms to import; the fast path of `ortprov plan` does without it
if TYPE_CHECKING:
    from collections.abc import Sequence

    from provisioner.facts import HostFacts
    from provisioner.matrix.model import Matrix
    from provisioner.plan import LibraryPin, Request


def make_plan(hosts: Sequence[HostFacts], matrix: Matrix, request: Request) -> Plan:
    """The newest build that runs on every host, its install steps and pins; NoCompatiblePlan otherwise."""
    hosts = tuple(hosts)
    if not hosts:
        raise BadInput("no host to plan for", hint="pass --host FILE or the --driver/--gpu-cc/--python flags")
    if request.provider in PLUGIN_PROVIDERS:
        return make_plugin_plan(hosts, matrix, request)
    unrunnable = driver_gpu_error(hosts, matrix)
    if unrunnable is not None:
        raise unrunnable
    existing = existing_libraries(hosts, matrix) if request.prefer_existing_libraries else Existing()
    verdicts = [judge(build, hosts, matrix, request, existing) for build in candidates(matrix, request)]
    runnable = [v for v in verdicts if not v.problems]
    if not runnable:
        raise no_plan(verdicts, hosts, request)
    runnable.sort(key=lambda v: preference(v, request), reverse=True)
    chosen = runnable[0]
    build = chosen.build
    refusal, other_notes = other_major_lines(chosen, existing, hosts, matrix, request)
    if refusal:
        raise mixed_cuda_error(chosen, verdicts, hosts, existing, refusal[0])
    env_reasons, env_notes = environment_lines(chosen, runnable, existing, hosts, matrix)

    if request.cuda_libraries == "system":
        pins: list[LibraryPin] = []
        library_requirements: list[str] = []
        cudnn_version = build.cudnn_version
        library_notes = system_library_notes(build, hosts)
    else:
        pins, library_requirements, library_notes, cudnn_version = library_pins(build, hosts, matrix, existing)
    tensorrt = build_tensorrt(matrix, build) if request.tensorrt else None
    uninstall = conflicting_flavours(build, hosts, pins)
    wheels_trt = tensorrt if tensorrt and request.tensorrt_libraries == "wheels" else None
    steps = install_steps(build, uninstall, library_requirements, wheels_trt, extras=request.cuda_libraries != "system")
    steps += tensorrt_steps(wheels_trt, request)
    hook_steps, hook_notes = loader_hook(build, hosts, request)
    steps += hook_steps

    lost = newest_loss(chosen, verdicts)
    reasons = [choice_reason(build, hosts, matrix, request, bool(env_reasons)), *([lost] if lost else []), *env_reasons]
    reasons += chosen.reasons
    reasons += reuse_reasons(chosen, existing, pins)
    closure_reasons, closure_notes = closure_lines(build, hosts, matrix, pins, library_requirements, request)
    reasons += closure_reasons
    notes = [*chosen.notes, *library_notes, *env_notes, *other_notes, *hook_notes]
    notes += closure_notes
    notes += read_alternatives(chosen, verdicts, hosts)
    if not build.confirmed:
        source = build.sources[0] if build.sources else "no source recorded"
        notes.append(
            f"{short_label(build)} is known from documentation only ({source}): its CUDA and cuDNN versions "
            f"were not read from the wheel; `ortprov verify` after installing proves them"
        )
    if tensorrt:
        reasons.append(tensorrt_reason(build, tensorrt, request))
        notes += tensorrt_notes(build, tensorrt, hosts, matrix, request)
    rejected = rejections_for_plan(chosen, verdicts, hosts)
    return Plan(
        ort_version=build.ort_version,
        package=build.package,
        cuda_version=build.cuda_version,
        cudnn_version=cudnn_version,
        steps=steps,
        tensorrt_version=tensorrt_version(tensorrt, request),
        tensorrt_source=tensorrt_source(tensorrt, request),
        index_url=build.index_url,
        pins=tuple(pins),
        reasons=tuple(unique(reasons)),
        notes=tuple(unique(notes)),
        rejected=tuple(rejected),
        hosts=hosts,
    )


__all__ = [
    "candidates",
    "driver_cuda_version",
    "host_name",
    "make_plan",
    "plain_code_line",
    "retarget",
    "short_label",
]
