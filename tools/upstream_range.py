"""Which upstream PyTorch commits lie between two builds of the ledger.

    python -m tools.upstream_range BUILD_A BUILD_B [--pytorch-repo PATH]

BUILD is a ledger name (`torch-2.14.1`) or a ledger commit (or its prefix, as `asv find`
prints it). When `asv find` ends between two adjacent builds, this prints the torch version
and upstream commit (`torch.version.git_version`) that each build installed - recorded in
results/builds/ when asv installed it - and the compare link on the PyTorch repository, so
you know which commits to read.

Nightlies: upstream cuts one a day as a commit on its `nightly` branch, made with
`git commit-tree -p <previous nightly> <main commit>^{tree}` and the message
"YYYY-MM-DD nightly release (<main commit>)". Its parent is the previous nightly, not a main
commit, so a range of nightly-branch commits lists one snapshot per day and none of the
commits between; the range is taken between the main-branch commits the nightlies were cut
from. A nightly's `git_version` may name either commit: with `--pytorch-repo` (a PyTorch
clone holding the `nightly` branch) a nightly-branch commit is read there and replaced by
the main commit its message names; without it the recorded commit is used, and the output
says how to resolve it.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

from tools import ledger as ledger_repo

ROOT = Path(__file__).resolve().parents[1]
COMPARE = "https://github.com/pytorch/pytorch/compare/{a}...{b}"
NIGHTLY_MESSAGE = re.compile(r"^\d{4}-\d{2}-\d{2} nightly release \(([0-9a-f]{40})\)$")


class Unknown(LookupError):
    pass


def resolve(name_or_commit: str, entries: list[ledger_repo.Entry]) -> ledger_repo.Entry:
    """A build by tag (`torch-2.15.0`, `builds-long/torch-2.1.0`), by name when one builds
    file has it, or by commit prefix."""
    matches = [e for e in entries if e.tag == name_or_commit]
    matches = matches or [e for e in entries if e.name == name_or_commit]
    matches = matches or [e for e in entries if e.commit.startswith(name_or_commit.lower())]
    if len(matches) != 1:
        tags = ", ".join(e.tag for e in entries)
        raise Unknown(
            f"{name_or_commit!r} names no single ledger build (builds: {tags}). A builds file "
            "the ledger lacks is added by `make history BUILDS=FILE` (or "
            "`python -m tools.ledger --builds FILE`)"
        )
    return matches[0]


def identity(entry: ledger_repo.Entry, results: Path) -> dict:
    """The install record of `entry` (any machine's: the build is the same everywhere)."""
    records = sorted((results / "builds").glob(f"*/{entry.commit}.json"))
    if not records:
        raise Unknown(
            f"{entry.tag} has not been installed on any machine yet (no "
            f"{results}/builds/<machine>/{entry.commit}.json); run "
            f"`make history ONLY={entry.name}` first"
        )
    loaded = [json.loads(path.read_text()) for path in records]
    installed = [record for record in loaded if record.get("installed")]
    if not installed:
        raise Unknown(f"{entry.tag} did not install: {loaded[-1].get('error')}")
    return installed[0]


def is_nightly(record: dict) -> bool:
    return ".dev" in record.get("torch_version", "")


def main_commit(commit: str, pytorch_repo: Path) -> str | None:
    """The main-branch commit a nightly-branch commit was cut from (named in its message), or
    None when `commit` is not a nightly-branch commit."""
    result = subprocess.run(
        ["git", "-C", str(pytorch_repo), "log", "-1", "--format=%s", commit],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise Unknown(
            f"commit {commit} is not in {pytorch_repo}: fetch it there first "
            f"(`git -C {pytorch_repo} fetch origin main nightly`)"
        )
    match = NIGHTLY_MESSAGE.match(result.stdout.strip())
    return match.group(1) if match else None


def upstream(record: dict, pytorch_repo: Path | None) -> tuple[str, str]:
    """The commit to take the range from (for a nightly, the main commit it was cut from when
    that can be read), and how it was found."""
    commit = record["torch_git_version"]
    if not is_nightly(record):
        return commit, f"upstream commit {commit}"
    if pytorch_repo is None:
        return commit, (
            f"upstream commit {commit} (a nightly: this may be its `nightly` branch commit, "
            "whose message names the main commit it was cut from; --pytorch-repo reads it)"
        )
    main = main_commit(commit, pytorch_repo)
    if main is None:
        return commit, f"upstream commit {commit} (a main-branch commit)"
    return main, f"nightly-branch commit {commit}, cut from main commit {main}"


def describe(a: dict, b: dict, pytorch_repo: Path | None = None) -> str:
    (a_commit, a_how), (b_commit, b_how) = upstream(a, pytorch_repo), upstream(b, pytorch_repo)
    lines = [
        f"{a['name']}: torch {a['torch_version']}, {a_how}",
        f"{b['name']}: torch {b['torch_version']}, {b_how}",
    ]
    if a_commit == b_commit:
        lines.append("Both builds come from the same upstream commit: nothing upstream between.")
    else:
        lines.append("Upstream commits between them (older...newer):")
        lines.append(compare_url(a_commit, b_commit))
        lines.append(f"{git_log(a_commit, b_commit)}   (in a PyTorch checkout)")
    return "\n".join(lines)


def compare_url(older: str, newer: str) -> str:
    """The PyTorch repository's page of the commits from `older` (excluded) to `newer`."""
    return COMPARE.format(a=older, b=newer)


def git_log(older: str, newer: str) -> str:
    """The command that lists the same commits in a PyTorch checkout."""
    return f"git log --oneline {older}..{newer}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.upstream_range", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("older")
    parser.add_argument("newer")
    parser.add_argument("--ledger", type=Path, default=ledger_repo.DEFAULT_LEDGER)
    parser.add_argument("--results", type=Path, default=ROOT / "results")
    parser.add_argument(
        "--pytorch-repo",
        type=Path,
        help="a PyTorch clone with the `nightly` branch: nightlies are ranged by their main commit",
    )
    args = parser.parse_args(argv)
    try:
        entries = ledger_repo.read_ledger(args.ledger)
        older, newer = (resolve(x, entries) for x in (args.older, args.newer))
        if entries.index(older) > entries.index(newer):
            older, newer = newer, older
        older, newer = identity(older, args.results), identity(newer, args.results)
        print(describe(older, newer, args.pytorch_repo))
    except (Unknown, FileNotFoundError) as exc:
        print(f"writeback: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
