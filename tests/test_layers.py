"""Library layers: imports run one way, with no cycle, and no module reads a file on import.

The graph is built with ``ast`` over src/rollmux, counting every import a module can
execute: at module level and inside functions (``if TYPE_CHECKING:`` blocks never run
and are left out). An edge goes from a module to the module it names (``from rollmux.x
import y`` names ``rollmux.x.y`` when that is a module, else ``rollmux.x``); importing a
submodule also runs its package's ``__init__``, which is not counted, as every package
re-exports its submodules.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "rollmux"

#: The layers, lowest first: a module may import its own layer and the layers below it.
#: Each module belongs to the entry with the longest matching prefix.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("hardware and jobs", ("rollmux.errors", "rollmux.io", "rollmux.memo", "rollmux.lazy",
                           "rollmux.hardware", "rollmux.jobs", "rollmux.jobtypes")),
    ("phase model", ("rollmux.phases", "rollmux.phasetimes", "rollmux.closedform")),
    # A job resolved on a hardware: the one place (job, hw) meets; nothing above it
    # derives a job's values from the pair again.
    ("resolved job", ("rollmux.model.resolved",)),
    ("schedule", ("rollmux.schedule", "rollmux.theorem1")),
    # The group model: members' effective phases (rollmux.phases) and the group period
    # (rollmux.schedule's max-plus code), used by placement and both replay paths.
    ("model", ("rollmux.model", "rollmux.group")),
    ("placement", ("rollmux.placement",)),
    # Traces (generators, loader, statistics) come after placement: a policy places jobs
    # it is given and never reads or generates a trace.
    ("traces", ("rollmux.traces",)),
    ("sim", ("rollmux.sim",)),
    ("experiments", ("rollmux.experiments", "rollmux.anchors", "rollmux.plotstyle")),
    ("interface", ("rollmux", "rollmux.entry", "rollmux.cli", "rollmux.cliutil",
                   "rollmux.cliformat", "rollmux.sim.cli",
                   "rollmux.traces.cli", "rollmux.theorem1.cli", "rollmux.theorem1.__main__")),
)

#: Edges that break the rules today, each with the change that removes it. An entry whose
#: edge is gone fails test_allow_list_is_current, so the list only shrinks.
ALLOWED: dict[tuple[str, str], str] = {}


def module_name(path: Path) -> str:
    """The dotted module name of a file under src/."""
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    """Every module of the rollmux package by dotted name."""
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def executed_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements of ``tree`` that can run (skipping ``if TYPE_CHECKING:``)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from (n for child in node.orelse for n in executed_imports_of(child))
            continue
        yield from executed_imports_of(node)


def executed_imports_of(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """``node`` itself if it is an import, then the runnable imports inside it."""
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node
    yield from executed_imports(node)


def import_graph() -> dict[str, set[str]]:
    """Module -> the rollmux modules it imports (module level and inside functions)."""
    known = modules()
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        is_package = path.name == "__init__.py"
        targets: set[str] = set()
        for node in executed_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                if node.level:
                    base = name.split(".")[: len(name.split(".")) - node.level + is_package]
                    source = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    source = node.module or ""
                names = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in known
                         else source for alias in node.names]
            for target in names:
                while target and target not in known:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    targets.add(target)
        graph[name] = targets
    return graph


def layer_of(module: str) -> int:
    """The index in LAYERS of ``module``'s layer (the longest declared prefix)."""
    best: tuple[int, int] | None = None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            matches = module == prefix or (prefix != "rollmux" and module.startswith(f"{prefix}."))
            if matches and (best is None or len(prefix) > best[0]):
                best = (len(prefix), index)
    assert best is not None, f"{module} belongs to no layer: declare it in LAYERS"
    return best[1]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
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
    return found


def without_allowed(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The graph with the allow-listed edges removed."""
    return {a: {b for b in bs if (a, b) not in ALLOWED} for a, bs in graph.items()}


def test_every_module_has_a_layer() -> None:
    """Each module of src/rollmux belongs to a declared layer."""
    for name in modules():
        layer_of(name)


def test_no_import_cycle() -> None:
    """No cycle among rollmux's modules, counting imports inside functions."""
    assert cycles(without_allowed(import_graph())) == []


def test_imports_run_down_the_layers() -> None:
    """No module imports a module of a higher layer (except the allow-listed edges)."""
    against = [
        f"{a} ({LAYERS[layer_of(a)][0]}) -> {b} ({LAYERS[layer_of(b)][0]})"
        for a, bs in sorted(without_allowed(import_graph()).items()) for b in sorted(bs)
        if layer_of(b) > layer_of(a)
    ]
    assert against == []


def test_allow_list_is_current() -> None:
    """Every allow-listed edge still exists and still breaks a rule (else drop the entry)."""
    graph = import_graph()
    in_cycle = {m for component in cycles(graph) for m in component}
    for (a, b), remover in ALLOWED.items():
        assert b in graph[a], f"{a} -> {b} is gone ({remover}): remove it from ALLOWED"
        assert layer_of(b) > layer_of(a) or {a, b} <= in_cycle, f"{a} -> {b} breaks no rule"


def test_checker_sees_a_cycle_inside_functions() -> None:
    """The graph counts a function-level import, and the cycle search reports the loop."""
    tree = ast.parse(textwrap.dedent("""
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            import rollmux.sim
        def f():
            from rollmux.placement import base
    """))
    imports = [ast.unparse(n) for n in executed_imports(tree)]
    assert imports == ["from typing import TYPE_CHECKING", "from rollmux.placement import base"]
    loop = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(loop) == [["a", "b", "c"]]
    assert layer_of("rollmux.sim.cli") > layer_of("rollmux.sim.engine")


READ_GUARD = textwrap.dedent("""
    import ast, builtins, importlib, io, pathlib, sys

    src = pathlib.Path(sys.argv[1])
    names = sorted(".".join(p.relative_to(src).with_suffix("").parts).removesuffix(".__init__")
                   for p in (src / "rollmux").rglob("*.py") if p.name != "__main__.py")
    # Other packages may read files when they (or their submodules) are first imported:
    # import everything rollmux names from them before reads are refused.
    third_party = set()
    for p in (src / "rollmux").rglob("*.py"):
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.Import):
                third_party |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                third_party |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
    for name in sorted(n for n in third_party if n.split(".")[0] != "rollmux"):
        try:
            importlib.import_module(name)
        except ImportError:
            pass  # a name imported from a module, not a submodule

    def refuse(*args, **kwargs):
        raise AssertionError(f"file read at import time: {args[:1]!r}")

    builtins.open = io.open = refuse
    for attr in ("open", "read_text", "read_bytes"):
        setattr(pathlib.Path, attr, refuse)
    for name in names:
        importlib.import_module(name)
    print(len(names))
""")


@pytest.mark.subprocess
def test_no_module_reads_a_file_on_import() -> None:
    """Importing every rollmux module (fresh process) with file reads patched to fail works."""
    proc = subprocess.run([sys.executable, "-c", READ_GUARD, str(SRC)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert int(proc.stdout.split()[-1]) == len(
        [m for m, p in modules().items() if p.name != "__main__.py"])
