"""RollMux at scale: same decisions as before the group index, structure-sharing snapshots."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from placement_trail import FIXTURE, TRAILS, decision_trail

from rollmux.placement.frozenmap import FrozenMap

FLOAT_COLUMNS = ("marginal_cost_usd_per_h", "meta_iteration_s")


@pytest.mark.parametrize(("policy", "arrivals"), TRAILS, ids=[p for p, _ in TRAILS])
def test_decisions_match_the_recorded_reference(policy: str, arrivals: int) -> None:
    """Every decision on a seeded arrival/departure trail equals the pre-index code's."""
    recorded = pd.read_csv(FIXTURE, keep_default_na=False)
    expected = recorded[recorded.policy == policy].reset_index(drop=True)
    assert len(expected) == arrivals
    got = decision_trail(policy, arrivals)
    for column in expected.columns:
        if column in FLOAT_COLUMNS:
            want = expected[column].astype(float)
            assert got[column].tolist() == pytest.approx(want.tolist(), rel=1e-9, nan_ok=True)
        else:
            mismatch = got[column].astype(str) != expected[column].astype(str)
            first = mismatch.idxmax() if mismatch.any() else None
            assert first is None, (
                f"{policy}: column {column!r} differs first at step {first}: "
                f"{got.loc[first].to_dict()} != {expected.loc[first].to_dict()}"
            )
    # The trail exercises packing into existing groups as well as new groups.
    assert {"direct-packing", "new-group"} <= set(got.strategy)


_KEYS = st.integers(0, 150).map(lambda i: f"k{i}")
_OPS = st.lists(
    st.tuples(st.booleans(), _KEYS, st.integers()), min_size=1, max_size=12
)


@given(
    start=st.dictionaries(_KEYS, st.integers(), max_size=150),
    edits=st.lists(_OPS, max_size=25),
)
def test_frozen_map_behaves_like_a_dict(
    start: dict[str, int], edits: list[list[tuple[bool, str, int]]]
) -> None:
    """Edits give a dict's contents and order; earlier maps stay as they were."""
    model = dict(start)
    current = FrozenMap(start)
    history = [(current, dict(model))]
    for ops in edits:
        draft = current.edit()
        before = dict(model)
        for delete, key, value in ops:
            if delete and key in model:
                del model[key]
                del draft[key]
            elif not delete:
                model[key] = value
                draft[key] = value
        new = draft.freeze()
        assert list(new.items()) == list(model.items())
        assert list(new.values()) == list(model.values()) and len(new) == len(model)
        assert all(new[k] == v and k in new for k, v in model.items())
        assert new == model
        changed = new.changed_keys(current)
        if changed is not None:
            truth = {k for k in before.keys() | model.keys()
                     if (k in before) != (k in model) or before.get(k) is not model.get(k)}
            assert truth <= changed
        history.append((new, dict(model)))
        current = new
    for frozen, contents in history:
        assert list(frozen.items()) == list(contents.items())


def test_frozen_map_is_read_only_and_reports_missing_keys() -> None:
    """No item assignment; KeyError for absent keys; a frozen draft refuses writes."""
    fm = FrozenMap({"a": 1})
    with pytest.raises(TypeError):
        fm["b"] = 2  # type: ignore[index]
    with pytest.raises(KeyError):
        fm["b"]
    draft = fm.edit()
    with pytest.raises(KeyError):
        del draft["b"]
    draft["b"] = 2
    assert draft.freeze() == {"a": 1, "b": 2} and fm == {"a": 1}
    with pytest.raises(ValueError, match="frozen"):
        draft["c"] = 3
    assert FrozenMap({"a": 1}).changed_keys(fm) is None  # another lineage
