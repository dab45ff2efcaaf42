"""Plans for a plugin execution provider (`--provider tensorrt-rtx`): the CPU onnxruntime core plus the EP package
that registers into it at run time, judged from matrices/plugin-eps.yaml (what the EP's wheels, METADATA and
NVIDIA's support matrix say). Pure, like the rest of the planner.

Rules: the EP releases of that provider, newest first, and within one its CUDA variants (`--cuda N` keeps one; else
the meta package's default first, then newer CUDA); a variant runs on a host when the host's platform has its wheel
(glibc at its manylinux floor), the EP's Requires-Python and a core wheel take the host's Python, every GPU's compute
capability is one the EP supports, and the driver runs the variant's CUDA major (its bundled CUDA runtime's release,
or the major's minor-version-compatibility floor). The core is the newest release at or above the EP's minimum
(`--ort` pins it) with a wheel for every host. The EP bundles its runtime: no NVIDIA wheels, no loader hook; the
distributions the EP must not share an environment with (onnxruntime-gpu: it installs the same onnxruntime module)
are removed first.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from provisioner.errors import BadInput, NoCompatiblePlan
from provisioner.matrix.query import cuda_major, cuda_release
from provisioner.plan import LOADER_HOOK, PLUGIN_PROVIDERS, Plan, PluginEp, Rejection, Request, Step
from provisioner.planner.common import host_name, unique
from provisioner.planner.judge import driver_floors
from provisioner.planner.steps import conflicting_flavours, hook_removal, uninstall_step
from provisioner.versions import driver_at_least, ort_matcher, satisfies, vtuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from provisioner.facts import HostFacts
    from provisioner.matrix.model import CoreRelease, EpRelease, EpVariant, Matrix


@dataclass(frozen=True)
class _Core:
    """The core distribution a plugin plan installs (the `Planned` shape `conflicting_flavours` reads)."""

    package: str
    ort_version: str
    cuda_version: str = ""
    index_url: str | None = None


@dataclass
class _Verdict:
    release: EpRelease
    variant: EpVariant
    core: CoreRelease | None = None
    problems: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.variant.package} {self.release.version} (CUDA {self.variant.cuda_major})"


def make_plugin_plan(hosts: Sequence[HostFacts], matrix: Matrix, request: Request) -> Plan:
    """The newest EP release and variant that runs on every host, with its core; NoCompatiblePlan otherwise."""
    hosts = tuple(hosts)
    releases = sorted(
        (r for r in matrix.ep_releases if r.provider == request.provider), key=lambda r: vtuple(r.version), reverse=True
    )
    if not releases:
        raise BadInput(
            f"the matrix records no release of the {request.provider} execution provider",
            hint="ortprov matrix update reads them from the index",
        )
    verdicts = [
        _judge(release, variant, hosts, matrix, request)
        for release in releases
        for variant in _variants(release, request)
    ]
    if not verdicts:
        raise BadInput(
            f"no {request.provider} EP release has a CUDA {request.cuda} variant",
            hint="leave --cuda out, or name a CUDA major its packages are built for",
        )
    chosen = next((v for v in verdicts if not v.problems), None)
    rejected = [Rejection(v.label, "; ".join(unique(v.problems))) for v in verdicts if v is not chosen and v.problems]
    if chosen is None or chosen.core is None:
        raise NoCompatiblePlan(
            f"no {request.provider} execution provider release runs on "
            + ", ".join(host_name(h, i, len(hosts)) for i, h in enumerate(hosts)),
            rejected=rejected,
            hint="leave --provider out for the CUDA provider of onnxruntime-gpu",
        )
    release, variant, core = chosen.release, chosen.variant, chosen.core
    removals = conflicting_flavours(_Core(core.package, core.version), hosts)
    why_removed = {
        name: why + (f" ({release.conflicts_source})" if name in release.conflicts else "") for name, why in removals
    }
    steps: list[Step] = []
    uninstall = uninstall_step(sorted(why_removed.items()))
    if uninstall:
        steps.append(uninstall)
    steps.append(
        Step(
            "install",
            (f"{core.package}=={core.version}", f"{variant.package}=={release.version}"),
            f"the CPU {core.package} core and the {request.provider} EP for CUDA {variant.cuda_major}, which bundles "
            f"its runtime ({', '.join(variant.bundled) or 'no libraries'})",
        )
    )
    hidden = renamed_libraries(variant)
    linux = all(h.platform.os == "linux" for h in hosts)
    if hidden and linux and request.loader_hook:
        steps.append(Step(LOADER_HOOK, (), hook_description(release, variant, hidden)))
    elif any(h.python is not None and h.python.loader_hook for h in hosts):
        steps.append(hook_removal("the EP needs no loader hook here"))
    default = next((v for v in verdicts if v.release is release and v.variant.package == release.default_variant), None)
    if variant.package == release.default_variant:
        which = f"its CUDA {variant.cuda_major} variant {variant.package}, the one its meta package installs"
    elif default is not None and default.problems:
        which = (
            f"its CUDA {variant.cuda_major} variant {variant.package} (not the default {default.variant.package}: "
            f"{default.problems[0]})"
        )
    else:
        which = f"its CUDA {variant.cuda_major} variant {variant.package} (--cuda {request.cuda})"
    reasons = [
        f"{release.package} {release.version} is the newest {request.provider} EP release that runs here: {which}",
        f"it registers into the CPU {core.package} core >= {release.core_min} ({release.core_source}); "
        f"{core.version} is the newest core with a wheel for every host",
        *chosen.reasons,
    ]
    notes = [*chosen.notes, usage_note(release)]
    return Plan(
        ort_version=core.version,
        package=core.package,
        cuda_version=str(variant.cuda_major),
        cudnn_version=None,
        steps=tuple(steps),
        reasons=tuple(unique(reasons)),
        notes=tuple(unique(notes)),
        rejected=tuple(rejected),
        hosts=hosts,
        plugin=PluginEp(
            provider=release.provider,
            package=variant.package,
            version=release.version,
            ep_name=release.ep_name,
            module=release.module,
            library=variant.library,
            cuda_major=variant.cuda_major,
        ),
    )


def renamed_libraries(variant: EpVariant) -> list[tuple[str, str]]:
    """(soname, bundled file) for each library the provider links that its wheel holds only under a longer file
    name (libcudart.so.13 as libcudart.so.13.4.36): with no RUNPATH the loader finds none of them by that name."""
    found = []
    for soname in variant.needs:
        bundled = next((name for name in variant.bundled if name.startswith(soname + ".")), None)
        if bundled and soname not in variant.bundled:
            found.append((soname, bundled))
    return found


def hook_description(release: EpRelease, variant: EpVariant, hidden: list[tuple[str, str]]) -> str:
    """What the loader hook does for a plugin EP, and what code without it must do."""
    pairs = ", ".join(f"{soname} (bundled as {name})" for soname, name in hidden)
    return (
        f"{variant.library} links {pairs} and has no RUNPATH: without a CUDA toolkit on the loader path, "
        "register_execution_provider_library fails (`cannot open shared object file`), and with one it loads the "
        "toolkit's runtime instead of the one the EP was built with. The hook loads the bundled files when the "
        f"program imports {release.module}; it registers nothing. Where ortprov does not run, the code must load "
        f"them itself first: `ctypes.CDLL(os.path.join(os.path.dirname({release.module}.__file__), NAME), "
        "os.RTLD_GLOBAL)` for each"
    )


def usage_note(release: EpRelease) -> str:
    """What a program does to use a plugin EP (its guide's calls): registering is the program's choice."""
    return (
        f"a plugin EP runs only where the program registers it: `import onnxruntime as ort, {release.module} as ep; "
        "ort.register_execution_provider_library(ep.get_ep_name(), ep.get_library_path()); "
        "so = ort.SessionOptions(); "
        "so.add_provider_for_devices([d for d in ort.get_ep_devices() if d.ep_name == ep.get_ep_name()], {})`, "
        "then `ort.InferenceSession(model, sess_options=so)`"
    )


def _variants(release: EpRelease, request: Request) -> list[EpVariant]:
    wanted = int(request.cuda.split(".")[0]) if request.cuda else None
    variants = [v for v in release.variants if wanted is None or v.cuda_major == wanted]
    return sorted(variants, key=lambda v: (v.package == release.default_variant, v.cuda_major), reverse=True)


def _judge(
    release: EpRelease, variant: EpVariant, hosts: tuple[HostFacts, ...], matrix: Matrix, request: Request
) -> _Verdict:
    verdict = _Verdict(release, variant)
    cores = _cores(release, matrix, request)
    for index, host in enumerate(hosts):
        who = host_name(host, index, len(hosts))
        tag = host.platform.tag
        if tag not in variant.platforms:
            verdict.problems.append(f"no {variant.package} wheel for {tag} (it has {', '.join(variant.platforms)})")
            continue
        glibc = host.platform.glibc
        if tag.startswith("linux") and variant.glibc_min and glibc and vtuple(glibc) < vtuple(variant.glibc_min):
            verdict.problems.append(f"its wheel needs glibc >= {variant.glibc_min}; {who} has {glibc}")
        _python(verdict, host, who)
        cores = [c for c in cores if tag in c.platforms and (host.python is None or host.python.minor in c.python)]
        _gpus(verdict, host, who)
        _driver(verdict, host, who, matrix)
    if not cores:
        pin = f" matching --ort {request.ort}" if request.ort else ""
        verdict.problems.append(f"no {release.core} core >= {release.core_min}{pin} has a wheel for every host")
    elif not verdict.problems:
        verdict.core = cores[0]
    return verdict


def _cores(release: EpRelease, matrix: Matrix, request: Request) -> list[CoreRelease]:
    try:
        wanted = ort_matcher(request.ort) if request.ort else None
    except ValueError:
        raise BadInput(f"--ort {request.ort!r} is not a version or specifier", hint="e.g. --ort 1.32") from None
    found = [
        c
        for c in matrix.core_releases
        if c.package == release.core
        and vtuple(c.version) >= vtuple(release.core_min)
        and (wanted is None or wanted(c.version))
    ]
    return sorted(found, key=lambda c: vtuple(c.version), reverse=True)


def _python(verdict: _Verdict, host: HostFacts, who: str) -> None:
    if host.python is None:
        verdict.notes.append(f"the Python of {who} is unknown: pass --python X.Y to check it")
        return

    needed = verdict.release.python
    if needed and not satisfies(host.python.minor.rstrip("t") + ".0", needed):
        verdict.problems.append(f"{verdict.release.package} needs Python {needed}; {who} has {host.python.minor}")


def _gpus(verdict: _Verdict, host: HostFacts, who: str) -> None:
    supported = verdict.release.compute_capabilities
    gpus = host.visible_gpus or host.gpus
    if not gpus:
        verdict.notes.append(f"no GPU known on {who}: it needs one of compute capability {', '.join(supported)}")
        return
    release = verdict.release
    source = release.compute_capabilities_source.split(" ", 1)[0]
    device_source = release.device_source.split(" ", 1)[0]
    for gpu in gpus:
        cc = gpu.compute_capability
        name = f"GPU {gpu.index}" + (f" ({gpu.name})" if gpu.name else "")
        if cc is None:
            verdict.notes.append(
                f"the compute capability of {name} on {who} is unknown: the EP needs one of {', '.join(supported)}"
            )
        elif release.device_cc_min and vtuple(cc) < vtuple(release.device_cc_min):
            verdict.problems.append(
                f"{name} on {who} is compute capability {cc}: the EP offers no device below "
                f"{release.device_cc_min} (its source: {device_source})"
            )
        elif cc not in supported:
            verdict.problems.append(
                f"{name} on {who} is compute capability {cc}; TensorRT-RTX supports {', '.join(supported)} ({source})"
            )
        else:
            verdict.reasons.append(f"{name} on {who} (compute capability {cc}) is one the EP supports ({source})")
            _gpu_driver(verdict, host, who, cc)


def _gpu_driver(verdict: _Verdict, host: HostFacts, who: str, cc: str) -> None:
    """The EP's own driver check for the GPU's architecture (driver_min by compute-capability major)."""
    floors = verdict.release.driver_min or {}
    majors = [m for m in floors if m.isdigit() and int(m) <= vtuple(cc)[0]]
    if not majors or not host.driver.version:
        return
    floor = floors[max(majors, key=int)]
    if not driver_at_least(host.driver.version, floor):
        verdict.problems.append(
            f"the EP needs driver >= {floor} for compute capability {cc} (its source: "
            f"{verdict.release.device_source.split(' ', 1)[0]}); {who} has {host.driver.version}"
        )


def _runtime_release(variant: EpVariant) -> str | None:
    """The CUDA release of the runtime the variant bundles (libcudart.so.13.4.36 -> 13.4)."""
    for name in variant.bundled:
        if name.startswith("libcudart.so."):
            parts = name[len("libcudart.so.") :].split(".")
            if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
                return f"{parts[0]}.{parts[1]}"
    return None


def _driver(verdict: _Verdict, host: HostFacts, who: str, matrix: Matrix) -> None:
    variant = verdict.variant
    bundled = _runtime_release(variant)
    release = cuda_release(matrix, bundled) if bundled else None
    record = cuda_major(matrix, variant.cuda_major)
    windows = host.platform.os == "windows"
    full, compat = driver_floors(matrix, release, record, windows) if release else (None, None)
    if compat is None and record is not None:
        compat = record.minor_compat_driver_windows if windows else record.minor_compat_driver_linux
    runtime = f"CUDA {bundled}" if bundled else f"CUDA {variant.cuda_major}"
    driver = host.driver
    if compat is None and full is None:
        system = "Windows" if windows else "Linux"
        verdict.notes.append(
            f"the matrix holds no {system} driver floor for the {runtime} runtime the EP bundles: the driver of "
            f"{who} was not checked against it"
        )
        return
    if not driver.present or not driver.version:
        verdict.notes.append(
            f"no NVIDIA driver known on {who}: the driver was not checked (it needs >= {compat or full or 'unknown'})"
        )
        return
    if full and driver_at_least(driver.version, full):
        verdict.reasons.append(
            f"driver {driver.version} on {who} supports the {runtime} runtime the EP bundles (>= {full})"
        )
    elif compat and driver_at_least(driver.version, compat):
        verdict.reasons.append(
            f"driver {driver.version} on {who} runs the {runtime} runtime the EP bundles through CUDA minor-version "
            f"compatibility (>= {compat})"
        )
    else:
        verdict.problems.append(
            f"the {runtime} runtime it bundles needs driver >= {compat or full}; {who} has {driver.version}"
        )


__all__ = ["PLUGIN_PROVIDERS", "make_plugin_plan", "usage_note"]
