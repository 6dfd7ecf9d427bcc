"""Hardware and cost model: GPU types, nodes, network and performance constants.

All numbers come from ``rollmux/data/defaults.yaml`` (each with its source and an
``estimate`` flag) and can be overridden; see docs/model.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, fields
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pandas as pd

from rollmux.io import read_yaml

__all__ = [
    "GPUType",
    "Hardware",
    "Network",
    "NodeSpec",
    "PerfModel",
    "WorkloadDefaults",
    "default_hardware_path",
    "load_hardware",
    "parameter_table",
]

GB = 1e9

#: Largest hardware quantity accepted (GB, GB/s, TFLOPS, $/h, counts): far above any real
#: device; a larger one is a typo or a unit slip, and products of it overflow to inf.
VALUE_MAX = 1e9


def _shown(value: float) -> str:
    """A number for a message (an integer of any size, cut to a few dozen digits)."""
    text = f"{value:g}" if isinstance(value, float) else str(value)
    return text if len(text) <= 40 else f"{text[:12]}... ({len(text)} digits)"


def _check_positive(owner: str, name: str, value: Any) -> float:
    """Return ``value`` as a float, or raise ValueError naming ``owner.name``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{owner}.{name} must be a number, got {value!r}")
    if value > VALUE_MAX:  # first: an integer beyond floats cannot go through isfinite
        raise ValueError(f"{owner}.{name} = {_shown(value)} is out of range: must be <= "
                         f"{VALUE_MAX:g}")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{owner}.{name} must be positive and finite, got {value!r}")
    return float(value)


def _check_fraction(owner: str, name: str, value: Any) -> float:
    """Return ``value`` as a float in (0, 1], or raise ValueError naming ``owner.name``."""
    out = _check_positive(owner, name, value)
    if out > 1:
        raise ValueError(f"{owner}.{name} must be in (0, 1], got {value!r}")
    return out


def _check_count(owner: str, name: str, value: Any) -> int:
    """Return ``value`` as an int >= 1, or raise ValueError naming ``owner.name``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{owner}.{name} must be an integer >= 1, got {value!r}")
    if value < 1:
        raise ValueError(f"{owner}.{name} must be an integer >= 1, got {value!r}")
    if value > VALUE_MAX:
        raise ValueError(f"{owner}.{name} = {_shown(value)} is out of range: must be <= "
                         f"{VALUE_MAX:g}")
    return int(value)


@dataclass(frozen=True)
class GPUType:
    """One GPU model: memory, bandwidth, compute and hourly price."""

    name: str
    hbm_gb: float
    hbm_bw_gbps: float  # GB/s
    bf16_tflops: float
    price_usd_per_h: float

    def __post_init__(self) -> None:
        """Validate that every quantity is positive and finite."""
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"GPUType.name must be a non-empty string, got {self.name!r}")
        for f in ("hbm_gb", "hbm_bw_gbps", "bf16_tflops", "price_usd_per_h"):
            object.__setattr__(self, f, _check_positive(f"gpus.{self.name}", f, getattr(self, f)))


@dataclass(frozen=True)
class NodeSpec:
    """A server: GPUs per node, host DRAM, and its host-GPU, NVLink and disk bandwidths."""

    gpus_per_node: int
    host_mem_gb: float
    pcie_gbps: float  # GB/s per GPU, host DRAM -> HBM
    nvlink_gbps: float = 300.0  # GB/s per GPU, effective intra-node all-gather
    disk_gbps: float = 5.0  # GB/s per node, checkpoint reads

    def __post_init__(self) -> None:
        """Validate counts and bandwidths."""
        object.__setattr__(
            self, "gpus_per_node", _check_count("node", "gpus_per_node", self.gpus_per_node)
        )
        for f in ("host_mem_gb", "pcie_gbps", "nvlink_gbps", "disk_gbps"):
            object.__setattr__(self, f, _check_positive("node", f, getattr(self, f)))


@dataclass(frozen=True)
class Network:
    """Intra-cluster fabric and the cross-cluster link (Gbit/s) with a protocol efficiency."""

    intra_gbit_s: float
    cross_gbit_s: float
    efficiency: float = 0.9

    def __post_init__(self) -> None:
        """Validate bandwidths and the efficiency fraction."""
        for f in ("intra_gbit_s", "cross_gbit_s"):
            object.__setattr__(self, f, _check_positive("network", f, getattr(self, f)))
        object.__setattr__(
            self, "efficiency", _check_fraction("network", "efficiency", self.efficiency)
        )

    @property
    def intra_bytes_per_s(self) -> float:
        """Effective intra-cluster bandwidth per node in bytes/s."""
        return self.intra_gbit_s * 1e9 / 8 * self.efficiency

    @property
    def cross_bytes_per_s(self) -> float:
        """Effective cross-cluster bandwidth in bytes/s."""
        return self.cross_gbit_s * 1e9 / 8 * self.efficiency


@dataclass(frozen=True)
class PerfModel:
    """Constants of the analytical phase-time model (see docs/model.md)."""

    weight_bytes_per_param: float
    train_state_bytes_per_param: float
    kv_kb_per_token_per_b: float
    train_flops_per_param_token: float
    train_mfu: float
    prefill_mfu: float
    decode_mfu: float
    decode_efficiency: float
    rollout_weight_hbm_fraction: float
    rollout_hbm_utilization: float
    warm_switch_const_s: float
    control_plane_start_s: float
    # Rollout speed on a co-located (veRL) job's training GPUs over HBM-bandwidth scaling.
    colocated_rollout_speedup: float = 1.0

    def __post_init__(self) -> None:
        """Validate: byte/FLOP counts, times and speed-ups positive, efficiencies in (0, 1]."""
        fractions = {
            "train_mfu",
            "prefill_mfu",
            "decode_mfu",
            "decode_efficiency",
            "rollout_weight_hbm_fraction",
            "rollout_hbm_utilization",
        }
        for f in fields(self):
            check = _check_fraction if f.name in fractions else _check_positive
            object.__setattr__(self, f.name, check("perf", f.name, getattr(self, f.name)))
        if self.rollout_weight_hbm_fraction >= self.rollout_hbm_utilization:
            raise ValueError(
                "perf.rollout_weight_hbm_fraction must be below perf.rollout_hbm_utilization "
                f"(else no HBM is left for KV cache), got {self.rollout_weight_hbm_fraction!r}"
            )


@dataclass(frozen=True)
class WorkloadDefaults:
    """Defaults for RL-job fields left as None (response lengths, batch shape, tools)."""

    mean_response_fraction: float
    response_len_sigma: float
    prompt_tokens: int
    prompts_per_iter: int
    responses_per_prompt: int
    tool_latency_s_per_turn: float

    def __post_init__(self) -> None:
        """Validate fractions, shapes and counts."""
        frac = _check_fraction(
            "workload", "mean_response_fraction", self.mean_response_fraction
        )
        if frac >= 1:
            raise ValueError(
                "workload.mean_response_fraction must be below 1, "
                f"got {self.mean_response_fraction!r}"
            )
        object.__setattr__(self, "mean_response_fraction", frac)
        object.__setattr__(
            self,
            "response_len_sigma",
            _check_positive("workload", "response_len_sigma", self.response_len_sigma),
        )
        for f in ("prompt_tokens", "prompts_per_iter", "responses_per_prompt"):
            object.__setattr__(self, f, _check_count("workload", f, getattr(self, f)))
        if isinstance(self.tool_latency_s_per_turn, bool) or not isinstance(
            self.tool_latency_s_per_turn, int | float
        ):
            raise ValueError(
                "workload.tool_latency_s_per_turn must be a number, "
                f"got {self.tool_latency_s_per_turn!r}"
            )
        if not math.isfinite(self.tool_latency_s_per_turn) or self.tool_latency_s_per_turn < 0:
            raise ValueError(
                "workload.tool_latency_s_per_turn must be finite and >= 0, "
                f"got {self.tool_latency_s_per_turn!r}"
            )
        object.__setattr__(self, "tool_latency_s_per_turn", float(self.tool_latency_s_per_turn))


@dataclass(frozen=True)
class Hardware:
    """The whole hardware/cost configuration: GPU types, node, network, model constants."""

    gpus: Mapping[str, GPUType]
    node: NodeSpec
    network: Network
    perf: PerfModel
    workload: WorkloadDefaults

    def __post_init__(self) -> None:
        """Freeze the GPU mapping and check that keys match the GPU names."""
        if not self.gpus:
            raise ValueError("gpus must define at least one GPU type, got an empty mapping")
        for key, gpu in self.gpus.items():
            if not isinstance(gpu, GPUType) or gpu.name != key:
                raise ValueError(f"gpus.{key} must be a GPUType named {key!r}, got {gpu!r}")
        object.__setattr__(self, "gpus", MappingProxyType(dict(self.gpus)))
        # Hashed by value, once: memo keys (rollmux.memo) hold the hardware itself, so
        # equal hardware loaded twice shares entries and an override makes a new key.
        object.__setattr__(self, "_hash", hash((tuple(sorted(self.gpus.items())), self.node,
                                                self.network, self.perf, self.workload)))

    def __hash__(self) -> int:
        """Hash of the values (equal hardware, equal hash)."""
        return self._hash  # type: ignore[attr-defined, no-any-return]

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle the fields only: string hashes differ between processes, so the
        receiving process recomputes the hash."""
        return (Hardware, (dict(self.gpus), self.node, self.network, self.perf,
                           self.workload))

    def gpu(self, name: str) -> GPUType:
        """The GPU type called ``name``; ValueError listing the valid names when unknown."""
        try:
            return self.gpus[name]
        except (KeyError, TypeError):
            raise ValueError(
                f"unknown gpu type {name!r}; valid names: {sorted(self.gpus)}"
            ) from None

    def price_usd_per_h(self, gpu_type: str, n_gpus: int) -> float:
        """Hourly price of ``n_gpus`` GPUs of ``gpu_type`` in USD."""
        if isinstance(n_gpus, bool) or not isinstance(n_gpus, int) or n_gpus < 0:
            raise ValueError(f"n_gpus must be an integer >= 0, got {n_gpus!r}")
        return self.gpu(gpu_type).price_usd_per_h * n_gpus


def default_hardware_path() -> Path:
    """Path of the packaged ``defaults.yaml``."""
    return Path(str(resources.files("rollmux") / "data" / "defaults.yaml"))


_SECTIONS = ("gpus", "node", "network", "perf", "workload")
_GPU_FIELDS = ("hbm_gb", "hbm_bw_gbps", "bf16_tflops", "price_usd_per_h")
_SECTION_FIELDS: dict[str, tuple[str, ...]] = {
    "node": tuple(f.name for f in fields(NodeSpec)),
    "network": tuple(f.name for f in fields(Network)),
    "perf": tuple(f.name for f in fields(PerfModel)),
    "workload": tuple(f.name for f in fields(WorkloadDefaults)),
}


def _read_documented(path: str | Path | None) -> dict[str, Any]:
    """Read a defaults file (leaves are ``{value, source, ...}`` mappings)."""
    file = default_hardware_path() if path is None else Path(path)
    raw = read_yaml(file)
    if not isinstance(raw, dict):
        raise ValueError(f"{file}: must hold a YAML mapping, got {type(raw).__name__}")
    return raw


def _leaf_value(key: str, leaf: Any) -> Any:
    """The number of one documented leaf (``{value: ...}``) or a bare number."""
    if isinstance(leaf, dict):
        if "value" not in leaf:
            raise ValueError(f"{key} must have a 'value' entry, got keys {sorted(leaf)}")
        unknown = set(leaf) - {"value", "unit", "source", "estimate", "reasoning"}
        if unknown:
            raise ValueError(f"{key} has unknown entries {sorted(unknown)}")
        return leaf["value"]
    return leaf


def _strip_docs(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Turn a documented defaults tree into plain ``section -> field -> value`` dicts."""
    unknown = set(raw) - set(_SECTIONS)
    if unknown:
        raise ValueError(f"unknown top-level keys {sorted(unknown)}; valid: {list(_SECTIONS)}")
    plain: dict[str, Any] = {}
    for section in _SECTIONS:
        body = raw.get(section)
        if not isinstance(body, dict):
            raise ValueError(f"{section} must be a mapping, got {body!r}")
        if section == "gpus":
            plain["gpus"] = {
                name: {f: _leaf_value(f"gpus.{name}.{f}", v) for f, v in spec.items()}
                if isinstance(spec, dict)
                else spec
                for name, spec in body.items()
            }
        else:
            plain[section] = {f: _leaf_value(f"{section}.{f}", v) for f, v in body.items()}
    return plain


def _nest_overrides(overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Expand dotted keys (``"node.host_mem_gb"``) into nested dicts."""
    nested: dict[str, Any] = {}
    for key, value in overrides.items():
        if not isinstance(key, str) or not key:
            raise ValueError(f"override keys must be non-empty strings, got {key!r}")
        parts = key.split(".")
        cursor = nested
        for part in parts[:-1]:
            nxt = cursor.setdefault(part, {})
            if not isinstance(nxt, dict):
                raise ValueError(f"override {key!r} conflicts with a value given for {part!r}")
            cursor = nxt
        leaf = parts[-1]
        if isinstance(value, Mapping):
            existing = cursor.setdefault(leaf, {})
            if not isinstance(existing, dict):
                raise ValueError(f"override {key!r} conflicts with a value given for {leaf!r}")
            existing.update(_nest_overrides(value))
        else:
            cursor[leaf] = value
    return nested


def _apply_overrides(plain: dict[str, Any], overrides: Mapping[str, Any]) -> None:
    """Merge ``overrides`` into ``plain`` in place; unknown keys raise ValueError."""
    for section, body in _nest_overrides(overrides).items():
        if section not in _SECTIONS:
            raise ValueError(f"unknown override key {section!r}; valid: {list(_SECTIONS)}")
        if not isinstance(body, dict):
            raise ValueError(f"override {section!r} must be a mapping, got {body!r}")
        if section == "gpus":
            for name, spec in body.items():
                if not isinstance(spec, dict):
                    raise ValueError(f"override gpus.{name} must be a mapping, got {spec!r}")
                bad = set(spec) - set(_GPU_FIELDS)
                if bad:
                    raise ValueError(
                        f"unknown override key gpus.{name}.{sorted(bad)[0]}; "
                        f"valid: {list(_GPU_FIELDS)}"
                    )
                plain["gpus"].setdefault(name, {}).update(spec)
            continue
        for field_name, value in body.items():
            if field_name not in _SECTION_FIELDS[section]:
                raise ValueError(
                    f"unknown override key {section}.{field_name}; "
                    f"valid: {list(_SECTION_FIELDS[section])}"
                )
            plain[section][field_name] = value


def _build(plain: Mapping[str, Any]) -> Hardware:
    """Construct the frozen dataclasses, naming the offending key on any mismatch."""
    gpus: dict[str, GPUType] = {}
    for name, spec in plain["gpus"].items():
        if not isinstance(spec, dict):
            raise ValueError(f"gpus.{name} must be a mapping, got {spec!r}")
        missing = set(_GPU_FIELDS) - set(spec)
        unknown = set(spec) - set(_GPU_FIELDS)
        if missing or unknown:
            key = sorted(missing or unknown)[0]
            what = "missing" if missing else "unknown"
            raise ValueError(f"gpus.{name}.{key} is {what}; fields: {list(_GPU_FIELDS)}")
        gpus[str(name)] = GPUType(name=str(name), **spec)
    built: dict[str, Any] = {}
    classes = {"node": NodeSpec, "network": Network, "perf": PerfModel,
               "workload": WorkloadDefaults}
    for section, cls in classes.items():
        body = plain[section]
        unknown = set(body) - set(_SECTION_FIELDS[section])
        if unknown:
            raise ValueError(f"unknown key {section}.{sorted(unknown)[0]}")
        required = {
            f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING
        }
        missing = required - set(body)
        if missing:
            raise ValueError(f"{section}.{sorted(missing)[0]} is missing")
        built[section] = cls(**body)
    return Hardware(gpus=gpus, **built)


def load_hardware(
    path: str | Path | None = None, overrides: Mapping[str, Any] | None = None
) -> Hardware:
    """Load the hardware model from ``path`` (default: packaged defaults) plus ``overrides``.

    ``overrides`` is a nested mapping or dotted keys with plain values, e.g.
    ``{"node": {"host_mem_gb": 1024}, "gpus.H20.price_usd_per_h": 2.0}``. A new GPU type
    may be added under ``gpus`` when all its fields are given. Unknown keys or bad values
    raise ValueError naming the key.
    """
    plain = _strip_docs(_read_documented(path))
    if overrides is not None:
        if not isinstance(overrides, Mapping):
            raise ValueError(f"overrides must be a mapping, got {overrides!r}")
        _apply_overrides(plain, overrides)
    return _build(plain)


def parameter_table(path: str | Path | None = None) -> pd.DataFrame:
    """One row per default parameter: key, value, unit, source and estimate flag."""
    raw = _read_documented(path)
    _strip_docs(raw)  # validates the structure before tabulating it
    rows: list[dict[str, Any]] = []

    def add(key: str, leaf: Any) -> None:
        """Append one documented leaf as a row."""
        doc = leaf if isinstance(leaf, dict) else {"value": leaf}
        rows.append(
            {
                "key": key,
                "value": doc["value"],
                "unit": doc.get("unit", ""),
                "source": doc.get("source", ""),
                "estimate": bool(doc.get("estimate", False)),
            }
        )

    for section in _SECTIONS:
        for name, body in raw[section].items():
            if section == "gpus":
                for f, leaf in body.items():
                    add(f"gpus.{name}.{f}", leaf)
            else:
                add(f"{section}.{name}", body)
    return pd.DataFrame(rows, columns=["key", "value", "unit", "source", "estimate"])
