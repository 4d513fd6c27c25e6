"""Instructions executed by one warm call of a compiled control, counted by valgrind's callgrind.

Deterministic where wall time is not: the count repeats to within a few hundredths of a
percent on one build, whatever else the machine is doing. Importing torch and Inductor under
callgrind takes 20 s or more, so every (control, n) of a scenario is counted in one valgrind
process, started with the probe (`started`: it imports torch while the controls compile),
which loads the wrappers Inductor already generated (their kernels come from Inductor's
cache, nothing is compiled under valgrind) and switches collection on only around the
measured calls (`torch._C._valgrind_toggle`, what torch's own Timer uses). A count depends on
what else its process did (splitting a scenario's cases over two processes moved some by
thousands of instructions a call), so the child does the same steps in the same order for
every scenario and build.

Instrumenting costs most of the time under callgrind, so where valgrind's headers are
installed (valgrind's own package ships /usr/include/valgrind/callgrind.h) the child starts
uninstrumented (`--instr-atstart=no`) and switches instrumentation on through a tiny helper
built with the C compiler Inductor needs anyway; that halves the run. Without the header,
everything runs instrumented: slower, same counts.

What is counted is the generated wrapper's `call` - the compiled graph's entrypoint, its
kernels and allocations - for `CALLS` warm calls, divided by `CALLS`. Dynamo's guards and
the Python frame around it are not in the count; they are in `time_warm_call`.

The child checks what it counts: the C++ inside the wrapper it loads must be the kernels.cpp
kept beside it, and the scenario's contract must hold (inputs, their views, their storage)
for the first call and for one call on fresh inputs after the counted ones, with the case
rebuilt from the scenario's module. The returns are not checked there: outputs that alias
inputs are rebuilt outside the wrapper, by the runtime around it. A failed check fails the
count (`CountedCodeBroken`) instead of giving a number.

Python's string hashing is seeded per process, and the dict lookups on the call's path
follow the seed: with a random seed a count at N=3 moved by 0.22% between two processes here, with
a fixed one (`PYTHONHASHSEED=0` in the child) it repeats to the instruction.

Run as a module, it is the child that valgrind runs (the spec's path comes on stdin):
    valgrind --tool=callgrind --collect-atstart=no python -m benchmarks.probes.instructions
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import types
from dataclasses import dataclass
from pathlib import Path

from .. import artifacts
from ..compat import vector_isa
from ..contract import Case, check
from ..scenario import Scenario

CALLS = 50
_TOTAL = re.compile(r"^(?:summary|totals):\s+(\d+)", re.M)
_REPORT = "report.json"


class CountedCodeBroken(RuntimeError):
    """The code the child counted is not the kept code, or broke the scenario's contract."""


@dataclass
class Counts:
    """Instructions per warm call by case key, and why each case that failed its checks did."""

    instructions: dict[str, int]
    broken: dict[str, str]


def valgrind_problem(isa: str | None = None) -> str | None:
    """Why callgrind cannot count code generated for `isa` here, or None when it can.

    valgrind cannot run AVX512 and hides it from the programs it runs (measured: inside it,
    Inductor's `pick_vec_isa` says avx2), so code generated for avx512 would be rebuilt for
    avx2 there and move half of each tensor: not the code that runs natively. Such a machine
    counts nothing; its avx2 twin (`WRITEBACK_ISA=avx2`) counts the code it runs."""
    if shutil.which("valgrind") is None:
        return "valgrind not found: install it (Debian/Ubuntu: apt-get install valgrind)"
    if isa and isa.startswith("avx512"):
        return ("valgrind cannot run AVX512 code (it hides AVX512 from the program, so the "
                "kernels would be rebuilt for avx2): count on this host's avx2 machine, "
                "`make history ISA=avx2`")  # fmt: skip
    return None


def case_spec(key: str, scenario, row: dict, isa: str) -> dict:
    """What the child needs to load, check and count the kept code of one probe row."""
    return {
        "key": key,
        "code_dir": row["code_dir"],
        "isa": isa,  # the vector ISA the kept code was generated for
        "module": scenario.control(row["control"]).fn.__module__,  # defines the scenario
        "scenario": scenario.name,
        "control": row["control"],
        "n": row["n"],
        "input_order": row["input_order"],  # the wrapper's, which is not the call's
    }


def count(cases: list[dict], timeout: float = 1800) -> Counts:
    """Instructions per warm call for each case (`case_spec`), in one valgrind run; a case
    whose code fails the child's checks is in `broken` instead, with the reason.

    Raises RuntimeError with valgrind's last words when the run fails.
    """
    with started() as child:
        return child.count(cases, timeout)


@contextlib.contextmanager
def started():
    """A valgrind child started now, before its cases are known: `.count(cases)` hands them
    over. Starting valgrind and importing torch under it is a third of a count, so a probe
    starts the child first and it does that while the probe compiles; it then waits for its
    cases before anything else, so what it counts, and the process it counts in, are those of
    a child started at the end. A child never handed cases is stopped on exit."""
    with tempfile.TemporaryDirectory(prefix="writeback-callgrind-") as tmp:
        folder = Path(tmp)
        helper = _client_helper(folder)
        out = folder / "callgrind.out"
        valgrind = [
            "valgrind", "--tool=callgrind", "--collect-atstart=no", f"--callgrind-out-file={out}",
            f"--instr-atstart={'no' if helper else 'yes'}",
        ]  # fmt: skip
        child = _Child(folder, valgrind, helper)
        try:
            yield child
        finally:
            child.stop()


class _Child:
    """The counting child (`_child`), running under `prefix` in `folder` (valgrind's command;
    empty runs it natively, where the collection toggles do nothing)."""

    def __init__(self, folder: Path, prefix: list[str], helper: str | None):
        self.folder, self.helper = folder, helper
        self.out = folder / "callgrind.out"
        root = Path(__file__).resolve().parents[2]
        env = {
            **os.environ,
            "PYTHONPATH": f"{root}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
            "PYTHONHASHSEED": "0",
        }
        self._stderr = open(folder / "stderr.txt", "w+")  # noqa: SIM115 - closed in stop()
        self._popen = subprocess.Popen(
            [*prefix, sys.executable, "-m", "benchmarks.probes.instructions"],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self._stderr,
            text=True, env=env, cwd=folder,
        )  # fmt: skip

    def count(self, cases: list[dict], timeout: float = 1800) -> Counts:
        """The counts of `cases` (see `count`); the child exits after one hand-over."""
        if not cases:
            return Counts({}, {})
        report = self.report(cases, timeout)
        totals = {}
        for index, key in enumerate(report["counted"], start=1):
            dump = Path(f"{self.out}.{index}")
            match = _TOTAL.search(dump.read_text()) if dump.is_file() else None
            if match is None:
                raise RuntimeError(f"callgrind wrote no totals for case {key} ({dump.name})")
            totals[key] = int(match.group(1))
        broken = report["broken"]
        counted = {key: round(total / CALLS) for key, total in totals.items() if key not in broken}
        return Counts(counted, broken)

    def report(self, cases: list[dict], timeout: float) -> dict:
        """Hand the cases over and return the child's report: {"counted": keys in the order of
        their dumps, "broken": {key: why}}. RuntimeError when it did not finish."""
        spec = self.folder / "spec.json"
        spec.write_text(json.dumps({"calls": CALLS, "cases": cases, "helper": self.helper}))
        try:
            self._popen.stdin.write(f"{spec}\n")
            self._popen.stdin.close()
        except BrokenPipeError:
            pass  # it died while it waited: its exit code and last words are below
        try:
            code = self._popen.wait(timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            raise RuntimeError(f"callgrind run did not finish in {timeout:.0f} s") from None
        if code != 0 or not (self.folder / _REPORT).is_file():
            self._stderr.seek(0)
            tail = " | ".join(self._stderr.read().strip().splitlines()[-3:])
            raise RuntimeError(f"callgrind run failed (exit {code}): {tail}")
        return json.loads((self.folder / _REPORT).read_text())

    def stop(self) -> None:
        if self._popen.poll() is None:
            self._popen.kill()
        self._popen.wait()
        with contextlib.suppress(OSError, BrokenPipeError):
            self._popen.stdin.close()
        self._stderr.close()


def run_child(folder: Path, cases: list[dict], prefix: list[str], helper, timeout: float):
    """Run the child in `folder` under `prefix` (empty: natively) on `cases` and return its
    report (`_Child.report`)."""
    child = _Child(folder, prefix, helper)
    try:
        return child.report(cases, timeout)
    finally:
        child.stop()


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


def _child() -> None:
    """Inside valgrind: import torch, wait for the spec's path on stdin (none: exit, nothing
    to count), load and check each wrapper, count `calls` calls, dump, check again, and write
    the report (`_Child.report`).

    Inductor is imported by the first wrapper, after the spec, as it always was: importing
    its modules before reading the spec (7 s sooner under valgrind) moved the counts at N=3 by
    about -160 and -250 instructions a call, every time (a count depends on what its process did
    before; results/logs/callgrind-prestart-counts-torch-2.13.0.txt)."""
    import ctypes

    import torch

    torch.set_num_threads(1)
    line = sys.stdin.readline().strip()
    if not line:
        return
    spec = json.loads(Path(line).read_text())
    switch = ctypes.CDLL(spec["helper"]) if spec["helper"] else None
    broken, loaded = {}, []
    with torch.no_grad():
        for index, case in enumerate(spec["cases"]):  # loading and first calls: uninstrumented
            try:
                module = _load_kept(Path(case["code_dir"]), f"writeback_counted_{index}")
                _check_one_call(module, case, "the first call")
            except CountedCodeBroken as exc:
                broken[case["key"]] = str(exc)
                continue
            loaded.append((case, module, list(_ordered_case(case).inputs.values())))
        if switch:
            switch.writeback_instrument_on()  # once, and on to the end: counts stay consistent
        for _, module, inputs in loaded:
            module.call(list(inputs))  # instrumented, not collected: translations settle
            torch._C._valgrind_toggle()
            for _ in range(spec["calls"]):
                module.call(list(inputs))
            torch._C._valgrind_toggle_and_dump_stats()
        for case, module, _ in loaded:
            try:
                _check_one_call(module, case, f"a call after the {spec['calls']} counted ones")
            except CountedCodeBroken as exc:
                broken[case["key"]] = str(exc)
    counted = [case["key"] for case, _, _ in loaded]
    Path(_REPORT).write_text(json.dumps({"counted": counted, "broken": broken}))


def _load_kept(folder: Path, name: str):
    """The module of `folder`/wrapper.py, after checking that the C++ it compiles is the
    kernels.cpp kept beside it (the code a reader sees is the code counted)."""
    path = folder / "wrapper.py"
    text = path.read_text()
    with tempfile.TemporaryDirectory(prefix="writeback-kernels-") as tmp:
        artifacts.save_code(Path(tmp), [text])
        loaded_cpp = (Path(tmp) / "kernels.cpp").read_text()
    if loaded_cpp != (folder / "kernels.cpp").read_text():
        raise CountedCodeBroken(f"{path}: its C++ is not the kernels.cpp kept beside it")
    module = types.ModuleType(name)
    module.__file__ = str(path)
    exec(compile(text, str(path), "exec"), module.__dict__)  # the very text compared above
    return module


def _ordered_case(case: dict):
    """A fresh case of the scenario, its inputs in the wrapper's order; no returns to check
    (outputs that alias inputs are rebuilt by the runtime around the wrapper)."""
    module = importlib.import_module(case["module"])
    scenario = next(
        value
        for value in vars(module).values()
        if isinstance(value, Scenario) and value.name == case["scenario"]
    )
    full = scenario.case(scenario.control(case["control"]), case["n"])
    inputs = {name: full.inputs[name] for name in case["input_order"]}
    return Case(inputs=inputs, after=full.after, returns={})


def _check_one_call(module, case: dict, which: str) -> None:
    verdict = check(lambda *inputs: module.call(list(inputs)), _ordered_case(case))
    if verdict.ok:
        return
    where = f"{case['scenario']}.{case['control']} n={case['n']} ({case['code_dir']})"
    message = f"{where}: {which} of the counted code broke the contract: {verdict.describe()}"
    if (isa := vector_isa()) != case["isa"]:
        message += (
            f" - here Inductor builds the kernels for {isa}, not for the {case['isa']} they were"
            " generated for (valgrind hides vector extensions it cannot run)"
        )
    raise CountedCodeBroken(message)


if __name__ == "__main__":
    _child()
    sys.stderr.flush()
    os._exit(0)  # torch's teardown under valgrind takes seconds, after everything is counted
