"""GPU product names reduced for matching (gpus.yaml names and aliases, GPU names in logs). Pure, stdlib."""

from __future__ import annotations

import re

_GPU_NOISE = re.compile(
    r"\b(?:nvidia|geforce|quadro|tesla|\d+\s*gb|sxm\d?|pcie|hbm\d?e?|laptop gpu|graphics|with max-q design|max-q)\b"
    r"|[^a-z0-9]"
)


def gpu_key(name: str) -> str:
    """A GPU name reduced for matching: lower case, vendor/brand words and memory sizes dropped, no spaces
    ("NVIDIA GeForce RTX 3070 Laptop GPU" -> "rtx3070"; "A100-SXM4-80GB" -> "a100")."""
    return _GPU_NOISE.sub("", name.lower())
