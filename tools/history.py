"""The main job (`make history`): measure every build of the builds file not yet measured on
this machine, publish the site, write the report and print its summary.

    python -m tools.history [--builds builds.txt] [--machine NAME] [--only NAME ...] [--quick]
                            [--shard k/K] [--bench REGEX]

Steps, each printed as it starts:
  1. the ledger (.asv/ledger): the builds file's branch, and builds.txt's (tools/ledger.py);
  2. this machine: named after its CPU and ISA, registered in .asv/asv-machine.json, and
     checked against the hardware recorded with any results already filed under its name
     (tools/asv_project.py);
  3. one `asv run HASHFILE:... --skip-existing-successful` over every build, oldest first: it
     runs only what this machine has no successful result for (all of it for a new build, a
     new scenario's benchmarks on old builds, failures again), installing a build
     (tools/install_build.py) only when something is to run; the benchmark list is
     discovered again only when something it depends on changed (`--reuse-discovery`);
  4. `asv publish` into html/, the verdict page html/writeback/index.html (verdict_page.py,
     linked from asv's navigation bar), then serve asv's scripts from html/vendor/
     (offline_site.py), and look at it in headless Chromium without network when Chromium is
     installed;
  5. the report (tools/report.py), written to results/report.md, and its summary printed
     (tools/summary.py: per build what is wrong, what flipped and what failed; where the
     report, the site and the verdict page are, and `.venv/bin/asv preview`); then the disk
     the run used beyond the checkout at its peak, with what made it up (sampled while asv
     ran, tools/disk.py; recorded in results/runs/<machine>/ when the run measured
     something, where the report's time table reads it); then one line
     naming every real failure of the builds it measured, harness failures first (an eager
     reference that broke its own contract), then failed benchmarks and generated corpus
     programs that failed to compile or run other than a known state
     (benchmarks/known_failures.py); exit 1 when there is one (`failed_at_end`).

A shard (`--shard k/K`, a CI matrix job) measures every K-th build of the file from the k-th
(the ledger is still the whole file, so its commit ids are the unsharded run's), skips step 4
and reports its own builds; `tools/merge.py` then merges the shards' results/ folders and
publishes them as one run's.

A quick check (`--quick`, or a knob that narrows what is measured: `WRITEBACK_SIZES`,
`WRITEBACK_VARIANTS`, `WRITEBACK_INSTRUCTIONS=0`, `WRITEBACK_ATTRIBUTION=0`,
`WRITEBACK_CORPORA=none`) never touches the history: it runs into .asv/quick/ (results,
records, report) and leaves results/ and html/ as they were.

Interrupted (Ctrl-C), it stops asv and says what was saved: asv writes a build's results once
its run is complete, so the same command resumes with the builds not yet saved.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks import artifacts  # standard library only
from benchmarks.machine import build_folder  # standard library only
from tools import (
    asv_project,
    disk,
    offline_site,
    report,
    results,
    site_browser,
    summary,
    verdict_page,
)
from tools import builds as builds_file
from tools import ledger as ledger_repo

ROOT = Path(__file__).resolve().parents[1]
QUICK = ROOT / ".asv" / "quick"
KNOBS = ("WRITEBACK_SIZES", "WRITEBACK_VARIANTS", "WRITEBACK_INSTRUCTIONS", "WRITEBACK_ATTRIBUTION")


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    try:
        builds = builds_file.read(args.builds)
    except builds_file.BuildsFileError as exc:
        print(f"writeback: {exc}", file=sys.stderr)
        return 2
    if args.only:
        unknown = sorted(set(args.only) - {b.name for b in builds})
        if unknown:
            names = ", ".join(b.name for b in builds)
            print(f"writeback: no build named {', '.join(unknown)} in {args.builds} "
                  f"(it has: {names})", file=sys.stderr)  # fmt: skip
            return 2
    try:
        shard = builds_file.parse_shard(args.shard) if args.shard else None
    except builds_file.BuildsFileError as exc:
        print(f"writeback: {exc}", file=sys.stderr)
        return 2
    if args.bench:
        try:
            re.compile(args.bench)
        except re.error as exc:
            print(f"writeback: --bench {args.bench!r} is not a regular expression: {exc}",
                  file=sys.stderr)  # fmt: skip
            return 2
    quick = args.quick or _narrowing_knobs()
    results_dir = QUICK / "results" if quick else ROOT / "results"

    branch = ledger_repo.branch_for(args.builds)
    _step(f"1. ledger: {len(builds)} builds from {args.builds.name} (branch {branch})")
    ledger = ledger_repo.DEFAULT_LEDGER
    entries = ledger_repo.build_branches([args.builds], ledger)[args.builds.resolve()]

    try:
        machine = asv_project.prepare(args.machine, results_dir)
    except asv_project.WrongMachine as exc:
        print(f"writeback: {exc}", file=sys.stderr)
        return 2
    _step(f"2. asv machine {machine!r} ({asv_project.MACHINE_FILE.relative_to(ROOT)})")
    config = _quick_config(results_dir) if quick else None
    if quick:
        print(f"   a quick check ({_knob_text() or '--quick'}): results, records and report go "
              f"to {QUICK.relative_to(ROOT)}/; the history in results/ is not touched")  # fmt: skip

    sliced = builds_file.shard(entries, *shard) if shard else entries
    todo = [e for e in sliced if not args.only or e.name in args.only]
    part = f" (shard {args.shard} of {args.builds.name})" if shard else ""
    _step(f"3. run: {len(todo)} build(s){part} on {machine}; asv skips what each already has")
    for index, entry in enumerate(todo, start=1):
        already = _has_results(results_dir, machine, entry)
        kept = "has results: only what is missing runs" if already else "new"
        patched = f", then {entry.patch['diff']}" if entry.patch else ""
        print(f"   {index}/{len(todo)} {entry.tag} ({entry.build['date']}, pip install "
              f"{' '.join(entry.build['pip_args'])}{patched}): {kept}")  # fmt: skip
    hashes = ROOT / ".asv" / "history-commits.txt"
    hashes.write_text("".join(f"{entry.commit}\n" for entry in todo))
    run_args = ["run", f"HASHFILE:{hashes}", "--machine", machine, "--record-samples"]
    run_args.append(asv_project.REUSE_DISCOVERY)  # the benchmark list, unless its inputs changed
    if not quick:
        run_args.append("--skip-existing-successful")
    if args.bench:
        run_args += ["--bench", args.bench]
    os.environ.update(disk.PIP_ENV)  # asv's environments and the installs: one bounded cache
    digests = _result_digests(results_dir, machine)
    started, started_at = time.monotonic(), disk.now()
    try:
        with disk.run_temporary_folder() as temporary:
            sampler = disk.Sampler(_disk_parts(results_dir, machine, todo, temporary))
            with sampler:
                code = _asv(*run_args, config=config, interruptible=True)
    except KeyboardInterrupt:
        saved = [e.tag for e in todo if _has_results(results_dir, machine, e)]
        print(f"\nwriteback: interrupted. Saved: results of {len(saved)} of {len(todo)} build(s)"
              f"{' (' + ', '.join(saved) + ')' if saved else ''} in {results_dir}; run the same "
              "command again to resume with the rest.")  # fmt: skip
        return 130
    minutes = (time.monotonic() - started) / 60
    print(f"   asv run finished in {minutes:.1f} min", flush=True)
    measured = [e for e in todo if _has_new_results(results_dir, machine, e, digests)]
    run = {"started": started_at, "builds_file": args.builds.name, "shard": args.shard,
           "builds": [{"tag": e.tag, "commit": e.commit} for e in measured],
           "minutes": round(minutes, 1), "peak_disk": sampler.peak.as_json(),
           "interval_seconds": sampler.interval, "sampling_error": sampler.error}  # fmt: skip
    recorded = disk.save_run(results_dir, machine, run) if measured else None

    problems = []
    if code not in (0, 2):  # asv exits 2 when some benchmark failed: counted below
        problems.append(f"asv run exited {code} (see its output above)")
    if shard:
        _step("4. not published (a shard): `make merge FROM=...` publishes every shard's results")
    everyone = None
    if not quick and not shard:  # the verdict page shows every machine, the report this one
        everyone = results.load(results_dir, ledger)
        problems += publish(args.site_check, results_dir, ledger, everyone)
    published = ROOT / "html" if not quick and not shard else None
    loaded = write_report(results_dir, ledger, machine, everyone, published)
    print(disk_line(run, recorded), flush=True)
    return failed_at_end(problems, loaded, {e.commit for e in todo})


def disk_line(run: dict, recorded: Path | None) -> str:
    """What `make history` prints of the disk its run used beyond the checkout, and where it
    recorded it (None: nowhere, as it measured nothing new)."""
    where = (f"recorded in {recorded.relative_to(ROOT)}" if recorded
             else "not recorded: the run measured nothing new")  # fmt: skip
    stopped = f"; {run['sampling_error']}" if run["sampling_error"] else ""
    peak = disk.describe(run["peak_disk"])
    return f"writeback: disk used beyond the checkout: {peak}{stopped} ({where})"


def failed_at_end(
    problems: list[str], loaded: list[results.BuildResult], measured: set[str]
) -> int:
    """The run's last line and exit status, once everything is saved and published: 1 naming
    `problems` and every failure of the builds `measured` (ledger commits) in `loaded` but the
    known faults of a build (benchmarks/known_failures.py), harness failures first
    (`results.failures`); 0 when there is none."""
    failures = [f for f in results.failures(loaded) if f.commit in measured and not f.known]
    harness = [f.describe() for f in failures if f.harness]
    problems = harness + problems + [f.describe() for f in failures if not f.harness]
    problems += corpus_failures(loaded, measured)
    if problems:
        print(f"writeback: {len(problems)} failure(s): " + "; ".join(problems))
        return 1
    return 0


def corpus_failures(loaded: list[results.BuildResult], measured: set[str]) -> list[str]:
    """One line per corpus program that failed on a build this run measured (commit ids in
    `measured`) and is not a known state (benchmarks/known_failures.py)."""
    failed = results.failed_programs([b for b in loaded if b.commit in measured])
    return [f"{f.describe()} (not a known state)" for f in failed if not f.known]


def publish(site_check: bool, results_dir: Path, ledger: Path, builds=None) -> list[str]:
    """Step 4: `asv publish` into html/ with the verdict page (of `builds`, every machine's
    results as `results.load` gives them; loaded here when None), made self-contained and
    looked at in Chromium (when `site_check`). Returns the problems found, one line each."""
    _step("4. publish html/ (asv publish) with the verdict page, self-contained")
    look = site_check and shutil.which("chromium")
    publishing = _start_asv("publish", config=None, relay=True)
    relay = threading.Thread(target=_relay_publish, args=(publishing, results_dir), daemon=True)
    relay.start()
    try:
        browser = site_browser.Browser() if look else None  # starts while asv publishes
    finally:
        published = publishing.wait()
        relay.join()
    try:
        if published != 0:
            return ["asv publish failed (see above)"]
        page = verdict_page.publish(ROOT / "html", results_dir, ledger, builds)
        print(f"   verdict page: {page.relative_to(ROOT)} (opens from the file system)")
        if site_check and offline_site.main(["--html", str(ROOT / "html")]) != 0:
            return ["html/ is not self-contained (see above)"]
        if look:
            _step("4b. check the site as a person sees it (headless Chromium, no network)")
            started, browser = browser, None  # site_browser.main closes it
            if site_browser.main(["--html", str(ROOT / "html")], started) != 0:
                return ["the published site does not show what it should (see above)"]
        elif site_check:
            print("   (install Debian's chromium to have the site checked in a browser here)")
        return []
    finally:
        if browser is not None:
            browser.close()


def write_report(
    results_dir: Path, ledger: Path, machine: str | None, everyone=None, html: Path | None = None
) -> list[results.BuildResult]:
    """Step 5: the report of `machine` (every machine: None), written to results/report.md,
    and its summary printed (tools/summary.py), naming the site in `html` when this run
    published it; from `everyone` (every machine's, already loaded) when given. Returns what
    it was made from."""
    _step("5. report")
    if everyone is None:
        loaded = results.load(results_dir, ledger, machine)
    else:
        loaded = [b for b in everyone if machine is None or b.machine == machine]
    (results_dir / "report.md").write_text(report.render(loaded))
    print(summary.summary(loaded, results_dir / "report.md", html), end="")
    return loaded


def _narrowing_knobs() -> bool:
    """A knob that leaves out part of what the history measures."""
    return (
        any(os.environ.get(knob, "").strip() for knob in KNOBS[:2])
        or any(os.environ.get(knob, "1") == "0" for knob in KNOBS[2:])
        or os.environ.get("WRITEBACK_CORPORA", "").strip() == "none"
    )


def _knob_text() -> str:
    return " ".join(f"{k}={os.environ[k]}" for k in KNOBS if os.environ.get(k, "").strip())


def _quick_config(results_dir: Path) -> Path:
    """asv's configuration with results, records and html under .asv/quick/ (same ledger and
    environments as the history, so a quick check reuses installed builds)."""
    conf = json.loads((ROOT / "asv.conf.json").read_text())
    conf["install_command"] = [
        c.replace("{conf_dir}/results", str(results_dir)).replace("{conf_dir}", str(ROOT))
        for c in conf["install_command"]
    ]
    for key in ("repo", "benchmark_dir", "env_dir"):
        conf[key] = str(ROOT / conf[key])
    conf.update(results_dir=str(results_dir), html_dir=str(QUICK / "html"))
    QUICK.mkdir(parents=True, exist_ok=True)
    path = QUICK / "asv.conf.json"
    path.write_text(json.dumps(conf, indent=1) + "\n")
    os.environ["WRITEBACK_ARTIFACTS"] = str(results_dir / "generated")
    os.environ["WRITEBACK_CACHE"] = str(QUICK / "inductor-cache")
    return path


def _step(text: str) -> None:
    print(f"\n[writeback] {text}", flush=True)


def _asv(*args: str, config: Path | None, interruptible: bool = False) -> int:
    """asv through tools/asv_project.py. `interruptible`: asv runs in a session of its own, so
    Ctrl-C reaches only this script, which stops asv (and what it runs) without asv's trace."""
    process = _start_asv(*args, config=config, interruptible=interruptible)
    try:
        return process.wait()
    except KeyboardInterrupt:
        if interruptible:
            _stop_tree(process)
        raise


def _start_asv(
    *args: str, config: Path | None, interruptible: bool = False, relay: bool = False
) -> subprocess.Popen:
    """asv through this project; its output to ours, or (`relay`) to a pipe read line by line."""
    command = [sys.executable, "-m", "tools.asv_project"]
    command += (["--config", str(config)] if config else []) + list(args)
    piped = {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT, "text": True} if relay else {}
    return subprocess.Popen(command, cwd=ROOT, start_new_session=interruptible, **piped)


SKIPPED = re.compile(r"Skipping results: could not load (?P<path>\S+machine\.json)\s*$")


def own_folder_skip(line: str, results_dir: Path) -> bool:
    """Whether `line` is asv's warning that a folder of writeback's own in results/
    (`results.OWN_FOLDERS`) has no machine.json: noise, several hundred lines a publish.
    The same warning for any other folder (a machine's folder without its machine.json)
    is not."""
    found = SKIPPED.search(line)
    if not found:
        return False
    path = Path(found["path"])
    path = path if path.is_absolute() else ROOT / path
    try:
        parts = path.resolve().relative_to(results_dir.resolve()).parts
    except ValueError:
        return False
    return len(parts) > 1 and parts[0] in results.OWN_FOLDERS


def _relay_publish(process: subprocess.Popen, results_dir: Path) -> None:
    """asv publish's output, printed as it comes, but for its warnings about writeback's own
    folders (`own_folder_skip`), counted in one line at its end."""
    left_out = 0
    for line in process.stdout:
        if own_folder_skip(line, results_dir):
            left_out += 1
        else:
            print(line, end="", flush=True)
    if left_out:
        print(f"   (asv walked writeback's own folders in {results_dir.name}/ too "
              f"({', '.join(results.OWN_FOLDERS)}) and warned {left_out} times that one has no "
              "machine.json: they hold no asv results; those warnings are left out)",
              flush=True)  # fmt: skip


def _stop_tree(process: subprocess.Popen) -> None:
    """Stop asv and everything it started: its forkserver and the benchmark processes under
    it run in sessions of their own, so a process group would miss them."""
    tree = [process.pid, *_descendants(process.pid)]
    for pid in tree:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=30)
    for pid in tree:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _descendants(pid: int) -> list[int]:
    """Every process below `pid`, read from /proc (Linux)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _disk_parts(
    results_dir: Path, machine: str, todo: list, temporary: Path
) -> Callable[[], dict[str, list[Path]]]:
    """What the run writes beyond the checkout, part by part (tools/disk.py), as paths asked
    again at each sample: asv's environments, pip's cache (as pip names it), the Inductor
    caches, the kept code of the builds it measures, and the run's own temporary folder
    (`temporary`, `disk.run_temporary_folder`)."""
    environments = asv_project.configured("env_dir")
    pip_cache = disk.pip_cache_dir()
    records = results_dir / "builds" / machine

    def parts() -> dict[str, list[Path]]:
        kept = [artifacts.root() / machine / build_folder(identity) for entry in todo
                if (identity := _installed(records / f"{entry.commit}.json"))]  # fmt: skip
        return dict(zip(disk.PARTS, ([environments], [pip_cache] if pip_cache else [],
                                     [artifacts.cache_root()], kept, [temporary])))  # fmt: skip

    return parts


def _installed(record: Path) -> dict | None:
    """The install record at `record` when it names the torch it installed, else None."""
    try:
        identity = json.loads(record.read_text())
    except (OSError, ValueError):
        return None
    return identity if identity.get("torch_version") and identity.get("torch_git_version") else None


def _result_digests(results_dir: Path, machine: str) -> dict[str, bytes]:
    """The sha256 of each asv result file of `machine`, by file name."""
    files = (results_dir / machine).glob("*.json")
    return {p.name: hashlib.sha256(p.read_bytes()).digest() for p in files if p.stem != "machine"}


def _has_new_results(results_dir: Path, machine: str, entry, digests: dict[str, bytes]) -> bool:
    """Whether asv wrote a result file of `entry` since `digests` were taken."""
    return any(digests.get(path.name) != hashlib.sha256(path.read_bytes()).digest()
               for path in (results_dir / machine).glob(f"{entry.commit[:8]}-*.json"))  # fmt: skip


def _has_results(results_dir: Path, machine: str, entry) -> bool:
    return any((results_dir / machine).glob(f"{entry.commit[:8]}-*.json"))


def _parse(argv):
    parser = argparse.ArgumentParser(
        prog="python -m tools.history", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--builds", type=Path, default=ROOT / "builds.txt",
                        help="the builds file (default builds.txt)")  # fmt: skip
    parser.add_argument("--machine", help="asv machine name (default: host, CPU and ISA)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="measure only these builds")
    parser.add_argument("--shard", metavar="k/K", help="measure the k-th of K slices of the builds")
    parser.add_argument("--bench", metavar="REGEX",
                        help="run only the benchmarks whose name matches (asv run --bench), "
                        "e.g. '^(snapshot_swap|aliasing)\\.'; the rest run next time")  # fmt: skip
    parser.add_argument("--quick", action="store_true",
                        help="a quick check into .asv/quick/, the history untouched")  # fmt: skip
    parser.add_argument("--no-site-check", dest="site_check", action="store_false",
                        help="publish html/ as asv does: no vendored scripts, no browser "
                        "check (for tests of other suites)")  # fmt: skip
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(main())
