"""Run tools.check --scenario snapshot_swap_configs on torch < 2.13 without its second
set_num_interop_threads call (which aborts the process there): main() already set one thread."""
import sys
from benchmarks import snapshot_swap_configs
snapshot_swap_configs.set_single_thread = lambda: None
from tools import check
sys.exit(check.main(sys.argv[1:]))
