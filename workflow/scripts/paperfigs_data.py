"""Snakemake adapter: data of the model figures (Fig. 3, 4, 6, 7, 10, 12, 13)."""

import logging

from rollmux.experiments import model_figures
from rollmux.hardware import load_hardware
from rollmux.io import write_csv

snakemake = globals()["snakemake"]  # injected by Snakemake's script: directive
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, filemode="w")
cfg = snakemake.params.cfg
hw = load_hardware(overrides=dict(snakemake.params.overrides) or None)
seed = int(snakemake.params.seed)
out = snakemake.output
frames = {}
frames["fig03_phases"], frames["fig03_slowdowns"] = model_figures.bad_case(
    list(cfg["fig03_job_types"]), int(cfg["fig03_iterations"]), hw
)
frames["fig04_switch"] = model_figures.switch_table(
    [float(s) for s in cfg["fig04_model_sizes_b"]], int(cfg["fig04_gpus"]), hw
)
frames["fig06_phases"], frames["fig06_status"] = model_figures.group_status_examples(
    cfg["fig06_groups"], int(cfg["fig06_iterations"])
)
frames["fig07_phases"] = model_figures.migration_timeline(
    list(cfg["fig07_job_types"]), int(cfg["fig07_iterations"]), seed, hw
)
frames["fig10_phases"] = model_figures.scenario_gantt(
    list(snakemake.params.scenarios), seed, int(cfg["fig10_iterations"]),
    int(cfg["fig10_shown_iterations"]), hw,
)
frames["fig12_lengths"], frames["fig12_stats"] = model_figures.length_distribution(
    list(cfg["fig12_job_types"]), int(cfg["fig12_bins"]), hw
)
frames["fig13_sync"] = model_figures.sync_table(
    [float(s) for s in cfg["fig13_model_sizes_b"]], [int(g) for g in cfg["fig13_gpus"]], hw
)
for name, frame in frames.items():
    write_csv(frame, out[name])
    logging.info("wrote %d rows to %s", len(frame), out[name])
