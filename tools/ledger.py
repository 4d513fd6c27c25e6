"""The build ledger: a git repository whose commits each pin one torch build.

    python tools/ledger.py [--builds builds.txt] [--ledger .asv/ledger]

asv's history axis is the commits of its `repo`. Here that repo is the ledger: commit k holds
`build.json` (the k-th build of the builds file: name, date, pip arguments), is dated with
the build's date and tagged with its name. asv checks each commit out and installs its
build with `tools/install_build.py`, so `asv run torch-2.14.1..torch-2.15.0`, `asv publish`
and `asv find` walk torch builds.

Commit ids are deterministic: fixed author and committer, dates from the builds file, and
the same content give the same ids on every machine, so results stay attached to their
builds when the ledger is rebuilt. Appending a build appends a commit; the ids before it do
not change. Editing an earlier line changes that commit's id and every id after it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import builds as builds_file  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_LEDGER = ROOT / ".asv" / "ledger"
BRANCH = "main"
IDENTITY = {"NAME": "writeback ledger", "EMAIL": "ledger@writeback.invalid"}


@dataclass(frozen=True)
class Entry:
    name: str
    commit: str
    build: dict


def build_ledger(builds: list[builds_file.Build], ledger: Path) -> list[Entry]:
    """Make `ledger` hold exactly these builds as commits on `main`; return them in order."""
    if not (ledger / ".git").is_dir():
        ledger.mkdir(parents=True, exist_ok=True)
        _git(ledger, "init", "--quiet")
    entries, parent = [], None
    for build in builds:
        content = json.dumps(build.as_json(), indent=1, sort_keys=True) + "\n"
        blob = _git(ledger, "hash-object", "-w", "--stdin", stdin=content)
        tree = _git(ledger, "mktree", stdin=f"100644 blob {blob}\tbuild.json\n")
        args = ["commit-tree", tree] + (["-p", parent] if parent else [])
        message = f"{build.name}: {' '.join(build.pip_args)}\n"
        parent = _git(ledger, *args, stdin=message, env=_dated(build))
        entries.append(Entry(build.name, parent, build.as_json()))
    _git(ledger, "update-ref", f"refs/heads/{BRANCH}", parent)
    _git(ledger, "symbolic-ref", "HEAD", f"refs/heads/{BRANCH}")
    wanted = {entry.name: entry.commit for entry in entries}
    for tag in _git(ledger, "tag", "--list").split():
        if tag not in wanted:
            _git(ledger, "tag", "--delete", tag)
    for name, commit in wanted.items():
        _git(ledger, "tag", "--force", name, commit)
    return entries


def read_ledger(ledger: Path) -> list[Entry]:
    """The ledger's builds, oldest first, as committed."""
    if not (ledger / ".git").is_dir():
        raise FileNotFoundError(f"no ledger at {ledger}: run `python tools/ledger.py` first")
    commits = _git(ledger, "rev-list", "--reverse", BRANCH).split()
    entries = []
    for commit in commits:
        build = json.loads(_git(ledger, "show", f"{commit}:build.json"))
        entries.append(Entry(build["name"], commit, build))
    return entries


def _dated(build: builds_file.Build) -> dict[str, str]:
    stamp = f"{build.date.isoformat()}T12:00:00+0000"
    env = {}
    for role in ("AUTHOR", "COMMITTER"):
        env[f"GIT_{role}_NAME"] = IDENTITY["NAME"]
        env[f"GIT_{role}_EMAIL"] = IDENTITY["EMAIL"]
        env[f"GIT_{role}_DATE"] = stamp
    return env


def _git(repo: Path, *args: str, stdin: str | None = None, env: dict | None = None) -> str:
    result = subprocess.run(
        ["git", "-C", str(repo), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    if result.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed in {repo}: {result.stderr.strip()}")
    return result.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--builds", type=Path, default=ROOT / "builds.txt")
    parser.add_argument("--ledger", type=Path, default=DEFAULT_LEDGER)
    args = parser.parse_args(argv)
    try:
        builds = builds_file.read(args.builds)
    except builds_file.BuildsFileError as exc:
        print(f"writeback: {exc}", file=sys.stderr)
        return 2
    entries = build_ledger(builds, args.ledger)
    print(f"ledger {args.ledger} ({len(entries)} builds from {args.builds}):")
    for entry in entries:
        print(f"  {entry.commit[:8]}  {entry.build['date']}  {entry.name:24} "
              f"pip install {' '.join(entry.build['pip_args'])}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
