"""``python -m gbla``: the ``gbla`` command (see gbla/cli.py)."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
