"""The architecture's boundaries (docs/architecture.md, "Parts"), read from the
source: every import statement, at module level or inside a function.

- the core (everything but runbook.tui) imports no textual;
- runbook.tui does not import runbook.cli;
- runbook.store does not import runbook.export;
- runbook.sim imports nothing from runbook.engine;
- no import cycle among the core's packages. definition/model.py (the plain
  data) and definition/template.py (placeholder rendering) are the vocabulary
  at the bottom that every part may use: they import nothing of runbook,
  and count as packages of their own here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import runbook

ROOT = Path(runbook.__file__).resolve().parent
VOCABULARY = {"runbook.definition.model": "model", "runbook.definition.template": "template"}
FRONT_ENDS = {"runbook.cli", "runbook.tui", "runbook.__main__"}


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports() -> dict[str, set[str]]:
    """module -> every name it imports (absolute; `from x import y` gives x and x.y)."""
    out: dict[str, set[str]] = {}
    for path in ROOT.rglob("*.py"):
        mod = _module(path)
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        names = out.setdefault(mod, set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                names.add(source)
                names.update(f"{source}.{a.name}" for a in node.names)
    return out


def _part(name: str) -> str:
    for prefix, part in VOCABULARY.items():
        if name == prefix or name.startswith(prefix + "."):
            return part
    parts = name.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 and not parts[1].startswith("__") else "runbook"


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def _offenders(source: str, target: str) -> list[str]:
    return sorted(
        f"{m} imports {n}"
        for m, names in imports().items()
        if _within(m, source)
        for n in names
        if _within(n, target)
    )


def test_the_core_imports_no_textual():
    bad = sorted(
        f"{m} imports {n}"
        for m, names in imports().items()
        if not _within(m, "runbook.tui")
        for n in names
        if _within(n, "textual")
    )
    assert bad == []


def test_tui_does_not_import_cli():
    assert _offenders("runbook.tui", "runbook.cli") == []


def test_store_does_not_import_export():
    assert _offenders("runbook.store", "runbook.export") == []


def test_the_simulator_imports_nothing_from_the_engine():
    assert _offenders("runbook.sim", "runbook.engine") == []


def test_the_vocabulary_imports_nothing_of_runbook():
    for module in VOCABULARY:
        assert not [n for n in imports()[module] if _within(n, "runbook")], module


def test_no_import_cycle_among_the_cores_packages():
    graph: dict[str, set[str]] = {}
    for module, names in imports().items():
        if any(_within(module, f) for f in FRONT_ENDS):
            continue
        for name in names:
            if _within(name, "runbook") and _part(name) != _part(module):
                graph.setdefault(_part(module), set()).add(_part(name))
    assert "runbook.run" in graph and "runbook.engine" in graph  # the graph was read
    cycles = _cycles(graph)
    assert cycles == [], f"import cycles among packages: {cycles}"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one package (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found
