"""The house by role: the public names of `slabscope.planner`, no import cycles, and planner
folders that import only from the roles below their own."""

from __future__ import annotations

import ast
from pathlib import Path

from slabscope import planner

ROOT = Path(__file__).resolve().parent.parent
# Repository folder -> the package it installs as (pyproject.toml's package-dir).
PACKAGES = {"planner": "slabscope.planner", "app": "slabscope.app", "gpu": "slabscope.gpu"}
# planner's folders from the bottom up: each may import only from itself and those before it.
PLANNER_ROLES = ("support", "model", "conflicts", "placement", "formats", "schedule", "allocator",
                 "analysis", "recording")
# The names `slabscope.planner` exported before it was laid out by role; none may go.
PUBLIC = {
    "ALGORITHMS", "AllocatorTrace", "Buffer", "CONFLICT_MODELS", "CancelToken", "Cancelled",
    "CapacityError", "ConflictModel", "DagConflicts", "Graph", "LowerBound", "NEVER", "Node",
    "Placement", "PlacementStep", "Plan", "PlanError", "Schedule", "SerialConflicts",
    "Verification", "align_up", "conflict_model", "default_conflicts", "graph_from_dict", "load",
    "load_snapshot", "lower_bound", "plan", "schedule", "search_iterations", "verify",
    "with_schedule",
}


def _modules() -> dict[str, tuple[Path, bool]]:
    """Every module of the installed packages: dotted name -> (file, whether it is a package)."""
    found = {}
    for folder, package in PACKAGES.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            is_package = parts[-1] == "__init__"
            name = ".".join((package, *(parts[:-1] if is_package else parts)))
            found[name] = (path, is_package)
    return found


def _imports(name: str, path: Path, is_package: bool, known: set[str]) -> set[str]:
    """The project modules `path` imports anywhere in it (lazy and TYPE_CHECKING ones too)."""
    here = name.split(".") if is_package else name.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(here[:len(here) - node.level + 1] + ([base] if base else []))
            out.add(base)
            # `from package import module` names a module too.
            out.update(f"{base}.{alias.name}" for alias in node.names)
    return {m for m in out if m in known and m != name}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {name: _imports(name, *modules[name], known) for name in modules}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iteratively)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def _role(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "planner" and parts[2] in PLANNER_ROLES else None


def test_planner_keeps_its_public_names():
    missing = PUBLIC - set(planner.__all__)
    assert not missing
    assert all(hasattr(planner, name) for name in planner.__all__)


def test_no_import_cycles():
    assert _cycles(_graph()) == []


def test_a_cycle_is_found():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_planner_folders_import_only_roles_below_their_own():
    wrong = []
    for module, imported in _graph().items():
        role = _role(module)
        if role is None or not module.startswith("slabscope.planner."):
            continue
        for target in imported:
            if not target.startswith("slabscope.planner"):
                continue
            target_role = _role(target)
            # A folder never reaches up to the planner's top level (api, torch_trace, the facade).
            if target_role is None or PLANNER_ROLES.index(target_role) > PLANNER_ROLES.index(role):
                wrong.append(f"{module} -> {target}")
    assert wrong == []


def test_every_planner_module_sits_in_a_role_folder():
    loose = {path.stem for path in (ROOT / "planner").glob("*.py")}
    assert loose == {"__init__", "api", "torch_trace"}
    assert {p.name for p in (ROOT / "planner").iterdir() if (p / "__init__.py").exists()} == \
        set(PLANNER_ROLES)


def test_shared_view_pieces_import_no_panel():
    wrong = [f"{module} -> {target}" for module, imported in _graph().items()
             if module.startswith("slabscope.app.views.common.")
             for target in imported
             if target.startswith("slabscope.app.views.") and
             not target.startswith("slabscope.app.views.common")]
    assert wrong == []
    assert not list((ROOT / "app" / "views").glob("[!_]*.py"))


def test_the_graph_model_imports_no_reader():
    graph = _graph()
    model = {m: t for m, t in graph.items() if m.startswith("slabscope.planner.model.")}
    assert model
    assert not any(t.startswith("slabscope.planner.formats") for ts in model.values() for t in ts)
