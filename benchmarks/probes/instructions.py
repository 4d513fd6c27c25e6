"""Instructions executed by one warm call of a compiled control, counted by valgrind's callgrind.

Deterministic where wall time is not: the count repeats to within a few hundredths of a
percent on one build, whatever else the machine is doing. Importing torch under callgrind
takes about a minute, so every (control, n) of a build is counted in one valgrind process,
which loads the wrappers Inductor already generated (their kernels come from Inductor's
cache, nothing is compiled under valgrind) and switches collection on only around the
measured calls (`torch._C._valgrind_toggle`, what torch's own Timer uses).

Instrumenting costs most of the time under callgrind, so where valgrind's headers are
installed (valgrind's own package ships /usr/include/valgrind/callgrind.h) the child starts
uninstrumented (`--instr-atstart=no`) and switches instrumentation on through a tiny helper
built with the C compiler Inductor needs anyway; that halves the run. Without the header,
everything runs instrumented: slower, same counts.

What is counted is the generated wrapper's `call` - the compiled graph's entrypoint, its
kernels and allocations - for `CALLS` warm calls, divided by `CALLS`. Dynamo's guards and
the Python frame around it are not in the count; they are in `time_warm_call`.

Run as a module, it is the child that valgrind runs:
    valgrind --tool=callgrind --collect-atstart=no python -m benchmarks.probes.instructions SPEC
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CALLS = 50
_TOTAL = re.compile(r"^(?:summary|totals):\s+(\d+)", re.M)


def valgrind_problem() -> str | None:
    if shutil.which("valgrind") is None:
        return "valgrind not found: install it (Debian/Ubuntu: apt-get install valgrind)"
    return None


def count(cases: list[dict], timeout: float = 1800) -> dict[str, int]:
    """Instructions per warm call for each case {"key", "wrapper", "shapes"}, in one valgrind
    run (`shapes`: the wrapper's input shapes, in order).

    Raises RuntimeError with valgrind's last words when the run fails.
    """
    if not cases:
        return {}
    root = Path(__file__).resolve().parents[2]
    with tempfile.TemporaryDirectory(prefix="writeback-callgrind-") as tmp:
        helper = _client_helper(Path(tmp))
        spec = Path(tmp) / "spec.json"
        spec.write_text(json.dumps({"calls": CALLS, "cases": cases, "helper": helper}))
        out = Path(tmp) / "callgrind.out"
        command = [
            "valgrind", "--tool=callgrind", "--collect-atstart=no", f"--callgrind-out-file={out}",
            f"--instr-atstart={'no' if helper else 'yes'}",
            sys.executable, "-m", "benchmarks.probes.instructions", str(spec),
        ]  # fmt: skip
        env = {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
        result = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, env=env, cwd=tmp
        )
        if result.returncode != 0:
            tail = " | ".join(result.stderr.strip().splitlines()[-3:])
            raise RuntimeError(f"callgrind run failed (exit {result.returncode}): {tail}")
        totals = []
        for index in range(1, len(cases) + 1):
            dump = Path(f"{out}.{index}")
            match = _TOTAL.search(dump.read_text()) if dump.is_file() else None
            if match is None:
                raise RuntimeError(f"callgrind wrote no totals for case {index} ({dump.name})")
            totals.append(int(match.group(1)))
    return {case["key"]: round(total / CALLS) for case, total in zip(cases, totals)}


_HELPER_C = """
#include <valgrind/callgrind.h>
void writeback_instrument_on(void) { CALLGRIND_START_INSTRUMENTATION; }
"""


def _client_helper(folder: Path) -> str | None:
    """Build the instrumentation switch; None where valgrind's header or a compiler is missing."""
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if cc is None or not Path("/usr/include/valgrind/callgrind.h").is_file():
        return None
    source, library = folder / "switch.c", folder / "libwritebackswitch.so"
    source.write_text(_HELPER_C)
    built = subprocess.run([cc, "-O1", "-shared", "-fPIC", "-o", str(library), str(source)],
                           capture_output=True, text=True)  # fmt: skip
    return str(library) if built.returncode == 0 else None


def _child(spec_path: str) -> None:
    """Inside valgrind: load each wrapper, warm it, count `calls` calls, dump the stats."""
    import ctypes

    import torch

    torch.set_num_threads(1)
    spec = json.loads(Path(spec_path).read_text())
    switch = ctypes.CDLL(spec["helper"]) if spec["helper"] else None
    loaded = []
    with torch.no_grad():
        for index, case in enumerate(spec["cases"]):  # loading and first calls: uninstrumented
            module = _load(case["wrapper"], f"writeback_counted_{index}")
            inputs = [_input(shape, k) for k, shape in enumerate(case["shapes"])]
            module.call(list(inputs))
            loaded.append((module, inputs))
        if switch:
            switch.writeback_instrument_on()  # once, and on to the end: counts stay consistent
        for module, inputs in loaded:
            module.call(list(inputs))  # instrumented, not collected: translations settle
            torch._C._valgrind_toggle()
            for _ in range(spec["calls"]):
                module.call(list(inputs))
            torch._C._valgrind_toggle_and_dump_stats()


def _input(shape: list[int], index: int):
    """FP32 input of the case's shape (the wrapper's inputs, in the case's order)."""
    import torch

    count = 1
    for dim in shape:
        count *= dim
    return (torch.arange(count, dtype=torch.float32) + index * 2**21).reshape(shape)


def _load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


if __name__ == "__main__":
    _child(sys.argv[1])
