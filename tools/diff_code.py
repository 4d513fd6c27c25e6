"""Diff the code Inductor generated for one (control, n) on two builds.

    python -m tools.diff_code BUILD_A BUILD_B --control explicit_copies --n 1048576
                              [--scenario snapshot_swap] [--isa avx512] [--machine NAME]

BUILD is a ledger name (`torch-2.13.0`, resolved through the install record in
results/builds/) or a folder name under results/generated/<machine>/
(`torch-2.15.0+cpu-d0f2af8b`). The code is the machine's own: this host's machine name by
default (benchmarks/machine.py), or the only machine with kept code.
Prints a unified diff of the wrapper and of the C++ kernels kept with the results.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

from benchmarks.machine import build_folder, machine_name  # standard library only
from tools import ledger as ledger_repo
from tools import upstream_range

ROOT = Path(__file__).resolve().parents[1]
FILES = ("wrapper.py", "kernels.cpp")


def machine_folder(args) -> Path:
    """results/generated/<machine>: --machine, else this host's, else the only one kept."""
    generated = args.results / "generated"
    kept = sorted(p.name for p in generated.iterdir() if p.is_dir()) if generated.is_dir() else []
    name = args.machine or (machine_name() if machine_name() in kept else None)
    if name is None and len(kept) == 1:
        name = kept[0]
    if name is None or name not in kept:
        raise LookupError(f"no generated code kept for machine {name or '(this host)'} under "
                          f"{generated} (machines with code: {', '.join(kept) or 'none'}; "
                          "choose one with --machine)")  # fmt: skip
    return generated / name


def code_folder(build: str, args) -> Path:
    generated = machine_folder(args)
    key = build if (generated / build).is_dir() else _build_key(build, args)
    isas = sorted(p.name for p in (generated / key).iterdir()) if (generated / key).is_dir() else []
    if not isas:
        raise LookupError(f"no generated code kept for {build} under {generated / key}")
    isa = args.isa or isas[0]
    folder = generated / key / isa / args.scenario / args.control / f"n{args.n}"
    if not folder.is_dir():
        kept = sorted(str(p.relative_to(generated / key / isa)) for p in
                      (generated / key / isa).glob("*/*/n*"))  # fmt: skip
        raise LookupError(f"{build} kept no code for {args.scenario}/{args.control}/n{args.n} "
                          f"(kept: {', '.join(kept) or 'nothing'})")  # fmt: skip
    return folder


def _build_key(name: str, args) -> str:
    entry = upstream_range.resolve(name, ledger_repo.read_ledger(args.ledger))
    ident = upstream_range.identity(entry, args.results)
    return build_folder(ident)


def unified(a: Path, b: Path, label_a: str, label_b: str) -> str:
    chunks = []
    for name in FILES:
        old = (a / name).read_text().splitlines(keepends=True) if (a / name).is_file() else []
        new = (b / name).read_text().splitlines(keepends=True) if (b / name).is_file() else []
        chunks.extend(difflib.unified_diff(old, new, f"{label_a}/{name}", f"{label_b}/{name}"))
    return "".join(chunks) or "(identical generated code)\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.diff_code", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("older")
    parser.add_argument("newer")
    parser.add_argument("--control", required=True)
    parser.add_argument("--n", type=int, required=True)
    parser.add_argument("--scenario", default="snapshot_swap")
    parser.add_argument("--isa", help="vector ISA folder (default: the first kept)")
    parser.add_argument("--machine", help="whose kept code (default: this host's machine)")
    parser.add_argument("--ledger", type=Path, default=ledger_repo.DEFAULT_LEDGER)
    parser.add_argument("--results", type=Path, default=ROOT / "results")
    args = parser.parse_args(argv)
    try:
        a, b = code_folder(args.older, args), code_folder(args.newer, args)
    except (LookupError, FileNotFoundError) as exc:
        print(f"writeback: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(unified(a, b, args.older, args.newer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
