"""Which upstream PyTorch commits lie between two builds of the ledger.

    python tools/upstream_range.py BUILD_A BUILD_B

BUILD is a ledger name (`torch-2.14.1`) or a ledger commit (or its prefix, as `asv find`
prints it). When `asv find` ends between two adjacent builds, this prints the torch version
and upstream commit (`torch.version.git_version`) that each build installed - recorded in
results/builds/ when asv installed it - and the compare link on the PyTorch repository, so
you know which commits to read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import ledger as ledger_repo  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
COMPARE = "https://github.com/pytorch/pytorch/compare/{a}...{b}"


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
            "the ledger lacks is added by `make history BUILDS=FILE` (or `python "
            "tools/ledger.py --builds FILE`)"
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


def describe(a: dict, b: dict) -> str:
    lines = [
        f"{a['name']}: torch {a['torch_version']}, upstream commit {a['torch_git_version']}",
        f"{b['name']}: torch {b['torch_version']}, upstream commit {b['torch_git_version']}",
    ]
    if a["torch_git_version"] == b["torch_git_version"]:
        lines.append("Both builds come from the same upstream commit: nothing upstream between.")
    else:
        lines.append("Upstream commits between them (older...newer):")
        lines.append(COMPARE.format(a=a["torch_git_version"], b=b["torch_git_version"]))
        lines.append(f"git log --oneline {a['torch_git_version']}..{b['torch_git_version']}"
                     "   (in a PyTorch checkout)")  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("older")
    parser.add_argument("newer")
    parser.add_argument("--ledger", type=Path, default=ledger_repo.DEFAULT_LEDGER)
    parser.add_argument("--results", type=Path, default=ROOT / "results")
    args = parser.parse_args(argv)
    try:
        entries = ledger_repo.read_ledger(args.ledger)
        older, newer = (resolve(x, entries) for x in (args.older, args.newer))
        if entries.index(older) > entries.index(newer):
            older, newer = newer, older
        print(describe(identity(older, args.results), identity(newer, args.results)))
    except (Unknown, FileNotFoundError) as exc:
        print(f"writeback: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
