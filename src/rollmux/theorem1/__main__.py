"""``python -m rollmux.theorem1``: the boundary map CLI."""

from rollmux.theorem1.boundary import main

raise SystemExit(main())
