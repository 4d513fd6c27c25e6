"""Where the records kept beside asv's results live, each keyed by what produced it.

    results/generated/<machine>/<build>/<isa>/<scenario>/probe.json        every row measured
    results/generated/<machine>/<build>/<isa>/<scenario>/<control>/n<N>/wrapper.py   the wrapper
    results/generated/<machine>/<build>/<isa>/<scenario>/<control>/n<N>/kernels.cpp  its C++
    .asv/inductor-cache/<machine>/<build>/<isa>/<config>/                 Inductor's caches

`<machine>` is the asv machine (`benchmarks/machine.py`: host, CPU and forced ISA), `<build>`
is `torch-<version>-<commit[:8]>`, `<isa>` the vector ISA Inductor generated code for. So the
same control on two builds is two folders that differ only in `<build>` (`tools/diff_code.py`
diffs them), and a second machine or ISA never overwrites the first one's records.

A probe record is merged row by row: a run that measured fewer rows (fewer sizes, say)
replaces the rows it measured and keeps the others, each row saying when it was measured.

Each (machine, build, ISA, compile configuration) compiles in an Inductor cache of its own,
emptied before the run that decides the verdicts (`fresh_inductor_cache`): no verdict depends
on what another configuration or an earlier run left in a cache.

The root is `$WRITEBACK_ARTIFACTS` when set, else `results/generated` under the directory asv
runs from (`$ASV_CONF_DIR`, which asv sets for the environments it builds), else under the
folder that holds `benchmarks/` (asv's `existing` environments get no ASV_* variables).
The caches live under `$WRITEBACK_CACHE` when set, else `.asv/inductor-cache` there.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path

ROW_KEY = ("control", "backend", "n")


def _project() -> Path:
    if conf_dir := os.environ.get("ASV_CONF_DIR"):
        return Path(conf_dir)
    return Path(__file__).resolve().parents[1]


def root() -> Path:
    if explicit := os.environ.get("WRITEBACK_ARTIFACTS"):
        return Path(explicit)
    return _project() / "results" / "generated"


def cache_root() -> Path:
    if explicit := os.environ.get("WRITEBACK_CACHE"):
        return Path(explicit)
    return _project() / ".asv" / "inductor-cache"


def scenario_dir(base: Path, machine: str, build: str, isa: str, scenario: str) -> Path:
    return base / machine / build / isa / scenario


def code_dir(
    base: Path, machine: str, build: str, isa: str, scenario: str, control: str, n
) -> Path:
    return scenario_dir(base, machine, build, isa, scenario) / control / f"n{n}"


def inductor_cache(machine: str, build: str, isa: str, config: str = "default") -> Path:
    return cache_root() / machine / build / isa / config


_RUN_CACHES: set[str] = set()
"""Inductor caches emptied (or created empty) by this process, or the one it was forked from,
for the run it is part of: everything in them was compiled by this run."""


def fresh_inductor_cache(folder: Path) -> Path:
    """Empty `folder` and make it Inductor's cache for this process (before any compile)."""
    shutil.rmtree(folder, ignore_errors=True)
    _RUN_CACHES.add(str(folder))
    return use_inductor_cache(folder)


def in_this_runs_cache() -> bool:
    """Whether Inductor's cache is one this run emptied (`fresh_inductor_cache`, or a probe's
    temporary one)."""
    return os.environ.get("TORCHINDUCTOR_CACHE_DIR") in _RUN_CACHES


def use_inductor_cache(folder: Path) -> Path:
    """Make `folder` Inductor's on-disk cache for this process (and the children it starts)."""
    folder.mkdir(parents=True, exist_ok=True)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(folder)
    return folder


@contextlib.contextmanager
def inductor_cache_within(folder: Path, *, fresh: bool = False):
    """Inductor's cache is `folder` inside the block (emptied first when `fresh`), whatever it
    was before afterwards."""
    previous = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    (fresh_inductor_cache if fresh else use_inductor_cache)(folder)
    try:
        yield folder
    finally:
        if previous is None:
            os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
        else:
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = previous


def save_record(path: Path, record: dict) -> dict:
    """Save a probe record, keeping the rows of an earlier record at `path` that this one did
    not measure (matched by control, backend and size). Returns what was saved."""
    merged = dict(record)
    if path.is_file():
        try:
            earlier = json.loads(path.read_text())
        except json.JSONDecodeError:
            earlier = {"rows": []}
        measured = {tuple(row[k] for k in ROW_KEY) for row in record["rows"]}
        kept = [r for r in earlier.get("rows", []) if tuple(r[k] for k in ROW_KEY) not in measured]
        merged["rows"] = kept + list(record["rows"])
    save_json(path, merged)
    return merged


def save_json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    tmp.replace(path)
