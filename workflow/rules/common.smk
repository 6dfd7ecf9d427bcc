# Shared set-up: validate the config before any rule runs, and collect the targets.
#
# The top-level schema (workflow/schemas/config.schema.yaml) names every section; the
# sections of the later pipeline stages each have their own schema file,
# workflow/schemas/<section>.schema.yaml, validated here too.
import json
import sys

import yaml

from snakemake.utils import validate


validate(config, "../schemas/config.schema.yaml")
for _section in ("calibration", "sim", "robustness", "paperfigs", "claims"):
    validate(config.setdefault(_section, {}), f"../schemas/{_section}.schema.yaml")

# Software of every rule (`conda: ENV`): the project environment, rollmux installed.
ENV = "../../environment.yml"

# The config's hardware overrides as an option of `rollmux simulate` (empty when none).
HW_OVERRIDES_ARG = (
    f"--hardware-overrides '{json.dumps(config['hardware_overrides'], sort_keys=True)}'"
    if config.get("hardware_overrides")
    else ""
)

# Every rule file appends the files `rule all` builds to this list.
TARGETS = []

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
