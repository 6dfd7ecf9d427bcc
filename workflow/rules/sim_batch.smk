# Seed batches: every seed of a cheap replay setting in one job (one Python process).
#
# A replay job pays about 1 s of CPU of start-up (imports) before its replay starts,
# about as much as a small replay costs (benchmarks/RESULTS-startup.md). When the
# workflow asks for one setting -- a replay folder without its seed=, i.e. everything
# between results/sim/ and /seed= -- at several seeds, rule sim_replay_seeds replays those
# seeds one after another in one process, into the same folders with the same files and
# bytes as one sim_replay job per seed (rollmux.sim.seedbatch).
#
# Included last (Snakefile): the settings come from the files every rule above asks for
# (their static inputs), so a new table that asks for replays is batched too. Batched:
# settings asked for at more than one seed whose policy solves no optimisation problem
# (rollmux.sim.seedbatch.batchable_policy: `optimal` and `regroup`, seconds to minutes
# per replay, keep a job per seed so their seeds run in parallel) and that have no kill
# list (the failure replay, sim_replay_phases). Each batch rule writes exactly the seeds
# asked for; one rule per distinct seed list (in both profiles: one, the config's
# `seeds`). Config `sim.batch_seeds: false` turns batching off (one job per replay, e.g.
# on a cluster with more nodes than settings).
from rollmux.sim.seedbatch import (
    REPLAY_FILES,
    batch_inputs,
    batch_resources,
    batch_rule_name,
    group_by_seeds,
    seed_batches,
    setting_pattern,
)

SIM_BATCHES = (
    seed_batches(
        str(item) for r in workflow.rules for item in r.input if isinstance(item, str)
    )
    if config["sim"].get("batch_seeds", True)
    else {}
)


for _seeds, _settings in group_by_seeds(SIM_BATCHES).items():
    _label = ",".join(str(s) for s in _seeds)

    rule:
        name:
            batch_rule_name(_seeds, SEEDS)
        conda:
            ENV
        input:
            unpack(lambda wildcards: batch_inputs(wildcards.setting)),
        output:
            [
                f"results/sim/{{setting}}/seed={seed}/{name}"
                for seed in _seeds
                for name in REPLAY_FILES
            ],
        wildcard_constraints:
            setting=setting_pattern(_settings),
        params:
            seeds=list(_seeds),
            overrides=SIM_OVERRIDES,
            lengths=LENGTHS_PATH,
        resources:
            **batch_resources(len(_seeds)),
        log:
            f"results/logs/sim/{{setting}}/seeds={_label}.log",
        benchmark:
            f"results/logs/sim/benchmark/{{setting}}/seeds={_label}.tsv"
        script:
            "../scripts/sim_replay_seeds.py"

    workflow.ruleorder(batch_rule_name(_seeds, SEEDS), "sim_replay")
