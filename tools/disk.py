"""The disk a run of the history uses beyond the committed checkout: measured while it runs,
recorded with its results, and bounded where it would grow build by build.

What a run writes (`make history` samples each part, tools/history.py):
- asv environments: `.asv/env`, one environment that every build is installed into in turn;
  tools/install_build.py removes what the build before left there that nothing needs;
- pip's cache: the folder `pip cache dir` names, the project's own `.asv/pip-cache`
  (`PIP_CACHE`; every pip of the run uses it), emptied before each install of its least
  recently written entries until it holds at most `PIP_CACHE_BOUND` (`prune_pip_cache`):
  the last install's downloads stay, a patch build reinstalling its base's wheel finds it;
- Inductor caches: benchmarks/artifacts.py's cache root, one folder per (machine, build);
  tools/install_build.py removes the other builds' caches of its machine when it installs a
  build (a build's run empties its own caches before it compiles, so none is read again);
- kept code: `results/generated/<machine>/<build>/` of each build the run measures;
- temporary files: the run's own temporary folder (`run_temporary_folder`: every process
  the run starts has it as `TMPDIR`), holding pip's downloads and unpacked wheels and the
  probes' temporary caches and packages; other jobs' files in the system's temporary folder
  are not the run's and are not counted (until stop 27 they were: whatever appeared there).
  It is removed when the run ends, with anything a killed process left in it.

`Sampler` measures them every `INTERVAL` seconds in a thread of its own, niced to 19 so that
it takes no time from the builds measured beside it, and keeps the largest total with what
made it up, and each part's own largest figure. The disk moves fast only while pip installs:
pip unpacks a wheel into the environment beside the files of the version it replaces (kept
until the new ones are in place), and keeps what it downloaded in the temporary folder until
it ends. Those states last seconds: installing torch 2.15.0 (CUDA) over 2.13.0 from local
disk, the environment stood up to 0.7 GB above its end for about 5 s (a 6.5 GB peak;
results/logs/disk-sampling-install.log). Sampled every 2 s at the worst phase, that peak
reads 0.07 GB low; every 5 s, 0.4 GB low. A sample takes the time of a walk over the folders
(0.25 s for the 29,000 files of a CUDA build's environment unloaded, about 1 s niced beside a
running history), so a file pip moves during a walk can be counted twice or missed.
A figure is the space the files take on the disk (`st_blocks`), each file once however many
links it has, as `du` counts.

The run's record, `results/runs/<machine>/<start>-<digest>.json` (`save_run`), holds when it
started, the builds it measured, its minutes and its peak, and is written when it measured
something; the report's time table shows, for each build, the peak of the latest run that
measured it (`latest_runs`), and a merge of shards keeps each shard's record (their names
differ by the builds they measured). Standard library only: tools/install_build.py imports it
in the benchmark environment.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import artifacts  # standard library only

ROOT = Path(__file__).resolve().parents[1]
GB = 10**9
RUN_BOUND = 20 * GB
"""The most a run may use beyond the checkout (issue 29: 26 releases on this machine)."""
PIP_CACHE = ROOT / ".asv" / "pip-cache"
"""pip's cache for every pip a run starts: the project's own, so that pruning it never touches
a cache of the user's."""
PIP_CACHE_BOUND = 3 * GB
"""What pip's cache keeps before an install: more than one CUDA build's downloads (torch
2.15.0's wheel and its CUDA and triton wheels are 2.8 GB), so the last install's stay."""
INTERVAL = 2.0
"""Seconds between two samples (see the module)."""
RUNS = "runs"
"""The folder of run records under a results folder."""
PARTS = ("asv environments", "pip's cache", "Inductor caches", "kept code", "temporary files")


def usage(paths: list[Path]) -> int:
    """Bytes the files under `paths` take on the disk, each file once (0 for what is gone)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    todo = [str(path) for path in paths]
    for path in todo:
        try:
            stat = os.lstat(path)
        except OSError:
            continue
        total += _once(stat, seen)
        if os.path.isdir(path) and not os.path.islink(path):
            total += _tree(path, seen)
    return total


def _tree(folder: str, seen: set[tuple[int, int]]) -> int:
    """What `usage` counts below `folder` (a walk with os.scandir: one stat an entry)."""
    total, todo = 0, [folder]
    while todo:
        try:
            entries = list(os.scandir(todo.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                total += _once(entry.stat(follow_symlinks=False), seen)
                if entry.is_dir(follow_symlinks=False):
                    todo.append(entry.path)
            except OSError:
                continue
    return total


def _once(stat: os.stat_result, seen: set[tuple[int, int]]) -> int:
    """The blocks of a file not counted yet (a file with several links counts once)."""
    if (stat.st_dev, stat.st_ino) in seen:
        return 0
    seen.add((stat.st_dev, stat.st_ino))
    return stat.st_blocks * 512


@dataclass
class Peak:
    """The largest total the samples saw, what made it up, and each part's own largest."""

    total: int = 0
    parts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    """When it was first seen, in seconds since sampling started."""
    part_peaks: dict[str, int] = field(default_factory=dict)
    samples: int = 0

    def add(self, parts: dict[str, int], seconds: float) -> None:
        self.samples += 1
        for name, size in parts.items():
            self.part_peaks[name] = max(self.part_peaks.get(name, 0), size)
        if self.samples == 1 or sum(parts.values()) > self.total:
            self.total, self.parts, self.seconds = sum(parts.values()), dict(parts), seconds

    def as_json(self) -> dict:
        return {"bytes": self.total, "parts": self.parts, "at_minutes": round(self.seconds / 60, 1),
                "part_peaks": self.part_peaks, "samples": self.samples}  # fmt: skip


class Sampler:
    """Samples `parts()` (part name -> the paths it holds, asked again at each sample) every
    `interval` seconds in a thread while the block runs, and once when it starts and ends;
    `peak` is what the samples saw at most."""

    def __init__(self, parts: Callable[[], dict[str, list[Path]]], interval: float = INTERVAL):
        self.parts, self.interval = parts, interval
        self.peak = Peak()
        self.error: str | None = None
        """Why sampling stopped before the block ended (None: it did not)."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="disk-sampler", daemon=True)
        self._started = 0.0

    def __enter__(self) -> Sampler:
        self._started = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        if self.error is None:
            self._sample()

    def _run(self) -> None:
        with contextlib.suppress(AttributeError, OSError):  # this thread alone (Linux): the
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)  # builds keep theirs
        while True:
            try:
                self._sample()
            except OSError as exc:
                self.error = f"sampling the disk stopped: {exc}"
                return
            if self._stop.wait(self.interval):
                return

    def _sample(self) -> None:
        sizes = {name: usage(paths) for name, paths in self.parts().items()}
        self.peak.add(sizes, time.monotonic() - self._started)


@contextlib.contextmanager
def run_temporary_folder(prefix: str = "writeback-run-"):
    """A new folder in the system's temporary folder that is `TMPDIR` for every process started
    inside the block (this process's own `tempfile` keeps the folder it chose), removed with
    all it holds when the block ends, however it ends; `TMPDIR` is restored."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        with artifacts.environment_variable("TMPDIR", str(folder)):
            yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


PIP_ENV = {"PIP_CACHE_DIR": str(PIP_CACHE)}
"""What every pip of a run has in its environment: pip's cache in `PIP_CACHE`."""


def pip_cache_dir(python: str = sys.executable) -> Path | None:
    """The cache folder pip reports (`pip cache dir`) with the run's environment; None when
    pip's cache is off (`PIP_NO_CACHE_DIR`)."""
    result = subprocess.run([python, "-m", "pip", "cache", "dir"], capture_output=True,
                            text=True, env={**os.environ, **PIP_ENV})  # fmt: skip
    return Path(result.stdout.strip()) if result.returncode == 0 and result.stdout.strip() else None


def prune_pip_cache(folder: Path, bound: int = PIP_CACHE_BOUND) -> tuple[int, int]:
    """Remove pip's cache entries in `folder`, least recently written first, until the rest
    takes at most `bound` bytes: (bytes removed, bytes kept). An entry is a file with its
    `.body` (pip's HTTP cache keeps a response's headers and body side by side), removed
    together, so pip never finds one without the other."""
    entries: dict[Path, list[tuple[Path, os.stat_result]]] = {}
    for path in folder.rglob("*") if folder.is_dir() else ():
        if path.is_file() and not path.is_symlink():
            key = path.with_suffix("") if path.suffix == ".body" else path
            entries.setdefault(key, []).append((path, path.stat()))
    sizes = {key: sum(s.st_blocks * 512 for _, s in files) for key, files in entries.items()}
    kept = sum(sizes.values())
    removed = 0
    oldest_first = sorted(entries, key=lambda key: max(s.st_mtime for _, s in entries[key]))
    for key in oldest_first:
        if kept <= bound:
            break
        for path, _ in entries[key]:
            path.unlink(missing_ok=True)
        kept, removed = kept - sizes[key], removed + sizes[key]
    return removed, kept


def gb(size: int | None) -> str:
    return "not recorded" if size is None else f"{size / GB:.1f} GB"


def describe(peak: dict) -> str:
    """A recorded peak (`Peak.as_json`) in one line: the total, when, and what made it up."""
    parts = _sizes(peak["parts"])
    over = "over" if peak["bytes"] > RUN_BOUND else "within"
    return (f"{gb(peak['bytes'])} at its peak, {peak['at_minutes']} min in ({parts}); "
            f"{over} the {gb(RUN_BOUND)} bound")  # fmt: skip


def _sizes(parts: dict[str, int]) -> str:
    """Each part's size, in the order of `PARTS` (a record holds them sorted by name)."""
    order = sorted(parts, key=lambda name: PARTS.index(name) if name in PARTS else len(PARTS))
    return ", ".join(f"{name} {gb(parts[name])}" for name in order)


def run_line(run: dict) -> str:
    """A run's record in one line: when, what it measured, its minutes and its peak disk."""
    shard = f", shard {run['shard']}" if run.get("shard") else ""
    tags = [build["tag"] for build in run["builds"]]
    named = ", ".join(tags[:3]) + (f" and {len(tags) - 3} more" if len(tags) > 3 else "")
    peak = run["peak_disk"]
    each = _sizes(peak["part_peaks"])
    return (f"- the run of {run['started']} ({run['builds_file']}{shard}: {named}; "
            f"{run['minutes']} min): {describe(peak)}. Each part at its own peak: {each} "
            f"({peak['samples']} samples, {run['interval_seconds']:g} s apart)")  # fmt: skip


def save_run(results_dir: Path, machine: str, record: dict) -> Path:
    """Write a run's record under `results_dir/runs/<machine>/`, named by its start and a
    digest of the ledger commits it measured (two shards started at once differ)."""
    commits = "".join(sorted(build["commit"] for build in record["builds"]))
    digest = hashlib.sha256(commits.encode()).hexdigest()[:8]
    stamp = record["started"].replace(":", "").replace("-", "")
    path = results_dir / RUNS / machine / f"{stamp}-{digest}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return path


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def latest_runs(results_dir: Path, machine: str) -> dict[str, dict]:
    """For each ledger commit, the record of the latest run on `machine` that measured it."""
    found: dict[str, dict] = {}
    for path in sorted((results_dir / RUNS / machine).glob("*.json")):
        try:
            record = json.loads(path.read_text())
            builds = [build["commit"] for build in record["builds"]]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"writeback: {path} is not a run record ({exc}); left out of the report's "
                  "time table. Restore it (`git checkout -- FILE`) or remove it.",
                  file=sys.stderr)  # fmt: skip
            continue
        for commit in builds:
            found[commit] = record
    return found
