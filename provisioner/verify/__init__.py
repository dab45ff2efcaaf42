"""Verify: prove a real GPU session in the target interpreter (child process), and report what happened.

`run_verify(python, ...)` -> `VerifyReport`; the child is provisioner/standalone/verify_child.py, the check
models are in `models/`.
"""

from provisioner.verify.report import VerifyReport
from provisioner.verify.runner import run_verify

__all__ = ["VerifyReport", "run_verify"]
