"""The main job (`make history`): measure every build of the builds file not yet measured on
this machine, publish the site, print the report.

    python tools/history.py [--builds builds.txt] [--machine NAME] [--only NAME ...]

Steps, each printed as it starts:
  1. build the ledger (.asv/ledger) from the builds file (tools/ledger.py);
  2. register this machine with asv (`asv machine --yes`) when it is not yet known;
  3. one `asv run HASHFILE:... --skip-existing` over every build, oldest first: it runs only
     the benchmarks this machine has no result for (all of them for a new build, a new
     scenario's on old builds, none otherwise), installing a build (tools/install_build.py)
     only when something is to run; a build that fails to install gets one line saying why,
     and the next build goes on;
  4. `asv publish` into html/, then serve its scripts from html/vendor/ (offline_site.py),
     and look at it in headless Chromium without network when Chromium is installed;
  5. the report (tools/report.py), also written to results/report.md.

Interrupted, it resumes where it stopped: asv writes a build's results once its run is
complete, so the next call skips what was saved and runs the rest.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import builds as builds_file  # noqa: E402
import ledger as ledger_repo  # noqa: E402
import offline_site  # noqa: E402
import report  # noqa: E402
import site_browser  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"


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

    _step(f"1. ledger: {len(builds)} builds from {args.builds.name}")
    entries = ledger_repo.build_ledger(builds, ledger_repo.DEFAULT_LEDGER)
    machine = args.machine or os.environ.get("WRITEBACK_MACHINE") or platform.node()
    _step(f"2. asv machine {machine!r}")
    _ensure_machine(machine)

    todo = [e for e in entries if not args.only or e.name in args.only]
    _step(f"3. run: {len(todo)} build(s) on {machine}; asv skips what each already has")
    for index, entry in enumerate(todo, start=1):
        kept = "has results: only missing benchmarks run" if _has_results(machine, entry.commit) \
            else "new"  # fmt: skip
        print(f"   {index}/{len(todo)} {entry.name} ({entry.build['date']}, pip install "
              f"{' '.join(entry.build['pip_args'])}): {kept}")  # fmt: skip
    # One asv call for every build: one discovery, and a build is installed only when some
    # benchmark lacks a result for it. asv prints each build ("For writeback commit ...") and
    # each benchmark as it goes.
    hashes = ROOT / ".asv" / "history-commits.txt"
    hashes.write_text("".join(f"{entry.commit}\n" for entry in todo))
    started = time.monotonic()
    code = _asv("run", f"HASHFILE:{hashes}", "--machine", machine, "--record-samples",
                "--skip-existing", check=False)  # fmt: skip
    print(f"   asv run finished in {(time.monotonic() - started) / 60:.1f} min", flush=True)
    failed = []
    for entry in todo:
        status = _install_status(entry.commit)
        if status.get("installed") is False:
            failed.append(entry.name)
            print(
                f"writeback: build {entry.name} did not install: {status.get('error')} "
                "- its benchmarks are recorded as failed; the other builds went on."
            )
    if code not in (0, 2):  # asv exits 2 when some benchmark failed: results are saved
        failed.append("asv run")
        print(f"writeback: asv run exited {code}; see its output above.")

    _step("4. publish html/ (asv publish), self-contained (tools/offline_site.py)")
    _asv("publish", check=True)
    if offline_site.main(["--html", str(ROOT / "html")]) != 0:
        failed.append("html/ (see above)")
    if shutil.which("chromium"):
        _step("4b. check the site as a person sees it (headless Chromium, no network)")
        if site_browser.main(["--html", str(ROOT / "html")]) != 0:
            failed.append("html/ (see above)")
    else:
        print("   (install Debian's chromium to have the site checked in a browser here)")
    _step("5. report")
    text = report.render(report.load(RESULTS, ledger_repo.DEFAULT_LEDGER))
    (RESULTS / "report.md").write_text(text)
    print(text)
    print("The report is also in results/report.md. Browse the history with:\n"
          "  .venv/bin/asv preview     (serves html/ at http://127.0.0.1:8080)")  # fmt: skip
    if failed:
        print(f"writeback: {len(failed)} build(s) had problems: {', '.join(failed)}")
        return 1
    return 0


def _step(text: str) -> None:
    print(f"\n[writeback] {text}", flush=True)


def _asv(*args: str, check: bool) -> int:
    command = [sys.executable, "-m", "asv", *args]
    result = subprocess.run(command, cwd=ROOT)
    if check and result.returncode != 0:
        raise SystemExit(f"writeback: `asv {' '.join(args)}` failed (exit {result.returncode})")
    return result.returncode


def _ensure_machine(machine: str) -> None:
    machine_file = Path(os.environ.get("ASV_MACHINE_FILE", Path.home() / ".asv-machine.json"))
    known = json.loads(machine_file.read_text()) if machine_file.is_file() else {}
    if machine not in known:
        _asv("machine", "--yes", "--machine", machine, check=True)


def _has_results(machine: str, commit: str) -> bool:
    return any((RESULTS / machine).glob(f"{commit[:8]}-*.json"))


def _install_status(commit: str) -> dict:
    path = RESULTS / "builds" / f"{commit}.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def _parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--builds", type=Path, default=ROOT / "builds.txt",
                        help="the builds file (default builds.txt)")  # fmt: skip
    parser.add_argument("--machine", help="asv machine name (default: this host's name)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="measure only these builds")
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(main())
