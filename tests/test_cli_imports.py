"""The command line's import graph (issue 12, item 2): no cycle through a CLI module.

The top-level command (`rollmux.cli`) imports the modules that define sub-commands
(`rollmux.sim.cli`, `rollmux.traces.cli`, `rollmux.theorem1.cli`); they, and every other
module, never import `rollmux.cli`, and what the commands share lives in
`rollmux.cliutil`. Imports are read from the source (every `import` statement, those
inside functions included), not from what happens to be loaded.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "rollmux"


def module_name(path: Path, root: Path = SRC) -> str:
    """The dotted module name of a source file below ``root``."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path, modules: set[str], root: Path = SRC) -> set[str]:
    """The modules of ``modules`` that the file at ``path`` imports, anywhere in it."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            # `from pkg import sub` imports the module pkg.sub when there is one
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                       for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:  # `import a.b.c` of a non-module c
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph(root: Path = SRC, package: str = PACKAGE) -> dict[str, set[str]]:
    """Module -> the package's modules it imports, for every module of ``package``."""
    files = sorted((root / package).rglob("*.py"))
    modules = {module_name(f, root) for f in files}
    return {module_name(f, root): imported_modules(f, modules, root) for f in files}


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def is_cli_module(name: str) -> bool:
    """Whether ``name`` is the top-level CLI, its helpers or a sub-command module."""
    return name in {"rollmux.cli", "rollmux.cliutil"} or name.endswith(".cli")


def test_the_graph_reader_sees_imports_inside_functions(tmp_path: Path) -> None:
    """Relative, absolute and function-level imports are all edges; a cycle is found."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..a import x\n    import pkg.c\n")
    (pkg / "c.py").write_text("")
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.a"] == {"pkg.sub.b"}
    assert graph["pkg.sub.b"] == {"pkg.a", "pkg.c"}
    assert cycles(graph) == [["pkg.a", "pkg.sub.b"]]


def test_no_module_imports_the_top_level_cli() -> None:
    """Only entry points may import rollmux.cli; sub-command modules use rollmux.cliutil."""
    graph = import_graph()
    importers = sorted(name for name, targets in graph.items() if "rollmux.cli" in targets)
    assert importers == []


def test_the_top_level_cli_imports_its_sub_command_modules() -> None:
    """rollmux.cli registers the sub-commands defined elsewhere by importing them."""
    assert {"rollmux.sim.cli", "rollmux.traces.cli", "rollmux.theorem1.cli",
            "rollmux.cliutil"} <= import_graph()["rollmux.cli"]


def test_no_import_cycle_through_a_cli_module() -> None:
    """No strongly connected component of the import graph holds a CLI module."""
    bad = [component for component in cycles(import_graph())
           if any(is_cli_module(name) for name in component)]
    assert bad == []


def test_only_cli_modules_import_the_cli_helpers() -> None:
    """The library reports progress through callbacks; it never imports rollmux.cliutil."""
    graph = import_graph()
    importers = sorted(name for name, targets in graph.items() if "rollmux.cliutil" in targets)
    assert [name for name in importers if not is_cli_module(name)] == []
