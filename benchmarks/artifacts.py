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
replaces the rows it measured and keeps the others, each row saying when it was measured,
as long as both runs measured with the same benchmark versions (`benchmark_versions`, what
asv records for each benchmark reading the record); the rows of a record of other versions
are dropped, as asv leaves out results of another benchmark version. A record that cannot be
read is never written over: saving stops with an error naming it and the fix. Paths in a
saved record (`code_dir`, `package`) are relative to the record's own folder, so a record
says nothing of the checkout that wrote it (the records in memory, which the running probe
uses, hold them as paths here).

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
import sys
from pathlib import Path

ROW_KEY = ("control", "backend", "n")
PATH_FIELDS = ("code_dir", "package")
"""Row fields naming a file or folder kept beside the record."""
VERSIONS = "benchmark_versions"
"""The record's field naming the version of each benchmark that reads it (asv's)."""


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
    with environment_variable("TORCHINDUCTOR_CACHE_DIR", str(folder)):
        (fresh_inductor_cache if fresh else use_inductor_cache)(folder)
        yield folder


@contextlib.contextmanager
def environment_variable(name: str, value: str):
    """`os.environ[name]` is `value` inside the block (for this process and the children it
    starts), what it was before afterwards: restored, or removed if it was not set."""
    previous = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = previous


class UnreadableRecord(ValueError):
    """A record file that is not a record; the message names it and the fix."""


def read_record(path: Path) -> dict:
    """The record saved at `path`, as it lies (paths relative to its folder); raises
    `UnreadableRecord` for a file that is not a record with rows."""
    try:
        record = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        problem = f"cannot be read ({exc})"
    else:
        if isinstance(record, dict) and isinstance(record.get("rows"), list):
            return record
        problem = "is not a probe record (no list of rows)"
    raise UnreadableRecord(
        f"{path} {problem}; it was left as it is. Restore it (`git checkout -- {path}` if it "
        "is committed) or move it away, then run again: a run writes it anew, with only the "
        "rows it measures."
    )


def portable(record: dict, folder: Path) -> dict:
    """`record` with each row's kept paths (`PATH_FIELDS`) relative to `folder`, the folder
    the record is saved in."""
    rows = [
        {**row, **{key: _relative(row[key], folder) for key in PATH_FIELDS if row.get(key)}}
        for row in record["rows"]
    ]
    return {**record, "rows": rows}


def _relative(value: str, folder: Path) -> str:
    """`value` relative to `folder`. An absolute path from another checkout (records written
    before their paths were relative) is taken from after its `<isa>/<scenario>` folders,
    which are the last two of `folder`'s."""
    path = Path(value)
    if not path.is_absolute():
        return value
    if path.is_relative_to(folder):
        return path.relative_to(folder).as_posix()
    parts, tail = path.parts, folder.parts[-2:]
    for index in range(len(parts) - 2, -1, -1):
        if parts[index : index + 2] == tail:
            return Path(*parts[index + 2 :]).as_posix()
    return value


def save_record(path: Path, record: dict) -> dict:
    """Save a probe record, keeping the rows of an earlier record at `path` that this one did
    not measure (matched by control, backend and size) when both were measured with the same
    benchmark versions (`"benchmark_versions"`); an earlier record of other versions is
    replaced whole. Raises `UnreadableRecord`, writing nothing, when the earlier record cannot
    be read. Returns what was saved."""
    folder = path.parent
    saved = portable(record, folder)
    if path.exists():
        earlier = portable(read_record(path), folder)
        if earlier.get(VERSIONS) == record.get(VERSIONS):
            measured = {_row_key(row) for row in record["rows"]}
            kept = [row for row in earlier["rows"] if _row_key(row) not in measured]
            saved["rows"] = kept + saved["rows"]
        elif earlier["rows"]:
            print(f"[writeback] {path}: {len(earlier['rows'])} row(s) measured with other "
                  "benchmark versions dropped", file=sys.stderr)  # fmt: skip
    save_json(path, saved)
    return saved


def _row_key(row: dict) -> tuple:
    return tuple(row.get(key) for key in ROW_KEY)


def save_json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    tmp.replace(path)
