"""Carry out a Plan in a target environment, transactionally (`ortprov apply`), or fill a wheelhouse for it.

target.py       which environment (active venv, --python, --venv created when missing), PEP 668 check
tools.py        uv or pip; conda, mamba or micromamba
steps.py        plan steps -> exact commands (plan.step_argv), sources (index, wheelhouse)
snapshot.py     hard-link snapshot of the install directories, byte-for-byte restore, journal
runner.py       run one command (stream/capture), signals -> Interrupted, failure diagnosis
transaction.py  predict, confirm, snapshot, run, restore on any failure
conda.py        the conda recipe (conda/mamba/micromamba), then the pip part
wheelhouse.py   `ortprov download`: pip download per install step, for any Python and platform
"""

from __future__ import annotations

from provisioner.installer.steps import with_sources
from provisioner.installer.target import Target, resolve_target
from provisioner.installer.transaction import ApplyFailed, ApplyResult, ApplySettings, Change, apply_plan

__all__ = [
    "ApplyFailed",
    "ApplyResult",
    "ApplySettings",
    "Change",
    "Target",
    "apply_plan",
    "resolve_target",
    "with_sources",
]
