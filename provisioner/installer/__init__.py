"""Carry out a Plan in a target environment, transactionally (`ortprov apply`), or fill a wheelhouse for it.

flow.py         apply and download end to end: ApplySettings, find the target, open it (lock, settle, read it
                once), carry the plan out, verify, the verdict
target.py       which environment (active venv, --python, --venv created when missing), PEP 668 check
tools.py        uv or pip; conda, mamba or micromamba
steps.py        plan steps -> exact commands (plan.step_argv), sources (index, wheelhouse)
events.py       what apply and download tell as they work (data), and the Listener the command supplies
snapshot.py     hard-link snapshot of the install directories, byte-for-byte restore, journal
lock.py         the apply lock of a target
runner.py       run one command (stream/capture), signals -> Interrupted, failure diagnosis
transaction.py  predict, confirm, snapshot, run, restore on any failure
conda.py        the conda recipe (conda/mamba/micromamba), then the pip part
wheelhouse.py   `ortprov download`: pip download per install step, for any Python and platform
"""
