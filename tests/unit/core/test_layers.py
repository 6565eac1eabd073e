"""The layers of docs/architecture.md hold: imports only point down, no cycles, settings in one place."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = ("plangraph", "graphs", "nodes", "tools", "memory")
# What each layer may import of the project (besides itself). graphs/state.py and graphs/context.py
# are the schema exception: nodes read them (as in the LangGraph templates).
ALLOWED = {
    "plangraph": {"graphs", "nodes", "tools", "memory"},
    "graphs": {"nodes", "tools", "memory"},
    "nodes": {"graphs.state", "graphs.context", "tools", "memory"},
    "tools": {"memory"},
    "memory": set(),
}


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _imports(path: Path, *, runtime_only: bool) -> set[str]:
    """Project modules imported by `path` (with `runtime_only`, not those under `if TYPE_CHECKING:`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    if runtime_only:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                skip.update(id(n) for child in node.body for n in ast.walk(child))
    names = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return {n for n in names if n.split(".")[0] in PACKAGES}


def _allowed(importer: str, imported: str) -> bool:
    own = importer.split(".")[0]
    if imported.split(".")[0] == own:
        return True
    return any(imported == a or imported.startswith(a + ".") for a in ALLOWED[own])


def test_imports_only_point_down():
    wrong = [
        f"{name} imports {imported}"
        for name, path in _modules().items()
        for imported in _imports(path, runtime_only=False)
        if not _allowed(name, imported)
    ]
    assert wrong == []


def test_there_is_no_import_cycle():
    modules = _modules()
    graph = {
        name: {i for i in _imports(path, runtime_only=True) if i in modules and i != name}
        for name, path in modules.items()
    }
    # A package's __init__ importing its own submodules is not a cycle of layers: drop parent edges.
    for name, deps in graph.items():
        deps -= {d for d in deps if name.startswith(d + ".")}
    seen: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        seen[node] = 1
        stack.append(node)
        for dep in sorted(graph[node]):
            if seen.get(dep) == 1:
                cycles.append([*stack[stack.index(dep) :], dep])
            elif dep not in seen:
                visit(dep)
        stack.pop()
        seen[node] = 2

    for name in sorted(graph):
        if name not in seen:
            visit(name)
    assert cycles == []


def test_settings_are_read_from_the_environment_only_in_the_context():
    readers = []
    for name, path in _modules().items():
        if name.startswith("plangraph") or name == "graphs.context":
            continue  # entry points read their own serve settings; the Context holds the rest
        text = path.read_text(encoding="utf-8")
        if "os.environ.get(" in text or "os.getenv(" in text or "os.environ[" in text:
            readers.append(name)
    assert readers == []
