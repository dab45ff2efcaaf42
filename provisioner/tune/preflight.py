"""What stops a tune before it measures anything, said as the user's problem it is (pure).

The target's onnxruntime (or numpy) is missing; the model is newer than that onnxruntime reads (its IR version or
opset, with the numbers onnxruntime gave); the file is no model at all. Each is one BadInput with a hint.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from provisioner.errors import BadInput

if TYPE_CHECKING:
    from provisioner.tune.report import Runtime

_IR = re.compile(r"Unsupported model IR version: (\d+), max supported IR version: (\d+)")
_OPSET = re.compile(r"Opset (\d+) is under development.*?support for domain (\S+) is till opset (\d+)", re.S)
_OPSET_PLAIN = re.compile(r"[Oo]pset (\d+).*?(?:not supported|unsupported)[^.]*?(?:till|up to|max(?:imum)?)\D*(\d+)")


class TargetCannotRun(BadInput):
    """The target interpreter cannot run a model at all (doctor reports that from its own checks)."""


def runtime_problem(runtime: Runtime) -> TargetCannotRun | None:
    """The target cannot run a model: onnxruntime or numpy is not installed, or importing it failed."""
    if runtime.error is None:
        return None
    python = runtime.python
    if runtime.missing == "onnxruntime":
        return TargetCannotRun(
            f"onnxruntime is not installed in the target Python {python}",
            hint=f"`ortprov apply --python {python}` installs the onnxruntime-gpu build that fits this machine "
            f"(or: {python} -m pip install onnxruntime)",
        )
    if runtime.missing == "numpy":
        return TargetCannotRun(
            f"numpy is not installed in the target Python {python} (onnxruntime needs it)",
            hint=f"{python} -m pip install numpy",
        )
    return TargetCannotRun(
        f"the target Python {python} cannot import onnxruntime: {runtime.error}",
        hint=f"`ortprov doctor --python {python}` explains a broken install",
    )


def model_problem(model: str, message: str, runtime: Runtime) -> BadInput:
    """onnxruntime could not load `model`: too new for it (IR version, opset), or no model."""
    ort = f"onnxruntime {runtime.ort_version}" if runtime.ort_version else "the target's onnxruntime"
    upgrade = f"a newer onnxruntime in the target (`ortprov plan --python {runtime.python}` lists the builds)"
    found = _IR.search(message)
    if found:
        return BadInput(
            f"{model} has ONNX IR version {found.group(1)}; {ort} reads up to IR version {found.group(2)}",
            hint=f"install {upgrade}, or export the model for an older IR version",
        )
    found = _OPSET.search(message)
    if found:
        domain = "ai.onnx" if found.group(2) in ("", "ai.onnx") else found.group(2)
        return BadInput(
            f"{model} uses opset {found.group(1)} of {domain}; {ort} supports up to opset {found.group(3)}",
            hint=f"install {upgrade}, or export the model with opset {found.group(3)} or older",
        )
    found = _OPSET_PLAIN.search(message)
    if found:
        return BadInput(
            f"{model} uses opset {found.group(1)}; {ort} supports up to opset {found.group(2)}",
            hint=f"install {upgrade}, or export the model with an older opset",
        )
    first = message.strip().splitlines()[0] if message.strip() else "no reason given"
    if "protobuf parsing failed" in message.lower() or "INVALID_PROTOBUF" in message:
        return BadInput(f"{model} is not an ONNX model ({ort} cannot parse it)", hint="pass an .onnx file")
    return BadInput(f"{ort} cannot load {model}: {first[:300]}", hint="check the model with onnx.checker, or "
                    "try a newer onnxruntime in the target")  # fmt: skip
