# Shared set-up: validate the config before any rule runs.
import sys

from snakemake.utils import validate


validate(config, "../schemas/config.schema.yaml")
