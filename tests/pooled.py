"""The packaged hardware's pools, for tests that build group models or closed-form costs.

Pools are a required argument (no silent default): tests price with these, the H20 and
H800 of src/rollmux/data/defaults.yaml.
"""

from __future__ import annotations

from typing import Any

from rollmux.closedform import PoolSpec, pools_from_hardware
from rollmux.group import CoExecutionGroup
from rollmux.hardware import load_hardware

POOLS: PoolSpec = pools_from_hardware(load_hardware())


def group_of(*args: Any, **kwargs: Any) -> CoExecutionGroup:
    """A :class:`CoExecutionGroup` on :data:`POOLS` (same arguments otherwise)."""
    return CoExecutionGroup(*args, pools=POOLS, **kwargs)
