"""The disk a run uses beyond the checkout (tools/disk.py): sampled while the run goes, its
peak the largest total any sample saw (not the last), recorded with the run and shown in the
report's time table; pip's cache kept within its bound; and what the builds before a build
left in the one environment (distributions nothing needs, other builds' Inductor caches)
found for removal (tools/install_build.py)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tools import builds, disk, install_build, ledger, report, results

ROOT = Path(__file__).resolve().parents[1]
RECORDED = ROOT / "tests" / "fixtures" / "history" / "results"
MB = 10**6


def _write(path: Path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(os.urandom(size))


def test_the_peak_is_the_largest_total_sampled_not_the_last(tmp_path):
    """A tree that grows and shrinks while it is sampled: the peak is the state with the
    largest total, with what each part held then, and each part's own largest figure."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    sampler = disk.Sampler(lambda: {"a": [a], "b": [b]}, interval=0.02)
    with sampler:
        _write(a / "big", 3 * MB)
        largest = {"a": disk.usage([a]), "b": disk.usage([b])}
        time.sleep(1.0)
        (a / "big").unlink()
        _write(a / "small", MB)
        _write(b / "grown", 3 * MB // 2)  # b's own peak, in a smaller total
        b_largest = disk.usage([b])
        time.sleep(1.0)
        (a / "small").unlink()
        (b / "grown").unlink()
        _write(b / "left", MB // 2)
        last = disk.usage([a, b])
    peak = sampler.peak
    assert peak.total == sum(largest.values()) > last
    assert peak.parts == largest
    assert peak.part_peaks == {"a": largest["a"], "b": b_largest}
    assert peak.samples >= 10 and sampler.error is None
    assert peak.seconds < 1.0  # when the largest total was first seen


def test_usage_counts_what_the_files_take_on_the_disk_each_file_once(tmp_path):
    _write(tmp_path / "tree" / "file", MB)
    os.link(tmp_path / "tree" / "file", tmp_path / "tree" / "link")
    alone = disk.usage([tmp_path / "tree" / "file"])
    assert alone >= MB
    assert disk.usage([tmp_path / "tree"]) == alone + (tmp_path / "tree").stat().st_blocks * 512
    assert disk.usage([tmp_path / "gone"]) == 0


def test_the_run_has_a_temporary_folder_of_its_own_removed_at_its_end(tmp_path, monkeypatch):
    """Every process the run starts gets the run's own folder as TMPDIR, so the disk figure's
    temporary files are the run's and not other jobs' (what appeared anywhere in /tmp was
    counted until stop 27); it goes with what a process left in it, and TMPDIR is restored,
    also when the run is interrupted."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # as the process chose it at start
    with disk.run_temporary_folder() as folder:
        assert folder.parent == tmp_path and os.environ["TMPDIR"] == str(folder)
        made = "import tempfile; print(tempfile.mkdtemp())"
        child = subprocess.run([sys.executable, "-c", made], capture_output=True, text=True,
                               check=True).stdout.strip()  # fmt: skip
        assert Path(child).parent == folder
        _write(Path(child) / "left-by-a-killed-pip", MB)
        assert disk.usage([folder]) >= MB
    assert not folder.exists() and os.environ["TMPDIR"] == str(tmp_path)
    monkeypatch.delenv("TMPDIR")
    with pytest.raises(KeyboardInterrupt), disk.run_temporary_folder() as folder:
        raise KeyboardInterrupt
    assert not folder.exists() and "TMPDIR" not in os.environ


def _cache_entry(folder: Path, key: str, size: int, written: float, body_written: float) -> None:
    """One entry of pip's HTTP cache: its headers file and its `.body`, written at those times
    (seconds since the epoch)."""
    _write(folder / key, 1000)
    _write(folder / f"{key}.body", size)
    os.utime(folder / key, (written, written))
    os.utime(folder / f"{key}.body", (body_written, body_written))


def test_pips_cache_is_pruned_to_its_bound_least_recently_written_first(tmp_path):
    cache = tmp_path / "pip-cache"
    http = cache / "http-v2" / "a" / "b"
    _cache_entry(http, "oldest", 3 * MB, written=1000, body_written=1000)
    # a body written long ago with headers written since: the entry was written since
    _cache_entry(http, "refreshed", 2 * MB, written=3000, body_written=1000)
    _cache_entry(http, "older", 2 * MB, written=2000, body_written=2000)
    _write(cache / "wheels" / "x" / "built-1.0-py3-none-any.whl", MB)
    os.utime(cache / "wheels" / "x" / "built-1.0-py3-none-any.whl", (4000, 4000))
    total = sum(disk.usage([path]) for path in cache.rglob("*") if path.is_file())
    oldest = disk.usage([http / "oldest", http / "oldest.body"])
    older = disk.usage([http / "older", http / "older.body"])

    removed, kept = disk.prune_pip_cache(cache, bound=total - oldest - 1)
    assert (removed, kept) == (oldest + older, total - oldest - older)
    left = sorted(p.relative_to(cache).as_posix() for p in cache.rglob("*") if p.is_file())
    assert left == ["http-v2/a/b/refreshed", "http-v2/a/b/refreshed.body",
                    "wheels/x/built-1.0-py3-none-any.whl"]  # fmt: skip
    assert disk.prune_pip_cache(cache, bound=kept) == (0, kept)
    assert disk.prune_pip_cache(cache, bound=0) == (kept, 0)
    assert disk.prune_pip_cache(tmp_path / "no-cache") == (0, 0)


def _dist(site: Path, name: str, requires: tuple[str, ...] = (), requested=False) -> None:
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    lines = [f"Name: {name}", "Version: 1.0", *(f"Requires-Dist: {r}" for r in requires)]
    (info / "METADATA").write_text("Metadata-Version: 2.1\n" + "\n".join(lines) + "\n")
    if requested:
        (info / "REQUESTED").write_text("")


def test_what_the_builds_before_left_and_nothing_needs_is_unneeded(tmp_path):
    """torch 2.15.0 (CUDA 13) installed where torch 2.1.0 (CUDA 12) was: the CUDA 12 libraries
    are left over; what torch, its clients, asv's packages and the environment's seeds name,
    through extras and markers however deep, stays."""
    site = tmp_path / "site-packages"
    _dist(site, "torch", ('filelock', 'typing-extensions>=4.10.0',
                          'cuda-toolkit[cublas]==13.0.3; platform_system == "Linux"',
                          'triton~=3.8.0; platform_system == "Linux"',
                          'optree>=0.13.0; extra == "optree"'), requested=True)  # fmt: skip
    _dist(site, "cuda-toolkit", ("nvidia-cublas==13.1.*; extra == 'cublas'",))
    for name in ("nvidia-cublas", "filelock", "typing_extensions", "triton", "optree"):
        _dist(site, name)
    _dist(site, "nvidia-cudnn-cu12", ("nvidia-cublas-cu12",))
    _dist(site, "nvidia-cublas-cu12")
    _dist(site, "Pympler", requested=True)
    _dist(site, "tensordict", ("numpy",), requested=True)
    _dist(site, "numpy")
    for seed in install_build.SEEDS:
        _dist(site, seed)
    assert install_build.unneeded([str(site)]) == ["nvidia-cublas-cu12", "nvidia-cudnn-cu12"]


def test_the_inductor_caches_of_other_builds_are_found_for_removal(tmp_path):
    machine = tmp_path / "inductor-cache" / "m"
    for build in ("torch-2.1.0-7bcf7da3", "torch-2.2.0-8ac9b20d", "torch-2.3.0-97ff6cfd"):
        (machine / build / "avx512" / "default").mkdir(parents=True)
    assert install_build.other_builds_caches(machine, "torch-2.2.0-8ac9b20d") == [
        machine / "torch-2.1.0-7bcf7da3",
        machine / "torch-2.3.0-97ff6cfd",
    ]
    assert install_build.other_builds_caches(tmp_path / "none", "torch-2.2.0-8ac9b20d") == []


def _run(started: str, commits: list[str], peak: int, shard: str | None = None) -> dict:
    parts = dict(zip(disk.PARTS, (peak - 3 * 10**9, 2 * 10**9, 10**8, 9 * 10**8, 0)))
    return {
        "started": started,
        "builds_file": "builds.txt",
        "shard": shard,
        "builds": [{"tag": f"torch-{c[:4]}", "commit": c} for c in commits],
        "minutes": 12.5,
        "peak_disk": {"bytes": peak, "parts": parts, "at_minutes": 3.5,
                      "part_peaks": {**parts, "temporary files": 2 * 10**9}, "samples": 150},
        "interval_seconds": 5.0,
        "sampling_error": None,
    }  # fmt: skip


def test_the_time_table_shows_each_builds_run_and_its_peak_disk(tmp_path):
    results_dir = tmp_path / "results"
    shutil.copytree(RECORDED, results_dir)
    ledger_path = tmp_path / "ledger"
    entries = ledger.build_ledger(builds.read(ROOT / "builds.txt"), ledger_path)
    commits = {entry.name: entry.commit for entry in entries}
    # an earlier run measured 2.13.0 and 2.14.1, a later one 2.14.1 again
    disk.save_run(results_dir, "vm", _run("2026-12-01T10:00:00Z",
                  [commits["torch-2.13.0"], commits["torch-2.14.1"]], 14_230_000_000))  # fmt: skip
    disk.save_run(results_dir, "vm", _run("2026-12-02T10:00:00Z", [commits["torch-2.14.1"]],
                                          9_870_000_000))  # fmt: skip

    text = report.render(results.load(results_dir, ledger_path))
    section = text.split("## Where the time went", 1)[1].split("\n## ", 1)[0]
    rows = {row.split(" |")[0]: row for row in section.splitlines() if row.startswith("| torch-")}
    assert rows["| torch-2.13.0 on vm"].endswith("| 14.2 GB, run of 2026-12-01T10:00:00Z |")
    assert rows["| torch-2.14.1 on vm"].endswith("| 9.9 GB, run of 2026-12-02T10:00:00Z |")
    assert rows["| torch-2.15.0 on vm"].endswith("| - |")
    assert (
        "- the run of 2026-12-01T10:00:00Z (builds.txt: torch-" in section
        and "12.5 min): 14.2 GB at its peak, 3.5 min in (asv environments 11.2 GB, pip's "
        "cache 2.0 GB, Inductor caches 0.1 GB, kept code 0.9 GB, temporary files 0.0 GB); "
        "within the 20.0 GB bound. Each part at its own peak: "
        in section
    )
    assert "temporary files 2.0 GB (150 samples, 5 s apart)" in section
    assert section.count("- the run of ") == 2


def test_two_shards_started_at_once_keep_a_record_each_and_a_bad_one_is_named(tmp_path, capsys):
    one = disk.save_run(tmp_path, "m", _run("2026-12-01T10:00:00Z", ["a" * 40], 10**10, "1/2"))
    two = disk.save_run(tmp_path, "m", _run("2026-12-01T10:00:00Z", ["b" * 40], 10**10, "2/2"))
    assert one != two
    assert json.loads(one.read_text())["shard"] == "1/2"
    (tmp_path / disk.RUNS / "m" / "20261130T000000Z-broken.json").write_text("{")
    latest = disk.latest_runs(tmp_path, "m")
    assert {commit: run["shard"] for commit, run in latest.items()} == {
        "a" * 40: "1/2",
        "b" * 40: "2/2",
    }
    assert "20261130T000000Z-broken.json is not a run record" in capsys.readouterr().err


def test_the_folders_asvs_configuration_names_resolve_against_its_folder(tmp_path):
    """The disk sampler's environments, the results and the benchmark folder come from one
    reading of asv.conf.json (`asv_project.configured`), with asv's defaults."""
    from tools import asv_project

    config = tmp_path / "asv.conf.json"
    config.write_text('{"env_dir": "cache/env", "results_dir": "out"}')
    assert asv_project.configured("env_dir", config) == tmp_path / "cache" / "env"
    assert asv_project.configured("results_dir", config) == tmp_path / "out"
    assert asv_project.configured("benchmark_dir", config) == tmp_path / "benchmarks"
    assert asv_project.results_dir(["run", "--config", str(config)]) == tmp_path / "out"
    assert asv_project.configured("env_dir") == asv_project.ROOT / ".asv" / "env"
