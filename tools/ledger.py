"""The build ledger: a git repository whose commits each pin one torch build.

    python -m tools.ledger [--builds builds.txt] [--ledger .asv/ledger]

asv's history axis is the commits of its `repo`. Here that repo is the ledger: commit k of a
builds file's branch holds `build.json` (the k-th build of the file: name, date, pip
arguments), is dated with the build's date and tagged with its name. asv checks each commit
out and installs its build with `tools/install_build.py`, so `asv run
torch-2.14.1..torch-2.15.0`, `asv publish` and `asv find` walk torch builds.

One ledger holds every builds file, each on a branch of its own: `builds.txt` on `main` (its
tags are the build names, `torch-2.15.0`), any other file on a branch named after it
(`builds-long.txt` on `builds-long`, tags `builds-long/torch-2.15.0`). Building one file's
branch leaves every other branch and tag alone, so running `BUILDS=builds-long.txt` and then
the default loses nothing from either. asv publishes every tagged commit, so the site and the
report show the builds of every file.

A `patch` build is not on its file's branch: its commit (build.json and the diff itself,
`patch.diff`, which tools/install_build.py applies from asv's checkout) has its base release's
commit as parent and is the tip of a branch of its own, `patch/<file's branch>/<name>`
(`patch/main/remove-noop-copy`), tagged with its name as the file's other builds are. So the
file's branch, and every id on it, is the same with or without patch lines; `asv find` and any
range on that branch (`git rev-list --first-parent`, as asv walks it) never step through a
patch; and asv, which is given the patch branches as branches of its own
(tools/asv_project.py), graphs each patch as a branch that leaves the timeline at its base.

Commit ids are deterministic: fixed author and committer, dates from the builds file, and
the same content give the same ids on every machine, so results stay attached to their
builds when the ledger is rebuilt. Appending a build appends a commit; the ids before it do
not change. Editing an earlier line changes that commit's id and every id after it. The same
build in two files has two ids (a commit's id depends on the builds before it): their
results are kept apart.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tools import builds as builds_file
from tools import patch as diffs

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_LEDGER = ROOT / ".asv" / "ledger"
BRANCH = "main"
PATCHES = "patch"
"""The ref folder of the patch branches: `patch/<file's branch>/<name>`."""
IDENTITY = {"NAME": "writeback ledger", "EMAIL": "ledger@writeback.invalid"}


@dataclass(frozen=True)
class Entry:
    name: str
    commit: str
    build: dict
    branch: str = BRANCH
    """The builds file's branch (a patch build's too: its commit is on a branch of its own,
    `asv_branch`)."""

    @property
    def tag(self) -> str:
        """The git tag (and asv range name) of this build: its name, prefixed by its branch
        unless it is on `main`."""
        return tag_name(self.branch, self.name)

    @property
    def patch(self) -> dict | None:
        """A patch build's `patch` (its base's name, the diff, its sha256, the pull request);
        None for a build of the timeline."""
        return self.build.get("patch")

    @property
    def asv_branch(self) -> str:
        """The ledger branch whose tip or history holds this build's commit."""
        return patch_branch(self.branch, self.name) if self.patch else self.branch


def branch_for(builds_path: Path) -> str:
    """The ledger branch of a builds file: `main` for builds.txt, else the file's stem (never
    `main` nor `patch`, the patch branches' folder)."""
    if builds_path.name == "builds.txt":
        return BRANCH
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", builds_path.stem).strip(".-") or "builds"
    return {BRANCH: "builds", PATCHES: "builds-patch"}.get(stem, stem)


def tag_name(branch: str, name: str) -> str:
    return name if branch == BRANCH else f"{branch}/{name}"


def patch_branch(branch: str, name: str) -> str:
    """The branch of patch build `name` of the builds file on `branch`."""
    return f"{PATCHES}/{branch}/{name}"


def build_ledger(
    builds: list[builds_file.Build], ledger: Path, branch: str = BRANCH
) -> list[Entry]:
    """Make `branch` of `ledger` hold exactly these builds, tagged; return them in order.
    Other branches and their tags are left as they are."""
    if not (ledger / ".git").is_dir():
        ledger.mkdir(parents=True, exist_ok=True)
        _git(ledger, "init", "--quiet")
    entries, parent = [], None
    for build in builds:
        if build.patch:  # forked from its base's commit; the timeline goes on from `parent`
            base = next(e.commit for e in entries if e.name == build.patch.base)
            entries.append(Entry(build.name, _commit(ledger, build, base), build.as_json(), branch))
            continue
        parent = _commit(ledger, build, parent)
        entries.append(Entry(build.name, parent, build.as_json(), branch))
    _git(ledger, "update-ref", f"refs/heads/{branch}", parent)
    if branch == BRANCH or not _git(ledger, "rev-parse", "--verify", "--quiet", BRANCH, ok=(0, 1)):
        _git(ledger, "symbolic-ref", "HEAD", f"refs/heads/{branch}")
    _set_patch_branches(ledger, branch, [e for e in entries if e.patch])
    wanted = {entry.tag: entry.commit for entry in entries}
    for tag in _git(ledger, "tag", "--list").split():
        if _branch_of_tag(tag) == branch and tag not in wanted:
            _git(ledger, "tag", "--delete", tag)
    for tag, commit in wanted.items():
        _git(ledger, "tag", "--force", tag, commit)
    return entries


def _commit(ledger: Path, build: builds_file.Build, parent: str | None) -> str:
    """The commit of `build` (its build.json, and a patch build's diff) on `parent`."""
    content = json.dumps(build.as_json(), indent=1, sort_keys=True) + "\n"
    files = {"build.json": _blob(ledger, content.encode())}
    if build.patch:
        files[diffs.DIFF_FILE] = _blob(ledger, build.patch.text)
    listing = "".join(f"100644 blob {blob}\t{name}\n" for name, blob in sorted(files.items()))
    tree = _git(ledger, "mktree", stdin=listing)
    args = ["commit-tree", tree] + (["-p", parent] if parent else [])
    message = f"{build.name}: {' '.join(build.pip_args)}\n"
    if build.patch:
        message += f"\nthen {build.patch.diff} (sha256 {build.patch.sha256}) applied\n"
    return _git(ledger, *args, stdin=message, env=_dated(build))


def _set_patch_branches(ledger: Path, branch: str, patches: list[Entry]) -> None:
    """Make the patch branches of `branch` exactly these builds' (each at its commit)."""
    wanted = {f"refs/heads/{entry.asv_branch}": entry.commit for entry in patches}
    for ref in _patch_refs(ledger, branch):
        if ref not in wanted:
            _git(ledger, "update-ref", "-d", ref)
    for ref, commit in wanted.items():
        _git(ledger, "update-ref", ref, commit)


def _patch_refs(ledger: Path, branch: str | None = None) -> list[str]:
    """The refs of the patch branches of `branch` (of every builds file's when None)."""
    folder = f"refs/heads/{PATCHES}/" + (f"{branch}/" if branch else "")
    return _git(ledger, "for-each-ref", "--format=%(refname)", folder).split()


def patch_branches(ledger: Path) -> list[str]:
    """Every patch build's branch in the ledger (`patch/main/NAME`, ...); [] without a ledger."""
    if not (ledger / ".git").is_dir():
        return []
    return [ref.removeprefix("refs/heads/") for ref in _patch_refs(ledger)]


def build_branches(builds_files: list[Path], ledger: Path = DEFAULT_LEDGER) -> dict[Path, list]:
    """The branch of each builds file in `builds_files`, and first builds.txt's `main` when
    that file exists (the branch `make history` always keeps). Returns each file's entries,
    keyed by its resolved path."""
    named = [path.resolve() for path in builds_files]
    built = {}
    for path in dict.fromkeys([(ROOT / "builds.txt").resolve(), *named]):
        if path in named or path.is_file():
            built[path] = build_ledger(builds_file.read(path), ledger, branch_for(path))
    return built


def _branch_of_tag(tag: str) -> str:
    return tag.split("/", 1)[0] if "/" in tag else BRANCH


def branches(ledger: Path) -> list[str]:
    """Every builds file's branch in the ledger, `main` first (not the patch branches)."""
    names = _git(ledger, "for-each-ref", "--format=%(refname:short)", "refs/heads").split()
    names = [name for name in names if not name.startswith(f"{PATCHES}/")]
    return sorted(names, key=lambda name: (name != BRANCH, name))


def read_ledger(ledger: Path, branch: str | None = None) -> list[Entry]:
    """The ledger's builds as committed: one builds file's branch, oldest first, or (by
    default) every branch's, `main` first, each branch oldest first; a patch build right after
    its base."""
    if not (ledger / ".git").is_dir():
        raise FileNotFoundError(
            f"no ledger at {ledger}: run `make history` (or `python -m tools.ledger`) first"
        )
    entries = []
    for name in [branch] if branch else branches(ledger):
        timeline = [_entry(ledger, commit, name)
                    for commit in _git(ledger, "rev-list", "--reverse", name).split()]  # fmt: skip
        patches = [_entry(ledger, _git(ledger, "rev-parse", ref), name)
                   for ref in _patch_refs(ledger, name)]  # fmt: skip
        for entry in timeline:
            entries += [entry, *(p for p in patches if p.patch["base"] == entry.name)]
    return entries


def _entry(ledger: Path, commit: str, branch: str) -> Entry:
    build = json.loads(_git(ledger, "show", f"{commit}:build.json"))
    return Entry(build["name"], commit, build, branch)


def _dated(build: builds_file.Build) -> dict[str, str]:
    stamp = f"{build.date.isoformat()}T12:00:00+0000"
    env = {}
    for role in ("AUTHOR", "COMMITTER"):
        env[f"GIT_{role}_NAME"] = IDENTITY["NAME"]
        env[f"GIT_{role}_EMAIL"] = IDENTITY["EMAIL"]
        env[f"GIT_{role}_DATE"] = stamp
    return env


def _blob(repo: Path, data: bytes) -> str:
    """Store `data` (bytes as they are) in the repository; its blob id."""
    result = subprocess.run(["git", "-C", str(repo), "hash-object", "-w", "--stdin"],
                            input=data, capture_output=True, check=True)  # fmt: skip
    return result.stdout.decode().strip()


def _git(repo: Path, *args: str, stdin: str | None = None, env: dict | None = None, ok=(0,)) -> str:
    result = subprocess.run(
        ["git", "-C", str(repo), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    if result.returncode not in ok:
        raise RuntimeError(f"git {' '.join(args)} failed in {repo}: {result.stderr.strip()}")
    return result.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.ledger", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--builds", type=Path, default=ROOT / "builds.txt")
    parser.add_argument("--ledger", type=Path, default=DEFAULT_LEDGER)
    args = parser.parse_args(argv)
    try:
        builds = builds_file.read(args.builds)
    except builds_file.BuildsFileError as exc:
        print(f"writeback: {exc}", file=sys.stderr)
        return 2
    entries = build_ledger(builds, args.ledger, branch_for(args.builds))
    print(f"ledger {args.ledger}, branch {branch_for(args.builds)} "
          f"({len(entries)} builds from {args.builds}):")  # fmt: skip
    for entry in entries:
        patched = f", then {entry.patch['diff']} (branch {entry.asv_branch})" if entry.patch else ""
        print(f"  {entry.commit[:8]}  {entry.build['date']}  {entry.tag:24} "
              f"pip install {' '.join(entry.build['pip_args'])}{patched}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
