"""Kubernetes' node affinity, evaluated as the scheduler does (k8s.io/component-helpers/scheduling/corev1/nodeaffinity,
and the NodeSelectorRequirement API reference): the terms of `nodeSelectorTerms` are ORed, the expressions of a
term ANDed; In/NotIn compare the label's string, Exists/DoesNotExist its presence, Gt/Lt parse the label's value
and the one requirement value as integers (strconv.ParseInt: a label that does not parse matches neither)."""

from __future__ import annotations

import re

_INTEGER = re.compile(r"[+-]?\d+")


def _matches(expression: dict, labels: dict[str, str]) -> bool:
    key, operator, values = expression["key"], expression["operator"], expression.get("values", [])
    present = key in labels
    value = labels.get(key)
    if operator == "In":
        return present and value in values
    if operator == "NotIn":
        return not present or value not in values
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    if operator in ("Gt", "Lt"):
        assert len(values) == 1 and _INTEGER.fullmatch(values[0]), f"{operator} takes one integer: {values}"
        if value is None or not _INTEGER.fullmatch(value):
            return False
        return int(value) > int(values[0]) if operator == "Gt" else int(value) < int(values[0])
    raise AssertionError(f"unknown operator {operator!r}")


def affinity_admits(affinity: dict, labels: dict[str, str]) -> bool:
    """Whether a pod with this `affinity` may be scheduled on a node with these labels."""
    terms = affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    return any(all(_matches(e, labels) for e in term["matchExpressions"]) for term in terms)
