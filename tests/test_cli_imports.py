"""The command line's import graph (issue 12, item 2): no cycle through a CLI module.

The top-level command (`rollmux.cli`) imports the modules that define sub-commands
(`rollmux.sim.cli`, `rollmux.traces.cli`, `rollmux.theorem1.cli`); they, and every other
module, never import `rollmux.cli`, and what the commands share lives in
`rollmux.cliutil`. Imports are read from the source (every `import` statement, those
inside functions included), not from what happens to be loaded: the graph and its
cycles are tests/test_layers.py's (one reader of the import graph).
"""

from __future__ import annotations

from test_layers import cycles, import_graph


def is_cli_module(name: str) -> bool:
    """Whether ``name`` is the top-level CLI, its helpers or a sub-command module."""
    return name in {"rollmux.cli", "rollmux.cliutil"} or name.endswith(".cli")


def test_no_module_imports_the_top_level_cli() -> None:
    """Only entry points may import rollmux.cli; sub-command modules use rollmux.cliutil."""
    graph = import_graph()
    importers = sorted(name for name, targets in graph.items() if "rollmux.cli" in targets)
    assert importers == ["rollmux.entry"]  # the console script's guard (Ctrl-C while loading)


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
