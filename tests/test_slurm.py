"""The SLURM profile on a real single-node SLURM cluster started for the test.

Where slurmctld, slurmd, munged and the SLURM client commands are installed (Debian:
`apt-get install slurmctld slurmd slurm-client munge`; .ci/run does this best-effort) and
the test runs as root, it writes a minimal slurm.conf and a munge key into a temporary
folder, starts munged, slurmctld and slurmd on free local ports, runs a small sweep of
the pipeline with the project's profile (workflow/profiles/slurm, executor
snakemake-executor-plugin-slurm), checks the outputs and that SLURM ran the jobs, and
stops the three daemons it started. Elsewhere it skips, saying what is missing.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
import pytest
from test_workflow import TEST_CONFIG, copy_pipeline

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ("munged", "slurmctld", "slurmd", "sbatch", "srun", "squeue", "sinfo", "scontrol")
#: The sweep: two cheap, independent jobs (one SLURM job each).
TARGETS = ("results/theorem1/summary.csv", "results/traces/trace=microbench/stats.csv")

# About 20-40 s: SLURM scheduling and status polling.
pytestmark = [pytest.mark.slow, pytest.mark.subprocess]


def _why_not() -> str | None:
    """Why a SLURM cluster cannot be started here, or None if it can."""
    missing = [name for name in PROGRAMS if shutil.which(name) is None]
    if missing:
        return f"SLURM/munge not installed (missing {', '.join(missing)}; see .ci/run)"
    if os.geteuid() != 0:
        return "starting slurmd needs root"
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        return "snakemake-executor-plugin-slurm not installed (pip install -e '.[cluster]')"
    return None


def _free_port() -> int:
    """A TCP port nothing listens on right now (loopback)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _slurm_conf(folder: Path, host: str) -> str:
    """A single-node slurm.conf keeping every file and socket under ``folder``."""
    cpus = os.cpu_count() or 1
    return "\n".join(
        [
            "ClusterName=rollmuxtest",
            f"SlurmctldHost={host}(127.0.0.1)",
            f"SlurmctldPort={_free_port()}",
            f"SlurmdPort={_free_port()}",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={folder / 'munge' / 'sock'}",
            "SlurmUser=root",
            "SlurmdUser=root",
            f"StateSaveLocation={folder / 'state'}",
            f"SlurmdSpoolDir={folder / 'spool'}",
            f"SlurmctldPidFile={folder / 'slurmctld.pid'}",
            f"SlurmdPidFile={folder / 'slurmd.pid'}",
            f"SlurmctldLogFile={folder / 'log' / 'slurmctld.log'}",
            f"SlurmdLogFile={folder / 'log' / 'slurmd.log'}",
            f"PlugStackConfig={folder / 'plugstack.conf'}",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "MpiDefault=none",
            "ReturnToService=2",
            # squeue reports finished jobs for this long (no accounting database here)
            "MinJobAge=600",
            "AccountingStorageType=accounting_storage/none",
            "JobAcctGatherType=jobacct_gather/none",
            "JobCompType=jobcomp/none",
            f"NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory=8000 State=UNKNOWN",
            f"PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP",
            "",
        ]
    )


def _wait(check: Callable[[], bool], what: str, logs: list[Path], timeout: float = 30) -> None:
    """Poll ``check`` until true; fail naming ``what`` with the daemons' logs otherwise."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    tails = "\n".join(
        f"--- {log}\n{log.read_text(errors='replace')[-2000:]}" for log in logs if log.exists()
    )
    pytest.fail(f"{what} within {timeout:.0f} s\n{tails}")


@pytest.fixture
def slurm_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Start munged, slurmctld and slurmd (ours, by pid); yield the client environment."""
    reason = _why_not()
    if reason:
        pytest.skip(reason)
    # short path: the munge socket path must fit a sockaddr_un (108 bytes)
    folder = Path(tmp_path_factory.mktemp("slurm"))
    for sub in ("munge", "state", "spool", "log", "bin"):
        (folder / sub).mkdir()
    (folder / "munge").chmod(0o755)
    key = folder / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    (folder / "plugstack.conf").write_text("")
    host = socket.gethostname().split(".")[0]
    conf = folder / "slurm.conf"
    conf.write_text(_slurm_conf(folder, host))
    # The slurm-jobstep plugin strips SLURM_* variables before the srun inside each job;
    # on a real cluster srun then reads /etc/slurm/slurm.conf, here this shim points it
    # at the test cluster's file instead.
    srun = folder / "bin" / "srun"
    srun.write_text(f'#!/bin/sh\nSLURM_CONF={conf} exec {shutil.which("srun")} "$@"\n')
    srun.chmod(0o755)
    env = {
        **os.environ,
        "SLURM_CONF": str(conf),
        "PATH": f"{folder / 'bin'}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}"
        + os.environ.get("PATH", ""),
    }
    daemons: list[subprocess.Popen] = []
    logs = [
        folder / "munge" / "log",
        folder / "log" / "slurmctld.log",
        folder / "log" / "slurmd.log",
    ]
    try:
        daemons.append(
            subprocess.Popen(
                [
                    "munged",
                    "--foreground",
                    "--force",
                    f"--socket={folder / 'munge' / 'sock'}",
                    f"--key-file={key}",
                    f"--log-file={folder / 'munge' / 'log'}",
                    f"--pid-file={folder / 'munge' / 'pid'}",
                    f"--seed-file={folder / 'munge' / 'seed'}",
                ],
                env=env,
            )
        )
        _wait(lambda: (folder / "munge" / "sock").exists(), "munged did not start", logs)
        daemons.append(subprocess.Popen(["slurmctld", "-D", "-f", str(conf)], env=env))
        daemons.append(subprocess.Popen(["slurmd", "-D", "-f", str(conf), "-N", host], env=env))

        def idle() -> bool:
            result = subprocess.run(
                ["sinfo", "-h", "-o", "%t"], env=env, capture_output=True, text=True, check=False
            )
            return result.stdout.strip() == "idle"

        _wait(idle, "the SLURM node did not become idle", logs)
        yield env
    finally:
        for daemon in reversed(daemons):
            daemon.terminate()
        for daemon in reversed(daemons):
            try:
                daemon.wait(timeout=20)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait(timeout=10)


def test_profile_runs_sweep_on_slurm(slurm_cluster: dict[str, str], tmp_path: Path) -> None:
    """Both targets are built by SLURM jobs through the project's profile."""
    workdir = copy_pipeline(tmp_path / "pipeline")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            *TARGETS,
            "--workflow-profile",
            "workflow/profiles/slurm",
            # no accounting database here: no account, status from squeue, quick polling
            "--slurm-no-account",
            "--slurm-status-command",
            "squeue",
            "--slurm-init-seconds-before-status-checks",
            "1",
            "--seconds-between-status-checks",
            "2",
            "--default-resources",
            "mem_mb=1000",
            "runtime=10",
            "--configfile",
            TEST_CONFIG,
        ],
        cwd=workdir,
        env=slurm_cluster,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-5000:]
    assert "submitted with SLURM jobid" in output
    summary = pd.read_csv(workdir / TARGETS[0])
    assert len(summary) > 0
    stats = pd.read_csv(workdir / TARGETS[1], keep_default_na=False)
    assert {"statistic", "achieved"} <= set(stats.columns)
    jobs = subprocess.run(
        ["squeue", "--states=all", "-h", "-o", "%T"],
        env=slurm_cluster,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert jobs.count("COMPLETED") >= len(TARGETS)
