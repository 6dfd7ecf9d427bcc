"""Tests of the hardware/cost model and its YAML loader (rollmux.hardware)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from rollmux.hardware import (
    GPUType,
    Network,
    NodeSpec,
    default_hardware_path,
    load_hardware,
    parameter_table,
)


def test_defaults_match_public_specs() -> None:
    """The packaged defaults carry the spec-sheet numbers of H20 and H800 and the testbed."""
    hw = load_hardware()
    h20, h800 = hw.gpu("H20"), hw.gpu("H800")
    assert (h20.hbm_gb, h20.hbm_bw_gbps, h20.bf16_tflops) == (96.0, 4000.0, 148.0)
    assert (h800.hbm_gb, h800.hbm_bw_gbps, h800.bf16_tflops) == (80.0, 3350.0, 989.0)
    assert hw.node.gpus_per_node == 8
    assert hw.node.host_mem_gb == 2048.0
    assert (hw.network.intra_gbit_s, hw.network.cross_gbit_s) == (400.0, 20.0)


def test_price_ratio_is_the_papers() -> None:
    """H800 costs 2.85x an H20 per hour (paper Table 1)."""
    hw = load_hardware()
    assert hw.gpu("H800").price_usd_per_h / hw.gpu("H20").price_usd_per_h == pytest.approx(
        2.85, abs=0.005
    )


def test_price_of_gpus_literal() -> None:
    """Eight H800 at $5.28 cost $42.24 per hour; zero GPUs cost nothing."""
    hw = load_hardware()
    assert hw.price_usd_per_h("H800", 8) == pytest.approx(42.24)
    assert hw.price_usd_per_h("H20", 16) == pytest.approx(29.6)
    assert hw.price_usd_per_h("H20", 0) == 0.0


def test_network_bytes_per_second_literal() -> None:
    """20 Gbit/s at 90% efficiency is 2.25 GB/s; 400 Gbit/s is 45 GB/s."""
    net = load_hardware().network
    assert net.cross_bytes_per_s == pytest.approx(2.25e9)
    assert net.intra_bytes_per_s == pytest.approx(45e9)


def test_unknown_gpu_lists_valid_names() -> None:
    """Asking for an unknown GPU type names it and lists the valid ones."""
    with pytest.raises(ValueError, match=r"'A100'.*\['H20', 'H800'\]"):
        load_hardware().gpu("A100")


@pytest.mark.parametrize("n_gpus", [-1, 2.5, True])
def test_price_rejects_bad_gpu_count(n_gpus: object) -> None:
    """A negative, fractional or boolean GPU count is rejected, naming n_gpus."""
    with pytest.raises(ValueError, match="n_gpus"):
        load_hardware().price_usd_per_h("H20", n_gpus)  # type: ignore[arg-type]


def test_nested_and_dotted_overrides() -> None:
    """Overrides may be nested mappings or dotted keys, and only change what they name."""
    hw = load_hardware(
        overrides={"node": {"host_mem_gb": 1024}, "gpus.H20.price_usd_per_h": 2.0,
                   "perf.train_mfu": 0.4}
    )
    assert hw.node.host_mem_gb == 1024.0
    assert hw.gpu("H20").price_usd_per_h == 2.0
    assert hw.perf.train_mfu == 0.4
    assert hw.gpu("H800").price_usd_per_h == 5.28
    assert hw.node.pcie_gbps == load_hardware().node.pcie_gbps


def test_override_can_add_a_complete_gpu_type() -> None:
    """A new GPU type is accepted when every field is given."""
    spec = {"hbm_gb": 80, "hbm_bw_gbps": 2039, "bf16_tflops": 312, "price_usd_per_h": 1.5}
    hw = load_hardware(overrides={"gpus": {"A100": spec}})
    assert hw.gpu("A100") == GPUType("A100", 80.0, 2039.0, 312.0, 1.5)


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"node": {"host_mem_tb": 2}}, "node.host_mem_tb"),
        ({"nodes": {"host_mem_gb": 2}}, "nodes"),
        ({"gpus.H20.hbm_tb": 1}, "gpus.H20.hbm_tb"),
        ({"perf.mfu": 0.3}, "perf.mfu"),
        ({"gpus": {"A100": {"hbm_gb": 80}}}, "gpus.A100.bf16_tflops"),
    ],
)
def test_unknown_or_incomplete_override_names_key(overrides: dict, key: str) -> None:
    """Unknown keys, and new GPUs missing fields, raise ValueError naming the key."""
    with pytest.raises(ValueError, match=key.replace(".", r"\.")):
        load_hardware(overrides=overrides)


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"node.host_mem_gb": -1}, "node.host_mem_gb"),
        ({"node.gpus_per_node": 0}, "node.gpus_per_node"),
        ({"node.gpus_per_node": 8.5}, "node.gpus_per_node"),
        ({"gpus.H20.hbm_gb": float("nan")}, "gpus.H20.hbm_gb"),
        ({"network.cross_gbit_s": 0}, "network.cross_gbit_s"),
        ({"network.efficiency": 1.5}, "network.efficiency"),
        ({"perf.train_mfu": 0}, "perf.train_mfu"),
        ({"perf.decode_efficiency": "fast"}, "perf.decode_efficiency"),
        ({"perf.rollout_weight_hbm_fraction": 0.95}, "perf.rollout_weight_hbm_fraction"),
        ({"workload.mean_response_fraction": 1.0}, "workload.mean_response_fraction"),
        ({"workload.prompts_per_iter": 0}, "workload.prompts_per_iter"),
        ({"workload.tool_latency_s_per_turn": -1}, "workload.tool_latency_s_per_turn"),
    ],
)
def test_bad_override_values_name_key(overrides: dict, key: str) -> None:
    """Non-positive, non-finite, non-integer or out-of-range values name their key."""
    with pytest.raises(ValueError, match=key.replace(".", r"\.")):
        load_hardware(overrides=overrides)


def test_load_from_path_with_bare_values(tmp_path: Path) -> None:
    """A user file may give bare numbers instead of documented {value: ...} leaves."""
    raw = yaml.safe_load(default_hardware_path().read_text(encoding="utf-8"))
    raw["node"]["host_mem_gb"] = 1536
    path = tmp_path / "hw.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    assert load_hardware(path).node.host_mem_gb == 1536.0


def test_load_rejects_unknown_top_level_key(tmp_path: Path) -> None:
    """An unknown section in the YAML file is named in the error."""
    raw = yaml.safe_load(default_hardware_path().read_text(encoding="utf-8"))
    raw["cluster"] = {"racks": 3}
    path = tmp_path / "hw.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    with pytest.raises(ValueError, match="cluster"):
        load_hardware(path)


def test_load_missing_file_names_path(tmp_path: Path) -> None:
    """A missing file raises ValueError naming the file and why."""
    missing = tmp_path / "absent.yaml"
    with pytest.raises(ValueError, match=f"^{re.escape(str(missing))}: cannot be read: no such"):
        load_hardware(missing)


def test_every_default_is_documented() -> None:
    """Every leaf has a unit and a source; every estimate also gives its reasoning."""
    raw = yaml.safe_load(default_hardware_path().read_text(encoding="utf-8"))
    leaves = [leaf for spec in raw["gpus"].values() for leaf in spec.values()]
    leaves += [leaf for s in ("node", "network", "perf", "workload") for leaf in raw[s].values()]
    assert len(leaves) == len(parameter_table())
    for leaf in leaves:
        assert leaf.get("unit") and leaf.get("source"), leaf
        if leaf.get("estimate"):
            assert leaf.get("reasoning"), leaf


def test_parameter_table_flags_prices_as_estimates() -> None:
    """The absolute GPU prices are estimates; the spec-sheet HBM sizes are not."""
    table = parameter_table().set_index("key")
    assert bool(table.loc["gpus.H20.price_usd_per_h", "estimate"])
    assert not bool(table.loc["gpus.H20.hbm_gb", "estimate"])


def test_hardware_is_immutable() -> None:
    """The GPU mapping of a loaded Hardware cannot be mutated."""
    hw = load_hardware()
    with pytest.raises(TypeError):
        hw.gpus["H20"] = hw.gpus["H800"]  # type: ignore[index]


def test_dataclass_defaults_for_new_node_fields() -> None:
    """NodeSpec and Network can be built from the interface's three and two fields."""
    assert NodeSpec(8, 2048.0, 25.0).disk_gbps > 0
    assert Network(400.0, 20.0).efficiency == 0.9
