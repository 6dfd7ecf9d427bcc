"""``python -m rollmux.theorem1``: the ``rollmux theorem1`` command (boundary map)."""

from rollmux.theorem1.cli import main

raise SystemExit(main())
