"""The layers of docs/ARCHITECTURE.md, read from the imports of every module under provisioner/ (ast, not run).

- no import circles between provisioner modules (an import inside a function counts: it runs too);
- the core (the data model and the pure logic) imports no edge (probe/, installer/, verify/, the network, the
  standalone programs excepted), no renderer and no CLI;
- the renderers import the core and each other, never an edge or the CLI;
- the edges never print a result: no render.output, no commands, no typer (installer/flow.py used to);
- typer is the CLI's alone (cli.py, commands/); the standalone programs import only each other.

An import under `if TYPE_CHECKING:` is an annotation, not a dependency, and is not counted.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

PACKAGE = Path(__file__).resolve().parents[2] / "provisioner"

# the data model and the pure logic (docs/ARCHITECTURE.md); `provisioner.matrix` is the model and its queries
CORE = (
    "provisioner.errors",
    "provisioner.facts",
    "provisioner.plan",
    "provisioner.planner",  # the package: make_plan and one module per step (judge, preference, pins, steps, ...)
    "provisioner.closure",
    "provisioner.platforms",
    "provisioner.serde",
    "provisioner.versions",
    "provisioner.validate",
    "provisioner.urls",  # the one URL check, credentials masked
    "provisioner.findings",
    "provisioner.doctor",
    "provisioner.matrix.model",
    "provisioner.matrix.query",
    "provisioner.matrix.check",
    "provisioner.verify.report",  # VerifyReport: the verify child's report, data like HostFacts
    "provisioner.installer.events",  # what apply tells and returns: data, rendered by render/apply.py
    "provisioner.tune",  # the tune's data and reasoning; its runner and child are edges (below)
    "provisioner.cluster",  # a Kubernetes cluster's nodes to classes and plans; kubectl.py is an edge (below)
)
EDGES = (
    "provisioner.probe",
    "provisioner.installer",
    "provisioner.verify",
    "provisioner.childproc",
    "provisioner.hashes",
    "provisioner.matrix.derive",
    "provisioner.ziprange",
    "provisioner.wheelfacts",
    "provisioner.matrix.refresh",
    "provisioner.matrix.load",
    "provisioner.userfiles",
    "provisioner.buildcontext",  # `dockerfile --context DIR`: the Dockerfile and ortprov-check/ written there
    "provisioner.tune.measure",
    "provisioner.tune.child",
    "provisioner.cluster.kubectl",
)
RENDER = ("provisioner.render",)
CLI = ("provisioner.cli", "provisioner.commands", "provisioner.__main__")
STANDALONE = ("provisioner.standalone",)

# Imports that break a rule and are waiting to be removed (none).
PENDING: set[tuple[str, str]] = set()


def _in(module: str, layer: tuple[str, ...]) -> bool:
    return any(module == name or module.startswith(name + ".") for name in layer)


def _layer(module: str) -> str:
    """The layer a module belongs to (the most specific name wins: verify.report is core, matrix.load an edge)."""
    best, kind = "", "neutral"  # neutral: cachedir, resources, the package itself
    for layer_kind, layer in (("core", CORE), ("edge", EDGES), ("render", RENDER), ("cli", CLI), ("alone", STANDALONE)):
        for name in layer:
            if (module == name or module.startswith(name + ".")) and len(name) > len(best):
                best, kind = name, layer_kind
    return kind


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, type_only: bool = False) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement (anywhere: module level, functions, classes) and whether it is type-only."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, type_only
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                yield from _imports(ast.Module(body=[child], type_ignores=[]), True)
            for child in node.orelse:
                yield from _imports(ast.Module(body=[child], type_ignores=[]), type_only)
        else:
            yield from _imports(node, type_only)


def _resolve(name: str) -> str:
    """The provisioner module a dotted name lives in (a name imported from a module: that module)."""
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def imports_of(module: str) -> set[str]:
    """What `module` imports at run time: provisioner modules by name, other packages by their top name."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node, type_only in _imports(ast.parse(path.read_text(encoding="utf-8"))):
        if type_only:
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                base = ".".join(
                    package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else [])
                )
            names = [f"{base}.{alias.name}" for alias in node.names] if base.startswith("provisioner") else [base]
        for name in names:
            found.add(_resolve(name) if name.startswith("provisioner") else name.split(".")[0])
    found.discard(module)
    return found


GRAPH = {module: imports_of(module) for module in MODULES}


def _cycles() -> list[list[str]]:
    """The import circles: strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in GRAPH.get(node, ()):
            if target not in GRAPH:
                continue
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(GRAPH):
        if node not in index:
            visit(node)
    return groups


def _violations(importer_layer: str, allowed: set[str], forbidden_external: tuple[str, ...] = ()) -> list[str]:
    found = []
    for module, targets in GRAPH.items():
        if _layer(module) != importer_layer:
            continue
        for target in sorted(targets):
            if (module, target) in PENDING:
                continue
            if target.startswith("provisioner") and _layer(target) not in allowed:
                found.append(f"{module} -> {target} ({_layer(target)})")
            elif target in forbidden_external:
                found.append(f"{module} -> {target}")
    return found


def test_the_reader_sees_the_imports_this_test_is_about() -> None:
    """The rules below read what they should: lazy imports count, type-only ones do not."""
    assert {"provisioner.planner", "provisioner.probe"} <= GRAPH["provisioner.commands.planning"]  # in functions
    assert {"provisioner.matrix.load", "provisioner.render.output"} <= GRAPH["provisioner.commands.planning"]
    assert "typer" in GRAPH["provisioner.cli"] and "provisioner.commands.options" in GRAPH["provisioner.commands.plan"]
    assert "provisioner.verify.report" not in GRAPH["provisioner.render.verify"]  # under TYPE_CHECKING
    assert _layer("provisioner.verify.report") == "core" and _layer("provisioner.verify.runner") == "edge"
    assert _layer("provisioner.tune.analysis") == "core" and _layer("provisioner.tune.measure") == "edge"
    assert "provisioner.tune.explain" in GRAPH["provisioner.tune.analysis"]


def test_the_planner_package_imports_no_more_than_planner_py_did() -> None:
    """planner.py became the package planner/ (issue 24): the fast path of `ortprov plan` must not import more for
    it. Outside itself, the package imports what the one module did (run-time imports; annotations do not count)."""
    before = {
        "__future__",
        "dataclasses",
        "provisioner.closure",
        "provisioner.errors",
        "provisioner.facts",
        "provisioner.matrix.model",
        "provisioner.matrix.query",
        "provisioner.plan",
        "provisioner.standalone.libnames",
        "provisioner.versions",
    }
    package = [module for module in GRAPH if _in(module, ("provisioner.planner",))]
    assert len(package) > 1 and all(_layer(module) == "core" for module in package)
    outside = {target for module in package for target in GRAPH[module] if not _in(target, ("provisioner.planner",))}
    assert outside <= before, outside - before


def test_no_import_circles() -> None:
    cycles = [group for group in _cycles() if not all((a, b) in PENDING for a in group for b in GRAPH[a] & set(group))]
    assert cycles == []


def test_the_core_imports_no_edge_renderer_or_cli() -> None:
    assert _violations("core", {"core", "neutral", "alone"}, ("typer", "requests", "pynvml")) == []


def test_the_renderers_import_only_the_core_and_each_other() -> None:
    assert _violations("render", {"core", "render", "neutral", "alone"}, ("typer", "requests")) == []


def test_the_edges_print_no_result() -> None:
    """An edge returns what it found or did; printing it is the command's (render.output)."""
    found = _violations("edge", {"core", "edge", "neutral", "alone", "render"}, ("typer",))
    found += [
        f"{module} -> provisioner.render.output"
        for module, targets in GRAPH.items()
        if _layer(module) == "edge" and "provisioner.render.output" in targets
    ]
    assert found == []


@pytest.mark.parametrize("layer", ["core", "render", "edge", "alone", "neutral"])
def test_typer_belongs_to_the_cli(layer: str) -> None:
    assert [m for m, targets in GRAPH.items() if _layer(m) == layer and "typer" in targets] == []


def test_the_standalone_programs_import_only_each_other() -> None:
    assert _violations("alone", {"alone"}) == []


def test_the_installer_reads_top_down() -> None:
    """flow -> transaction -> (predict, recovery, snapshot, command) -> session (the transaction's data): no module
    below transaction.py names it, not even for types (issue 34)."""
    from pathlib import Path

    folder = Path(__file__).resolve().parents[2] / "provisioner" / "installer"
    for name in ("predict.py", "recovery.py", "snapshot.py", "command.py", "session.py"):
        assert "installer.transaction" not in (folder / name).read_text(encoding="utf-8"), name
    assert "provisioner.installer.session" in GRAPH["provisioner.installer.transaction"]
