"""Another name for the standalone check, for scripts that call it by this one:
`python -m tools.check_snapshot_swap ARGS` runs `python -m tools.check ARGS` (tools/check.py).
"""

import sys

from tools.check import main

if __name__ == "__main__":
    sys.exit(main(prog="python -m tools.check_snapshot_swap"))
