"""docs/ARCHITECTURE.md's layer rules, read from every module's imports with `ast`: arrows point
down, no import circle, no private name taken from another of our modules."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("rag", "ingestion", "evaluation", "training", "app")
MIDDLE = ("ingestion", "evaluation", "training")
# The imports between the middle packages that ARCHITECTURE.md names as intended.
MIDDLE_ALLOWED = {("evaluation.retrieval", "ingestion.pipeline")}


@dataclass
class Edge:
    """One import of one of our modules: where, whether it runs at import time, what it names."""

    source: str
    target: str
    line: int
    at_import: bool  # False inside a function body: runs when called
    names: list[str] = field(default_factory=list)


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for package in PACKAGES for p in sorted((REPO_ROOT / package).rglob("*.py"))}


def ours(name: str) -> str | None:
    """The module of ours `name` names (the longest known prefix), else None."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in MODULES:
            return candidate
    return None


def _absolute(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    is_package = MODULES[module].name == "__init__.py"
    base = module.split(".")[: len(module.split(".")) - node.level + is_package]
    return ".".join(base + ([node.module] if node.module else []))


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


TREES = {m: ast.parse(p.read_text(encoding="utf-8"), filename=str(p)) for m, p in MODULES.items()}


def edges(module: str, tree: ast.Module) -> list[Edge]:
    """Every import of our modules in `module`, at any depth; TYPE_CHECKING blocks left out (they
    never run)."""
    found: list[Edge] = []

    def visit(node: ast.AST, at_import: bool) -> None:
        if isinstance(node, ast.If) and _type_checking(node):
            for child in node.orelse:
                visit(child, at_import)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = ours(alias.name)
                if target:
                    found.append(Edge(module, target, node.lineno, at_import))
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, node)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                if submodule in MODULES:
                    found.append(Edge(module, submodule, node.lineno, at_import))
                elif ours(base):
                    found.append(Edge(module, ours(base), node.lineno, at_import, [alias.name]))
        inside = at_import and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for child in ast.iter_child_nodes(node):
            visit(child, inside)

    visit(tree, True)
    return found


EDGES = [edge for module, tree in TREES.items() for edge in edges(module, tree)]


def package(module: str) -> str:
    return module.split(".")[0]


def shown(found: list[Edge]) -> str:
    return "\n".join(f"{MODULES[e.source].relative_to(REPO_ROOT)}:{e.line} imports {e.target}" for e in found)


def test_the_packages_are_found():
    assert {package(m) for m in MODULES} == set(PACKAGES)
    assert EDGES, "no import of our modules found: the parser reads nothing"


def test_rag_imports_none_of_the_other_packages():
    wrong = [e for e in EDGES if package(e.source) == "rag" and package(e.target) != "rag"]
    assert not wrong, shown(wrong)


def test_nothing_outside_app_imports_app():
    wrong = [e for e in EDGES if package(e.source) != "app" and package(e.target) == "app"]
    assert not wrong, shown(wrong)


def test_the_middle_packages_import_each_other_only_where_architecture_says():
    wrong = [e for e in EDGES if package(e.source) in MIDDLE and package(e.target) in MIDDLE
             and package(e.source) != package(e.target) and (e.source, e.target) not in MIDDLE_ALLOWED]
    assert not wrong, shown(wrong)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
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

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def test_cycles_finds_a_circle_and_only_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("at_import_only", [True, False], ids=["at-import", "with-function-imports"])
def test_no_import_circle(at_import_only):
    """A circle at import time fails on import; one through a function's import still ties the
    two modules together, so neither can be read or changed alone (issue 30)."""
    graph: dict[str, set[str]] = {}
    for e in EDGES:
        if e.source != e.target and (e.at_import or not at_import_only):
            # a package's __init__ runs before its modules: an edge to it is no dependency back
            if not MODULES[e.target].name == "__init__.py":
                graph.setdefault(e.source, set()).add(e.target)
    found = cycles(graph)
    assert not found, "import circles: " + "; ".join(" <-> ".join(c) for c in found)


def _bound_modules(module: str, tree: ast.Module) -> dict[str, str]:
    """Local name -> the module of ours it is bound to by an import."""
    bound = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if ours(alias.name):
                    name = alias.asname or alias.name.split(".")[0]
                    bound[name] = alias.name if alias.asname else name
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                submodule = f"{_absolute(module, node)}.{alias.name}"
                if submodule in MODULES:
                    bound[alias.asname or alias.name] = submodule
    return bound


def _dotted(node: ast.AST, bound: dict[str, str]) -> str | None:
    if isinstance(node, ast.Name):
        return bound.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value, bound)
        return f"{base}.{node.attr}" if base else None
    return None


def private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_uses(module: str, tree: ast.Module) -> list[str]:
    """`from rag.x import _name`, and `x._name` after `from rag import x` or `import rag.x`."""
    found = [f"{e.line}: takes {name} from {e.target}"
             for e in edges(module, tree) for name in e.names if private(name) and e.target != module]
    bound = _bound_modules(module, tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and private(node.attr):
            owner = _dotted(node.value, bound)
            if owner in MODULES and owner != module:
                found.append(f"{node.lineno}: uses {owner}.{node.attr}")
    return found


def test_the_checks_see_what_they_look_for():
    source = ast.parse(
        "import rag.settings\n"
        "from rag import settings as s\n"
        "from rag.settings import _hidden, load_settings\n"
        "def later():\n"
        "    from app.cli import app\n"
        "    return rag.settings._a, s._b, s.__doc__\n"
    )
    found = edges("training.ranker", source)
    assert [(e.target, e.line, e.at_import, e.names) for e in found] == [
        ("rag.settings", 1, True, []), ("rag.settings", 2, True, []),
        ("rag.settings", 3, True, ["_hidden"]), ("rag.settings", 3, True, ["load_settings"]),
        ("app.cli", 5, False, ["app"])]
    assert sorted(private_uses("training.ranker", source)) == [
        "3: takes _hidden from rag.settings", "6: uses rag.settings._a", "6: uses rag.settings._b"]
    assert edges("training.ranker", ast.parse("from typing import TYPE_CHECKING\n"
                                             "if TYPE_CHECKING:\n    from app.cli import app\n")) == []


def test_no_private_name_from_another_module():
    wrong = [f"{MODULES[m].relative_to(REPO_ROOT)}:{use}" for m, tree in TREES.items()
             for use in private_uses(m, tree)]
    assert not wrong, "\n".join(wrong)
