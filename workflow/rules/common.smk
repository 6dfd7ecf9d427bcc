# Shared set-up: validate the config before any rule runs, and collect the targets.
#
# rollmux.experiments.config_checks.check_config checks the config when the workflow is
# parsed, so a dry run (`snakemake -n`) catches a bad one: the top-level schema
# (workflow/schemas/config.schema.yaml, naming every section) and each later stage's
# workflow/schemas/<section>.schema.yaml (their defaults filled in), then what only Python
# knows: policy names against the registry (plug-ins included), hardware_overrides and SLO
# settings through the command line's validators, the sweep plan, the failure
# experiment's jobs and kills against its trace. Each problem is one line
# `rollmux: error: <config files>: <key path>: <message>`, then the run stops.
import json
import os
import sys
from pathlib import Path

import yaml

from rollmux.experiments.config_checks import ConfigError, check_config


try:
    check_config(
        config,
        schema_dir=Path(workflow.basedir) / "workflow" / "schemas",
        # the files in the order they were merged (the Snakefile's, then --configfile's),
        # relative to the working folder when inside it
        source=" + ".join(
            os.path.relpath(f) if Path(f).resolve().is_relative_to(Path.cwd()) else str(f)
            for f in [
                *(f for f in workflow.configfiles if f not in workflow.overwrite_configfiles),
                *workflow.overwrite_configfiles,
            ]
        )
        or "config",
    )
except ConfigError as _error:
    for _line in str(_error).splitlines():
        print(f"rollmux: error: {_line}", file=sys.stderr)
    raise SystemExit(1)

# Software of every rule (`conda: ENV`): the project environment, rollmux installed.
ENV = "../../environment.yml"

# The interpreter of the `shell:` rules: `python` found first on PATH, which starts with
# the folder of the interpreter running Snakemake (the project's .venv under `make
# reproduce`; a rule's conda environment comes first with --use-conda). A name, not the
# interpreter's absolute path, so no path of the build machine reaches the HTML report
# (it shows every rule's params).
PYTHON = "python"

envvars:
    "PATH",


os.environ["PATH"] = os.pathsep.join(
    [os.path.dirname(sys.executable), *os.environ.get("PATH", "").split(os.pathsep)]
)

# The config's hardware overrides as an option of `rollmux simulate` (empty when none).
HW_OVERRIDES_ARG = (
    f"--hardware-overrides '{json.dumps(config['hardware_overrides'], sort_keys=True)}'"
    if config.get("hardware_overrides")
    else ""
)

# Seeds of every stochastic experiment behind a claim (config `seeds`; default: the one
# `seed`): the replays the seed changes run at each (rollmux.sim.sweeps.spec_uses_seed),
# every other experiment once; the claims report shows each claim's mean and 95% interval
# over them (rollmux.experiments.intervals; per-seed values in results/metrics/seeds/).
SEEDS = [int(s) for s in (config.get("seeds") or [config["seed"]])]

# Every rule file appends the files `rule all` builds to this list.
TARGETS = []
# Every rule file writing results beyond the paper (the beyond ledger's rows,
# src/rollmux/data/beyond.csv) appends its metrics file here; the claims report reads them.
BEYOND_METRICS = []

# Categories of the HTML report (`snakemake --report`), in the paper's order: the report
# sorts categories by name (hence the numbers) and the figures inside one by file name.
REPORT_CATEGORY = {
    "claims": "1. Claims: the paper's numbers next to ours",
    "motivation": "2. Motivation: Fig. 1-4",
    "design": "3. Design: Fig. 6-7 and Theorem 1",
    "microbench": "4. Micro-benchmarks and ablations (sec. 6.2-6.3): Fig. 10, 12, 13",
    "production": "5. Production trace replay (sec. 6.4): Fig. 14 and the fluid bound",
    "sensitivity": "6. Scheduler quality in simulation (sec. 6.5): Fig. 15, 20",
    "robustness": "7. Robustness (sec. 6.6): Fig. 16-19",
    "beyond": "8. Beyond the paper: rollmux-repeat against rollmux",
}


# The residuals file of every fit of the declared calibration set (inputs of the claims
# report), read from src/rollmux/data/calibration.yaml when the workflow is parsed.
with open("src/rollmux/data/calibration.yaml", encoding="utf-8") as _fh:
    CALIBRATION_RESIDUALS = sorted(
        fit["residuals"] for fit in ((yaml.safe_load(_fh) or {}).get("fits") or {}).values()
    )
