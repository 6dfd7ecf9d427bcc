"""The few hardware facts trace validation needs, read from rollmux.hardware."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: Pool size per GPU type when the hardware catalogue names none: the paper's testbed
#: (§6: 328 H20 + 328 H800).
DEFAULT_POOL_GPUS = 328


@dataclass(frozen=True)
class HardwareView:
    """GPU type names, node shape, pool sizes and a memory check for one job."""

    gpu_types: frozenset[str]
    gpus_per_node: int
    host_mem_gb: float
    pools: Mapping[str, int] = field(default_factory=dict)
    hardware: Any = None

    def pool_gpus(self, gpu_type: str) -> float:
        """GPUs in the pool of `gpu_type` (DEFAULT_POOL_GPUS if the catalogue is silent)."""
        return float(self.pools.get(gpu_type, DEFAULT_POOL_GPUS))

    def memory_problems(self, job: Any) -> list[tuple[str, str]]:
        """(column, message) for each side whose derived host memory exceeds a node's DRAM."""
        if self.hardware is None:
            return []
        from rollmux import phasetimes

        out: list[tuple[str, str]] = []
        for column, derive in (
            ("rollout_mem_gb_per_node", phasetimes.rollout_mem_gb_per_node),
            ("train_mem_gb_per_node", phasetimes.train_mem_gb_per_node),
        ):
            if getattr(job, column) is not None:
                continue  # given values were checked against DRAM already
            try:
                needed = float(derive(job, self.hardware))
            except ValueError as exc:  # the phase model rejects a job that fits no node
                message = str(exc)
                blamed = [f for f in ("rollout_gpus", "train_gpus") if f in message]
                return [(blamed[0] if blamed else column, message)]
            if needed > self.host_mem_gb:
                out.append(
                    (
                        column,
                        f"derived host memory {needed:.1f} GB per node exceeds a node's DRAM "
                        f"of {self.host_mem_gb:g} GB (more nodes or a smaller model needed)",
                    )
                )
        return out


def _pools_of(hw: Any) -> dict[str, int]:
    """Pool sizes if the catalogue carries them (GPUType.pool_gpus or hw.pools)."""
    pools: dict[str, int] = {}
    explicit = getattr(hw, "pools", None)
    if isinstance(explicit, Mapping):
        pools.update({str(k): int(v) for k, v in explicit.items()})
    for name, gpu in getattr(hw, "gpus", {}).items():
        for attribute in ("pool_gpus", "pool_size", "count"):
            value = getattr(gpu, attribute, None)
            if isinstance(value, int) and value > 0:
                pools.setdefault(str(name), value)
                break
    return pools


def hardware_view(hw: Any = None) -> HardwareView:
    """A HardwareView of `hw`, or of rollmux.hardware.load_hardware() when hw is None."""
    if isinstance(hw, HardwareView):
        return hw
    if hw is None:
        from rollmux.hardware import load_hardware

        hw = load_hardware()
    return HardwareView(
        gpu_types=frozenset(str(name) for name in hw.gpus),
        gpus_per_node=int(hw.node.gpus_per_node),
        host_mem_gb=float(hw.node.host_mem_gb),
        pools=_pools_of(hw),
        hardware=hw,
    )
