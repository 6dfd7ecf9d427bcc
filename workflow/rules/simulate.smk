# Trace replays (`rollmux simulate`) and their key=value sweeps.
