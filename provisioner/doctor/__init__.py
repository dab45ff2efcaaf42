"""Doctor: findings from the host facts, a verify report, a pasted log and the plan outcome. Pure.

- evidence.py: a log -> `LogEvidence` (the host model's facts a log can show, and what only a log shows);
- rules.py: facts -> findings, one set of rules for the live host and a pasted log;
- host.py: `diagnose(facts, report, log, plan)` for the live machine;
- fixes.py: the fix text of each code.
"""

from __future__ import annotations

from provisioner.doctor.evidence import LogEvidence, read_evidence
from provisioner.doctor.host import diagnose, is_healthy
from provisioner.doctor.rules import analyze_log
from provisioner.findings import Finding

__all__ = ["Finding", "LogEvidence", "analyze_log", "diagnose", "is_healthy", "read_evidence"]
