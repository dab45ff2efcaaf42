"""A Plan rendered: the short human summary (`ortprov plan`), its JSON (the Plan itself, docs/json.md), a
recipe (render/recipes.py), and the reasons under a failed plan's error line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from provisioner.plan import Plan, Rejection, step_summary
from provisioner.render.style import style

if TYPE_CHECKING:
    from provisioner.errors import NoCompatiblePlan
    from provisioner.facts import HostFacts

SHOWN_REJECTIONS = 5


@dataclass(frozen=True)
class PlanResult:
    """`ortprov plan`: the plan, as the text summary (-v: every loser) or as its JSON contract."""

    plan: Plan
    verbose: bool = False
    python: str = "python"  # the interpreter named in the steps
    exit_code: int = 0

    def text(self) -> str:
        return render_text(self.plan, verbose=self.verbose, python=self.python)

    def data(self) -> Any:
        return self.plan.to_dict()


@dataclass(frozen=True)
class RecipeResult:
    """`ortprov plan --format pip|uv|requirements|conda|dockerfile`, `ortprov dockerfile`: the recipe text."""

    recipe: str
    exit_code: int = 0

    def text(self) -> str:
        return self.recipe

    def data(self) -> Any:
        return {"recipe": self.recipe}


def host_line(host: HostFacts) -> str:
    """ "linux-x86_64, glibc 2.36, Python 3.12, driver 580.65.06 (CUDA 13.0), GPU 0: 9.0"."""
    parts = [host.platform.tag + (f", glibc {host.platform.glibc}" if host.platform.glibc else "")]
    parts.append(f"Python {host.python.minor}" if host.python else "Python unknown")
    driver = host.driver
    if driver.present and (driver.version or driver.cuda_version):
        cuda = f" (CUDA {driver.cuda_version})" if driver.cuda_version else ""
        parts.append(f"driver {driver.version or '?'}{cuda}")
    else:
        parts.append("no driver")
    gpus = host.visible_gpus or host.gpus
    if gpus:
        parts.append(", ".join(f"GPU {g.index}: {g.compute_capability or '?'}" for g in gpus))
    else:
        parts.append("no GPU")
    if host.torch:
        parts.append(f"torch {host.torch.version}")
    if host.onnxruntime:
        parts.append(", ".join(f"{d.name} {d.version}" for d in host.onnxruntime))
    return ", ".join(parts)


def render_text(plan: Plan, verbose: bool = False, python: str = "python") -> str:
    """The summary; `verbose` adds every rejected candidate and the host details."""
    lines: list[str] = []
    what = f"{plan.package} {plan.ort_version}: CUDA {plan.cuda_version}"
    if plan.plugin:
        what = f"{plan.package} {plan.ort_version} + {plan.plugin.package} {plan.plugin.version}: the "
        what += f"{plan.plugin.ep_name} plugin EP, CUDA {plan.plugin.cuda_major}"
    if plan.cudnn_version:
        what += f", cuDNN {plan.cudnn_version}"
    if plan.tensorrt_version:
        what += f", TensorRT {plan.tensorrt_version}"
    if plan.index_url:
        what += f"  (from {plan.index_url})"
    lines.append(style(what, "bold"))
    for host in plan.hosts:
        name = f"{host.label}: " if len(plan.hosts) > 1 and host.label else ""
        lines.append(f"  for {name}{host_line(host)}")
    lines += _section("Why", plan.reasons)
    lines.append("")
    lines.append(style("Steps:", "bold"))
    for number, step in enumerate(plan.steps, 1):
        lines.append(f"  {number}. {step_summary(step, 'pip', python)}")
        if step.description:
            lines.append(f"     {step.description}")
    if plan.pins:
        lines.append("")
        lines.append(style("Pinned NVIDIA libraries:", "bold"))
        by_reason: dict[str, list[str]] = {}
        for pin in plan.pins:
            by_reason.setdefault(pin.reason, []).append(f"{pin.package}=={pin.version}")
        for reason, pinned in by_reason.items():
            lines.append(f"  {', '.join(pinned)}")
            lines.append(f"     {reason}")
    lines += _section("Notes", plan.notes)
    if plan.rejected:
        lines.append("")
        if verbose:
            lines.append(style("Rejected:", "bold"))
            lines += [f"  {r.candidate}: {r.reason}" for r in plan.rejected]
        else:
            count = len(plan.rejected)
            lines.append(f"{count} other candidate{'s' if count != 1 else ''} lost (-v shows why).")
    lines.append("")
    lines.append(
        "Next: `ortprov apply` with the same flags installs it and proves it on the GPU; "
        "--format pip|uv|requirements|conda|dockerfile prints it as a recipe."
    )
    return "\n".join(lines)


def render_no_plan(error: NoCompatiblePlan, verbose: bool = False) -> str:
    """The reasons under the error line (stderr): the newest candidates, or all of them with -v."""
    rejected: list[Rejection] = list(error.rejected)
    shown = rejected if verbose else rejected[:SHOWN_REJECTIONS]
    lines = ["rejected:"] + [f"  {r.candidate}: {r.reason}" for r in shown]
    if len(shown) < len(rejected):
        lines.append(f"  ... {len(rejected) - len(shown)} older candidates (-v lists them)")
    return "\n".join(lines)


def _section(title: str, items: tuple[str, ...]) -> list[str]:
    if not items:
        return []
    return ["", style(f"{title}:", "bold"), *(f"  - {item}" for item in items)]
