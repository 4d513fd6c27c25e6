"""writeback: an asv suite for silent writeback faults in TorchInductor.

The data path, one file (or folder) per step:

    snapshot_swap.py   a scenario: its inputs, its controls, what each call must leave behind
    aliasing.py        the upstream aliasing catalogue, one entry per reported pattern
    tensordict_swap.py the swaps a real client (TensorDict) users write
    snapshot_swap_configs.py  the swap under every way users compile, and on other inputs
    scenario.py        what every scenario module provides (Scenario, Control)
    registry.py        every scenario, found in its module as asv finds benchmarks
    contract.py        the snapshot contract: values and storage checked after one call
    compiled.py        a control built for a backend (torch.compile), its generated code captured
    attribution.py     a wrong verdict -> the Inductor pass behind it (bisector, then ablation)
    probes/            what is measured about one control: its code kept, scratch, loops, calls
    artifacts.py       where generated code and probe records are kept (under results/)
    metrics.py         every metric once: asv name, unit, row key, label, gate, chart
    asv_classes.py     the asv plumbing shared by every scenario (Correctness, Cost)
    pool.py            a setup_cache's controls probed side by side, one worker per core
    compat.py          shims for torch internals that moved between releases
    machine.py         which machine a result belongs to (host, CPU, vector ISA)
    known_failures.py  which failures (a corpus program's, a benchmark's) are known states

The suite's settings are those of the write-up: every runtime and compiler thread count is 1.
These variables must be set before torch is imported, so they are set here, in the package
that asv imports first; so is the vector ISA a machine forces (`WRITEBACK_ISA`, see machine.py).
"""

import os

for _var in (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "TORCHINDUCTOR_COMPILE_THREADS",
):
    os.environ[_var] = "1"

if _isa := os.environ.get("WRITEBACK_ISA", "").strip().lower():
    os.environ["ATEN_CPU_CAPABILITY"] = _isa
