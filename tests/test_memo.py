"""rollmux.memo: value keys, bounds, one clear-all, and no process-wide cache outside it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from rollmux.hardware import load_hardware
from rollmux.jobs import RLJob
from rollmux.memo import Memo, clear_all, memoised, memos
from rollmux.model import resolve

SRC = Path(__file__).resolve().parents[1] / "src" / "rollmux"


def test_equal_hardware_shares_entries_and_an_override_does_not() -> None:
    """Resolved jobs are keyed by the hardware's value, not its identity."""
    job = RLJob(job_id="a", model_size_b=7, max_response_tokens=8192)
    first = resolve(job, load_hardware())
    # Equal hardware, loaded twice: the derived values are the memoised ones.
    assert resolve(job, load_hardware()).times is first.times
    slower = load_hardware(overrides={"perf.train_mfu": 0.2})
    assert resolve(job, slower).times.train_s > first.times.train_s


def test_a_full_memo_empties_before_taking_more() -> None:
    """At max_entries the memo starts over; a weight bounds the summed weight instead."""
    memo: Memo[int, str] = Memo("test.bounded", max_entries=2)
    memo.put(1, "a")
    memo.put(2, "b")
    assert len(memo) == 2 and memo.get(1) == "a"
    memo.put(3, "c")
    assert len(memo) == 1 and memo.get(1) is None and memo.get(3) == "c"
    weighed: Memo[int, list[int]] = Memo("test.weighed", max_entries=5, weight=len)
    weighed.put(1, [0, 0, 0])
    weighed.put(2, [0, 0])
    assert len(weighed) == 2
    weighed.put(3, [0])
    assert len(weighed) == 1 and weighed.get(3) == [0]
    assert weighed.lookup(3, lambda: [9]) == [0] and weighed.lookup(4, lambda: [9]) == [9]


def test_memoised_functions_and_clear_all() -> None:
    """A memoised function computes once per argument value; clear_all empties every memo."""
    calls: list[int] = []

    @memoised(8)
    def square(x: int) -> int:
        calls.append(x)
        return x * x

    assert square(3) == 9 and square(3) == 9 and calls == [3]
    with pytest.raises(TypeError, match="positional arguments only"):
        square(x=3)
    assert len(square.memo) == 1 and square.memo.name in memos()
    clear_all()
    assert all(len(memo) == 0 for memo in memos().values())
    assert square(3) == 9 and calls == [3, 3]


def test_memo_names_and_bounds_are_checked() -> None:
    """A second memo with a taken name, or a bound below one, is refused."""
    Memo("test.unique")
    with pytest.raises(ValueError, match="exists already"):
        Memo("test.unique")
    with pytest.raises(ValueError, match="max_entries must be an integer >= 1"):
        Memo("test.zero", max_entries=0)


def test_no_process_wide_cache_outside_the_helper() -> None:
    """No functools cache decorator and no module-level cache dict in src/rollmux."""
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        if path.name == "memo.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for deco in node.decorator_list:
                    text = ast.unparse(deco)
                    if "lru_cache" in text or text in ("cache", "functools.cache"):
                        offenders.append(f"{path.name}:{node.lineno} @{text}")
        for node in tree.body:
            target = node.target if isinstance(node, ast.AnnAssign) else (
                node.targets[0] if isinstance(node, ast.Assign) else None)
            value = getattr(node, "value", None)
            if (isinstance(target, ast.Name) and "cache" in target.id.lower()
                    and isinstance(value, ast.Dict | ast.Call)):
                offenders.append(f"{path.name}:{node.lineno} {target.id}")
    assert offenders == []


def test_no_cache_keyed_on_object_identity() -> None:
    """No module of rollmux calls id(): a cache keys on values (or a group id), never on
    an object's identity, which a later object can reuse."""
    calls = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "id"):
                calls.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert calls == []
