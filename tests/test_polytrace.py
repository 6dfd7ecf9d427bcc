"""Real response lengths (PolyTrace folders): reading, per-step statistics, the fit, errors."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rollmux.cli import main
from rollmux.traces import polytrace

SHARED = Path(__file__).resolve().parents[2] / "shared" / "traces" / "polytrace"
DAPO = SHARED / "verl" / "profile" / "packed_length_log" / "20260614_023133"


def write_jsonl(path: Path, records: list[object], gz: bool = True) -> Path:
    """Write JSON lines (gzip-compressed when ``gz``)."""
    text = "".join(json.dumps(r) + "\n" for r in records).encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(text, mtime=0) if gz else text)
    return path


def packed(step: int, outputs: list[list[int]], validate: bool = False) -> list[object]:
    """Packed-lengths records of one step, one per prompt."""
    return [{"step": step, "rank": 0, "local_index": i, "input": 100, "output": out,
             "n_sampling": len(out), "validate": validate} for i, out in enumerate(outputs)]


def trajectory(step: int, length: int, cap: int = 3000, latencies: tuple[float, ...] = (0.5,),
               validate: bool = False) -> dict[str, object]:
    """One multi-turn record."""
    return {"step": step, "prompt_len": 300, "max_response_len": cap,
            "final_response_len": length, "turn_count": len(latencies) + 1,
            "turns": [{}] * (len(latencies) + 1),
            "tool_calls": [{"latency_s": s} for s in latencies], "validate": validate}


def test_packed_steps_recompute_from_records(tmp_path: Path) -> None:
    """Per-step rows equal numpy over the training responses; validation rows are skipped."""
    folder = tmp_path / "run"
    write_jsonl(folder / "packed_lengths_step_0.jsonl.gz",
                packed(0, [[10, 20, 30, 4000], [50, 4000, 70, 80]])
                + packed(0, [[99999]], validate=True))
    write_jsonl(folder / "packed_lengths_step_1.jsonl", packed(1, [[5, 6, 7, 8]]), gz=False)
    write_jsonl(folder / "dapo_filter_indices.jsonl.gz", [{"workload_step": 0}])
    (w,) = polytrace.read_lengths(folder)
    assert w.cap == 4000 and w.cap_source == "inferred"
    assert w.validation_rows == 1 and w.ignored_files == ("dapo_filter_indices.jsonl.gz",)
    table = polytrace.step_table([w])
    first = table.iloc[0]
    x = np.array([10, 20, 30, 4000, 50, 4000, 70, 80])
    assert first["responses"] == 8 and first["mean"] == pytest.approx(x.mean())
    assert first["p90"] == pytest.approx(np.percentile(x, 90))
    assert first["at_cap"] == 2 and first["max"] == 4000
    assert table.iloc[1]["at_cap"] == 0 and table.iloc[1]["step"] == 1


def test_cap_option_and_unknown_cap(tmp_path: Path) -> None:
    """Without ties at the maximum the cap is unknown; --cap sets it and checks lengths."""
    folder = tmp_path / "run"
    write_jsonl(folder / "packed_lengths_step_0.jsonl.gz", packed(0, [[1, 2, 3, 900]]))
    assert polytrace.read_lengths(folder)[0].cap is None
    assert polytrace.read_lengths(folder, cap=1000)[0].cap_source == "option"
    with pytest.raises(polytrace.LengthsError, match="exceed the cap 500"):
        polytrace.read_lengths(folder, cap=500)


def test_multiturn_turns_tools_and_partial_step(tmp_path: Path) -> None:
    """Multi-turn rows carry turns and tool latency; a short last step is marked partial."""
    folder = tmp_path / "search" / "profile" / "log" / "0617"
    write_jsonl(folder / "multiturn_workload_step_0.jsonl.gz",
                [trajectory(0, n, latencies=(0.1, 0.3)) for n in (100, 200, 3000, 400)]
                + [trajectory(0, 5, validate=True)])
    write_jsonl(folder / "multiturn_workload_step_1.jsonl.gz", [trajectory(1, 50)])
    (w,) = polytrace.read_lengths(tmp_path)
    assert w.name == "search/0617" and w.format == "multiturn" and w.cap == 3000
    table = polytrace.step_table([w])
    assert list(table["partial"]) == [False, True]
    row = table.iloc[0]
    assert row["at_cap"] == 1 and row["turns_mean"] == 3 and row["tool_calls"] == 8
    assert row["tool_latency_mean_s"] == pytest.approx(0.2)
    fit = polytrace.fit_table([w], 0.8, 0.35)
    assert fit.iloc[0]["steps"] == 1 and fit.iloc[0]["responses"] == 4


def test_workload_named_by_its_config(tmp_path: Path) -> None:
    """A folder named by a PolyTrace config's workload_path takes the config's name."""
    folder = tmp_path / "verl" / "profile" / "log" / "run1"
    write_jsonl(folder / "packed_lengths_step_0.jsonl.gz", packed(0, [[1, 2]]))
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "a.yaml").write_text(
        'name: dapo_x\nworkload_path: "${W}/verl/profile/log/run1"\n')
    (tmp_path / "configs" / "broken.yaml").write_text("name: [unclosed\n")
    assert polytrace.read_lengths(folder)[0].name == "dapo_x"


@pytest.mark.parametrize(("content", "column", "line"), [
    (b'{"step": 0, "output": [1, 2], "validate": false}\nnot json\n', "*", 2),
    (b'{"step": 0, "output": [1, -2], "validate": false}\n', "output", 1),
    (b'{"step": 0, "output": "x"}\n', "output", 1),
    (b'{"step": 3, "output": [1]}\n', "step", 1),
    (b'{"output": [1]}\n', "step", 1),
    (b'{"step": 0, "output": [1], "validate": "no"}\n', "validate", 1),
    (b'[1, 2]\n', "*", 1),
    (b'\xff\xfe\n', "*", 1),
])
def test_bad_lines_are_located(tmp_path: Path, content: bytes, column: str, line: int) -> None:
    """Each bad file gives one problem naming the file, its first bad line and the field."""
    folder = tmp_path / "run"
    folder.mkdir()
    path = folder / "packed_lengths_step_0.jsonl"
    path.write_bytes(content)
    with pytest.raises(polytrace.LengthsError) as caught:
        polytrace.read_lengths(folder)
    (problem,) = caught.value.problems
    assert (problem.file, problem.line, problem.column) == (str(path), line, column)


def test_one_line_per_bad_file_with_a_count(tmp_path: Path) -> None:
    """A file of many bad lines gives one problem that counts the others."""
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "packed_lengths_step_0.jsonl").write_text("x\ny\nz\n")
    (folder / "packed_lengths_step_1.jsonl.gz").write_bytes(b"not gzip at all")
    with pytest.raises(polytrace.LengthsError) as caught:
        polytrace.read_lengths(folder)
    first, second = caught.value.problems
    assert "and 2 more bad line(s)" in first.message
    assert second.file.endswith("step_1.jsonl.gz") and "gzip" in second.message


def test_empty_wrong_and_mixed_folders(tmp_path: Path) -> None:
    """No step file, only empty steps, or both formats in one folder: one clear problem."""
    wrong = tmp_path / "wrong"
    write_jsonl(wrong / "trace.jsonl.gz", [{"a": 1}])
    with pytest.raises(polytrace.LengthsError, match="no PolyTrace step files"):
        polytrace.read_lengths(wrong)
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "packed_lengths_step_0.jsonl").write_bytes(b"")
    with pytest.raises(polytrace.LengthsError, match="no training responses"):
        polytrace.read_lengths(empty)
    mixed = tmp_path / "mixed"
    write_jsonl(mixed / "packed_lengths_step_0.jsonl.gz", packed(0, [[1]]))
    write_jsonl(mixed / "multiturn_workload_step_0.jsonl.gz", [trajectory(0, 1)])
    with pytest.raises(polytrace.LengthsError, match="both formats"):
        polytrace.read_lengths(mixed)


def test_missing_steps_and_empty_file_are_skipped(tmp_path: Path) -> None:
    """Steps 0 and 3 with an empty step 1: two rows, numbered as their files."""
    folder = tmp_path / "run"
    write_jsonl(folder / "packed_lengths_step_0.jsonl.gz", packed(0, [[1, 2]]))
    write_jsonl(folder / "packed_lengths_step_1.jsonl.gz", [])
    write_jsonl(folder / "packed_lengths_step_3.jsonl.gz", packed(3, [[3, 4]]))
    table = polytrace.step_table(polytrace.read_lengths(folder))
    assert list(table["step"]) == [0, 3]


def test_censored_fit_recovers_parameters_and_tells_shapes_apart() -> None:
    """The censored MLE recovers a known lognormal; KS separates our model from another."""
    rng = np.random.default_rng(5)
    cap = 16000.0
    x = np.minimum(np.round(rng.lognormal(9.0, 0.9, 20000)), cap).astype(np.int64)
    fit = polytrace.fit_lengths(x, cap)
    assert fit.mu == pytest.approx(9.0, abs=0.03) and fit.sigma == pytest.approx(0.9, abs=0.03)
    assert fit.mass_at_cap == pytest.approx(fit.observed_at_cap, abs=0.01)
    assert fit.ks < polytrace.KS_5PCT / math.sqrt(x.size)
    # The same data against a clearly different shape: far beyond the critical value.
    wrong = polytrace._best_location(x, cap, 0.3)
    assert wrong[1] > 5 * polytrace.KS_5PCT / math.sqrt(x.size)


def test_cli_prints_and_writes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`trace lengths` prints both tables, or writes both CSVs; a bad folder exits 1."""
    folder = tmp_path / "run"
    write_jsonl(folder / "packed_lengths_step_0.jsonl.gz", packed(0, [[10, 20, 50, 50]]))
    assert main(["trace", "lengths", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "# per-step statistics" in out and "# length-model fit" in out
    steps, fit = tmp_path / "s.csv", tmp_path / "f.csv"
    assert main(["trace", "lengths", str(folder), "--out", str(steps),
                 "--fit-out", str(fit)]) == 0
    assert list(pd.read_csv(steps).columns) == list(polytrace.STEP_COLUMNS)
    assert list(pd.read_csv(fit).columns) == list(polytrace.FIT_COLUMNS)
    (folder / "packed_lengths_step_1.jsonl").write_text("garbage\n")
    capsys.readouterr()
    assert main(["trace", "lengths", str(folder)]) == 1
    err = capsys.readouterr().err
    assert f"{folder / 'packed_lengths_step_1.jsonl'}:1: row 1, column *" in err
    assert main(["trace", "lengths", str(tmp_path / "nope")]) == 2


@pytest.mark.skipif(not DAPO.is_dir(), reason="the shared PolyTrace copy is not here")
def test_shipped_dapo_folder_recomputes() -> None:
    """The DAPO-32B folder: 6 steps of 768 responses; step 0's mean from the raw file."""
    (w,) = polytrace.read_lengths(DAPO)
    table = polytrace.step_table([w])
    assert list(table["responses"]) == [768] * 6
    with gzip.open(DAPO / "packed_lengths_step_0.jsonl.gz", "rt") as handle:
        raw = [n for line in handle for n in json.loads(line)["output"]]
    assert table.iloc[0]["mean"] == pytest.approx(np.mean(raw))
    assert table.iloc[0]["max"] == max(raw)


def source_folder(tmp_path: Path, fraction: float, cap: int = 1000) -> Path:
    """A packed workload whose every response is ``fraction`` of a known cap."""
    folder = tmp_path / f"run-{fraction}"
    n = max(1, round(fraction * cap))
    for step in range(3):
        write_jsonl(folder / f"packed_lengths_step_{step}.jsonl.gz",
                    packed(step, [[n] * 8 for _ in range(16)]))
    return folder


def test_sampler_with_real_lengths_reaches_the_worst_case_only_at_the_cap(
        tmp_path: Path) -> None:
    """Responses all at the cap give the worst-case rollout; short ones far less; the worst
    case (what planning uses) never moves; draws are deterministic for a seed."""
    from rollmux.hardware import load_hardware
    from rollmux.model import resolve
    from rollmux.sim.lengths import LengthSource
    from rollmux.sim.stochastic import PhaseSampler
    from rollmux.traces.loader import load_trace

    hw = load_hardware()
    job = resolve(load_trace(Path(__file__).resolve().parents[1] / "traces" / "microbench.csv",
                             hw)[0], hw)
    plain = PhaseSampler(job, root_seed=3)
    full = LengthSource(polytrace.read_lengths(source_folder(tmp_path, 1.0), cap=1000))
    short = LengthSource(polytrace.read_lengths(source_folder(tmp_path, 0.05), cap=1000))
    at_cap = PhaseSampler(job, root_seed=3, lengths=full).arrays(20)
    brief = PhaseSampler(job, root_seed=3, lengths=short)
    worst = plain.worst_case()
    assert np.allclose(at_cap["longest_tokens"], plain.worst_case().longest_tokens)
    assert at_cap["rollout_s"].max() == pytest.approx(worst.rollout_s, rel=0.02)
    assert brief.arrays(20)["rollout_s"].mean() < 0.5 * plain.arrays(20)["rollout_s"].mean()
    assert brief.worst_case() == worst
    again = PhaseSampler(job, root_seed=3, lengths=short).arrays(20)
    assert all(np.array_equal(again[k], v) for k, v in brief.arrays(20).items())
    # One draw at a time equals the vectorised pass (the step stream is by iteration).
    assert brief.sample(7).rollout_s == pytest.approx(float(again["rollout_s"][7]))


def test_workload_rule_sends_multiturn_jobs_to_multiturn_runs(tmp_path: Path) -> None:
    """Jobs with several turns draw from multi-turn workloads, single-turn from packed."""
    from rollmux.sim.lengths import LengthSource

    write_jsonl(tmp_path / "a" / "packed_lengths_step_0.jsonl.gz", packed(0, [[5, 6]]))
    write_jsonl(tmp_path / "b" / "multiturn_workload_step_0.jsonl.gz", [trajectory(0, 9)])
    source = LengthSource.read(tmp_path)
    for i in range(20):
        assert source.for_job(f"j{i}", 3, 0, 100.0).workload == "b"
        assert source.for_job(f"j{i}", 1, 0, 100.0).workload == "a"


def test_simulate_with_lengths_records_them(tmp_path: Path) -> None:
    """`simulate --lengths` writes its folder under lengths=<name> and names the workloads."""
    folder = source_folder(tmp_path, 0.2)
    out = tmp_path / "out"
    trace = Path(__file__).resolve().parents[1] / "traces" / "microbench.csv"
    argv = ["simulate", "--trace", str(trace), "--policy", "solo-d", "--quiet",
            "--lengths", str(folder), "--out", str(out)]
    assert main(argv) == 0
    config = json.loads((out / "config.json").read_text())
    assert config["lengths"] == str(folder)
    assert config["lengths_workloads"][0]["steps"] == 3
    assert main([*argv[:-2], "--deterministic", "--out", str(tmp_path / "o2")]) == 2


def test_real_lengths_under_drift_stay_within_the_drifted_cap(tmp_path: Path) -> None:
    """With a drift template the real lengths scale by f and never pass the drifted cap."""
    from rollmux.hardware import load_hardware
    from rollmux.model import resolve
    from rollmux.sim.drift import parse_template
    from rollmux.sim.lengths import LengthSource
    from rollmux.sim.stochastic import PhaseSampler
    from rollmux.traces.loader import load_trace

    hw = load_hardware()
    job = resolve(load_trace(Path(__file__).resolve().parents[1] / "traces" / "microbench.csv",
                             hw)[0], hw)
    source = LengthSource(polytrace.read_lengths(source_folder(tmp_path, 0.5), cap=1000))
    sampler = PhaseSampler(job, root_seed=1, lengths=source,
                           drift=parse_template("increasing-1.0"), total_iterations=20)
    cols = sampler.arrays(20)
    caps = sampler.length_cap(cols["length_factor"])
    assert np.all(np.isfinite(cols["rollout_s"])) and np.all(cols["longest_tokens"] <= caps)
    assert cols["longest_tokens"][-1] > cols["longest_tokens"][0]


def test_simulate_refuses_a_folder_without_lengths(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """`simulate --lengths` on a folder with no step file exits 1 with one located line."""
    trace = Path(__file__).resolve().parents[1] / "traces" / "microbench.csv"
    assert main(["simulate", "--trace", str(trace), "--policy", "solo-d", "--quiet",
                 "--lengths", str(tmp_path), "--out", str(tmp_path / "out")]) == 1
    assert "no PolyTrace step files" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
