# Robustness: drift templates and settings, failures.
