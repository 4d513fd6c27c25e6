"""A unified diff applied to an installed torch: what a `patch` build adds to its base release.

    python -m tools.patch DIFF --site SITE_PACKAGES     (check only: what it would change)

tools/install_build.py calls `apply` once the base release is installed and imports. The diff
is what `git diff` or a GitHub pull request's `.diff` writes (`diff --git a/X b/X` sections,
paths with the `a/` and `b/` prefixes); `a/torch/_inductor/x.py` is
`<site-packages>/torch/_inductor/x.py`. Each file of the diff is one of:

- compiled or generated at build time (`COMPILED_DIRS`, `COMPILED_NAMES`, `COMPILED_SUFFIXES`:
  ATen, c10, `torch/csrc`, torchgen and the codegen inputs under tools/, setup.py, CMake
  files and the Bazel variables CMake reads, `.in` templates such as the `.pyi.in` stubs, and
  C/C++/CUDA sources the wheel does not ship as they are): the whole patch is refused, in
  one line saying it needs a source build, and nothing is touched;
- in the wheel: under a top-level package the installed distribution's RECORD lists (`torch/`,
  `functorch/`): applied;
- anything else (`test/`, `docs/`, `benchmarks/`, `.github/`, `tools/`, top-level files):
  skipped and listed.

The files to apply are applied with `git apply`: it reads every form `git diff` writes (new,
deleted and renamed files, modes, binary patches), takes no fuzz, and is all or nothing (a
hunk that does not apply fails the whole diff and writes no file). It runs once with
`--check` first, so a diff that does not apply is named by its file and hunk (`hunk #2 of
torch/_inductor/x.py (@@ -120,7 +120,8 @@)`) before any file is written. It runs with the
site-packages folder as the only tree it may see (`GIT_CEILING_DIRECTORIES`): asv's
environments live inside the project's own git checkout, where `git apply` would otherwise
take the paths as the checkout's and skip every file without an error.

Once applied, the distribution's RECORD is brought up to date (hash and size of each patched
file, new files added, deleted ones removed, so that pip uninstalls exactly what is there),
`PATCH_RECORD` is written into its dist-info (what was applied: name, base, the diff's
sha256, the patched and skipped files; pip removes it with the distribution), and the
byte-compiled files of every patched module are deleted and compiled again. An installed
torch that already carries a patch is refused: a patch applies to a pristine release only
(tools/install_build.py uninstalls a patched torch before it installs another build).

Standard library only: it runs inside asv's benchmark environments.
"""

from __future__ import annotations

import argparse
import base64
import compileall
import csv
import hashlib
import io
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.machine import PATCH_RECORD  # standard library only

COMPILED_DIRS = (
    "aten/", "c10/", "caffe2/", "cmake/", "third_party/", "torch/csrc/", "functorch/csrc/",
    "torchgen/", "tools/autograd/", "tools/jit/", "tools/pyi/", "tools/setup_helpers/",
)  # fmt: skip
"""Folders of the PyTorch repository whose files are compiled into the wheel's binaries or
generate code at build time (native_functions.yaml and derivatives.yaml among them)."""
COMPILED_NAMES = ("CMakeLists.txt", "setup.py")
COMPILED_SUFFIXES = (".in", ".cmake", ".bzl")
"""Build inputs wherever they are: `.in` templates (the `.pyi.in` stubs, config headers),
CMake modules, the Bazel variables CMake reads too."""
SOURCE_SUFFIXES = (
    ".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".cu", ".cuh", ".hip", ".m",
    ".mm", ".metal", ".s", ".S", ".asm", ".ptx",
)  # fmt: skip
"""C, C++, CUDA, Metal and assembly: compiled, unless the wheel ships that very file (such as
the headers Inductor's generated code includes at run time)."""
DIFF_FILE = "patch.diff"
"""A patch build's diff as its ledger commit holds it, beside build.json (tools/ledger.py)."""
HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
FAILED_AT = re.compile(r"^error: patch failed: (.+):(\d+)$")


class PatchError(ValueError):
    """A diff that cannot be applied to this torch; the message says why in one line."""


@dataclass(frozen=True)
class Hunk:
    header: str
    old_start: int


@dataclass(frozen=True)
class FileDiff:
    """One `diff --git` section: the file's path before and after (None: created, deleted)."""

    old: str | None
    new: str | None
    text: str
    hunks: tuple[Hunk, ...] = ()

    @property
    def path(self) -> str:
        return self.new or self.old or ""

    @property
    def paths(self) -> list[str]:
        return list(dict.fromkeys(p for p in (self.old, self.new) if p))


@dataclass(frozen=True)
class Applied:
    """What `apply` did: the files it changed, the diff's files it skipped (not in the wheel),
    and the diff's sha256."""

    diff_sha256: str
    patched: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def as_json(self) -> dict:
        return {"diff_sha256": self.diff_sha256, "patched": self.patched, "skipped": self.skipped}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def parse(text: str) -> list[FileDiff]:
    """The file sections of a diff as git writes it (text before the first `diff --git` line,
    such as an email header, is ignored); a PatchError when it has none or a path lacks git's
    `a/` and `b/` prefixes."""
    sections, current = [], None
    for line in text.splitlines(keepends=True):
        if line.startswith("diff --git "):
            current = [line]
            sections.append(current)
        elif current is not None:
            current.append(line)
    if not sections:
        raise PatchError("it is not a diff as git writes it (no `diff --git a/... b/...` line)")
    return [_file_diff(lines) for lines in sections]


def _file_diff(lines: list[str]) -> FileDiff:
    old, new = _header_paths(lines[0])
    hunks, pending = [], 0
    for line in lines[1:]:
        if pending:  # a hunk's body: count the lines of its old side
            pending -= line[:1] in (" ", "-")
            continue
        if match := HUNK.match(line):
            hunks.append(Hunk(line.rstrip("\n"), int(match[1])))
            pending = int(match[2] or 1)
            continue
        key, _, value = line.rstrip("\n").partition(" ")
        if key in ("---", "+++"):
            path = _path(value.split("\t")[0], "a/" if key == "---" else "b/")
            old, new = (path, new) if key == "---" else (old, path)
        elif line.startswith(("rename from ", "copy from ")):
            old = line.rstrip("\n").split(" ", 2)[2]
        elif line.startswith(("rename to ", "copy to ")):
            new = line.rstrip("\n").split(" ", 2)[2]
        elif line.startswith("new file mode"):
            old = None
        elif line.startswith("deleted file mode"):
            new = None
    return FileDiff(old, new, "".join(lines), tuple(hunks))


def _header_paths(line: str) -> tuple[str, str]:
    """The two paths of a `diff --git a/X b/Y` line (a mode change or a binary file has no
    other line naming them)."""
    rest = line[len("diff --git ") :].rstrip("\n")
    if rest.startswith('"'):
        end = rest.index('" ', 1) + 1
        first, second = rest[:end], rest[end + 1 :]
    else:
        first, _, second = rest.partition(" b/")
        second = "b/" + second
    return _path(first, "a/"), _path(second, "b/")


def _path(text: str, prefix: str) -> str | None:
    """A diff's path without git's prefix (None for /dev/null)."""
    text = _unquoted(text.strip())
    if text == "/dev/null":
        return None
    if not text.startswith(prefix):
        raise PatchError(
            f"the path {text!r} lacks git's {prefix} prefix: write the diff with `git diff` "
            "(not --no-prefix) or take the pull request's .diff"
        )
    return text[len(prefix) :]


def _unquoted(text: str) -> str:
    """A path git quoted (C-style, for unusual characters) as it is."""
    if not (text.startswith('"') and text.endswith('"')):
        return text
    raw = text[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
    return raw.encode("latin-1").decode("utf-8", "surrogateescape")


def kind(file: FileDiff, wheel: WheelFiles) -> str:
    """`compiled` (needs a source build), `wheel` (applied) or `skipped` (not in the wheel)."""
    kinds = {_path_kind(path, wheel) for path in file.paths}
    if "compiled" in kinds:
        return "compiled"
    if len(kinds) > 1:
        raise PatchError(
            f"it moves {file.old} to {file.new}, into or out of the installed wheel; "
            "a patch build changes the wheel's files only"
        )
    return kinds.pop()


def _path_kind(path: str, wheel: WheelFiles) -> str:
    name = path.rsplit("/", 1)[-1]
    if (
        path.startswith(COMPILED_DIRS)
        or name in COMPILED_NAMES
        or name.endswith(COMPILED_SUFFIXES)
        or (name.endswith(SOURCE_SUFFIXES) and path not in wheel.files)
    ):
        return "compiled"
    return "wheel" if path.split("/", 1)[0] in wheel.packages else "skipped"


@dataclass(frozen=True)
class WheelFiles:
    """The installed torch distribution: its dist-info folder, RECORD's rows and files, and
    the top-level packages those files are in."""

    dist_info: Path
    rows: list[list[str]]

    @property
    def files(self) -> set[str]:
        return {row[0] for row in self.rows if row}

    @property
    def packages(self) -> set[str]:
        tops = {path.split("/", 1)[0] for path in self.files if "/" in path}
        return {top for top in tops if top != ".." and not top.endswith((".dist-info", ".data"))}


def installed_torch(site: Path) -> WheelFiles:
    """The torch distribution installed in `site` (a site-packages folder)."""
    found = [
        path
        for path in sorted(site.glob("torch-*.dist-info"))
        if re.search(r"^Name: torch$", _text(path / "METADATA"), re.MULTILINE)
    ]
    if len(found) != 1:
        raise PatchError(f"expected one installed torch distribution, found {len(found)}")
    record = found[0] / "RECORD"
    return WheelFiles(found[0], list(csv.reader(io.StringIO(_text(record), newline=""))))


def applied(site: Path) -> dict | None:
    """What `apply` recorded in the installed torch's dist-info (PATCH_RECORD), or None."""
    for path in sorted(site.glob(f"torch-*.dist-info/{PATCH_RECORD}")):
        return json.loads(path.read_text())
    return None


def altered(site: Path) -> list[str]:
    """The files `apply` patched in `site` that are no longer as it left them (RECORD's hash)."""
    rows = {row[0]: row[1] for row in installed_torch(site).rows if len(row) > 1}
    patched = (applied(site) or {}).get("patched", [])
    return [path for path in patched if _record_hash(site / path) != rows.get(path, "")]


def _record_hash(path: Path) -> str:
    """RECORD's hash of a file (`sha256=<urlsafe base64>`); '' when there is none."""
    if not path.is_file():
        return ""
    digest = hashlib.sha256(path.read_bytes()).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


@dataclass(frozen=True)
class Plan:
    """What applying a diff to an installed torch would do: the diff's sections to apply and
    the files it skips (not in the wheel)."""

    wheel: WheelFiles
    kept: list[FileDiff]
    skipped: list[str]

    @property
    def text(self) -> bytes:
        """The diff git applies: the sections of the files in the wheel."""
        return "".join(f.text for f in self.kept).encode("utf-8", "surrogateescape")

    @property
    def patched(self) -> list[str]:
        return list(dict.fromkeys(p for f in self.kept for p in f.paths))


def check(diff: bytes, site: Path) -> Plan:
    """What `diff` would change in the torch installed in `site`, with every hunk checked and
    nothing written; a PatchError naming the cause when it cannot be applied (module
    docstring: compiled files, a hunk that does not match, a torch already patched)."""
    files = parse(diff.decode("utf-8", "surrogateescape"))
    wheel = installed_torch(site)
    if earlier := applied(site):
        raise PatchError(
            f"the installed torch already carries the patch {earlier.get('name') or '?'} "
            f"(sha256 {earlier.get('diff_sha256')}); a patch applies to a pristine release"
        )
    kinds = [kind(file, wheel) for file in files]
    compiled = [f.path for f, k in zip(files, kinds) if k == "compiled"]
    if compiled:
        raise PatchError(
            f"the patch needs a source build: it changes compiled or generated files "
            f"({_some(compiled)}), and a patch build applies Python files to a released wheel"
        )
    plan = Plan(
        wheel,
        kept=[f for f, k in zip(files, kinds) if k == "wheel"],
        skipped=[f.path for f, k in zip(files, kinds) if k == "skipped"],
    )
    if not plan.kept:
        raise PatchError(
            f"the diff changes no file of the installed torch (only {_some(plan.skipped)}, "
            "which the wheel does not ship)"
        )
    _git_apply(plan, site, dry_run=True)
    return plan


def apply(diff: bytes, site: Path, name: str = "", base: str = "") -> Applied:
    """Apply `diff` to the torch installed in `site` (`check`ed first: every file or none),
    then record it and refresh the byte code (module docstring); a PatchError naming the
    cause when it cannot be applied, with nothing changed."""
    plan = check(diff, site)
    _git_apply(plan, site, dry_run=False)
    result = Applied(sha256(diff), plan.patched, plan.skipped)
    marker = {"name": name, "base": base, **result.as_json()}
    (plan.wheel.dist_info / PATCH_RECORD).write_text(json.dumps(marker, indent=1) + "\n")
    _update_record(site, plan.wheel, plan.patched)
    _refresh_byte_code(site, plan.patched)
    return result


def _git_apply(plan: Plan, site: Path, dry_run: bool) -> None:
    """`git apply` of the plan's sections (with `--check`: test every hunk, write nothing) in
    `site`, the only tree git may see; a PatchError naming the file and hunk that do not
    apply, or a file git passed over."""
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(site.resolve().parent)}
    args = ["git", "apply", "--verbose", "--whitespace=nowarn"] + (["--check"] if dry_run else [])
    try:
        result = subprocess.run(
            args, input=plan.text, cwd=site.resolve(), env=env, capture_output=True
        )
    except FileNotFoundError:
        raise PatchError("a patch build applies its diff with `git apply`: install git") from None
    output = (result.stderr + result.stdout).decode("utf-8", "replace")
    if result.returncode != 0:
        why = _failure(output, plan.kept)
        raise PatchError(f"the diff does not apply: {why}; nothing was changed")
    verb = "Checking patch " if dry_run else "Applied patch "
    done = set()
    for line in output.splitlines():
        if line.startswith(verb):
            done.update(line[len(verb) :].rstrip(".").removesuffix(" cleanly").split(" => "))
    if missed := [f.path for f in plan.kept if not done & set(f.paths)]:
        raise PatchError(f"git apply passed over {_some(missed)}: {output.strip()}")


def _failure(output: str, files: list[FileDiff]) -> str:
    """What git's output says did not apply, by file and hunk."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for line in lines:
        if match := FAILED_AT.match(line):
            return _failed_hunk(match[1], int(match[2]), files)
    for line in lines:
        if line.startswith("error: "):
            detail = line[len("error: ") :]
            if detail.endswith("No such file or directory"):
                return f"{detail.split(':')[0]} is not in the installed torch"
            return detail
    return lines[-1] if lines else "git apply failed without a message"


def _failed_hunk(path: str, start: int, files: list[FileDiff]) -> str:
    """The hunk of `path` that starts at line `start` of the old file, by number and header."""
    for file in files:
        for number, hunk in enumerate(file.hunks if path in file.paths else (), start=1):
            if hunk.old_start == start:
                return f"hunk #{number} of {path} ({hunk.header}) does not match the file"
    return f"the hunk of {path} at line {start} does not match the file"


def _update_record(site: Path, wheel: WheelFiles, patched: list[str]) -> None:
    """RECORD with the hash and size of every patched file (a deleted one dropped, a new one
    added) and with PATCH_RECORD, so that pip uninstalls what is there."""
    marker = f"{wheel.dist_info.name}/{PATCH_RECORD}"
    touched = set(patched) | {marker}
    rows = [row for row in wheel.rows if row and row[0] not in touched]
    for path in [*patched, marker]:
        if (site / path).is_file():
            rows.append([path, _record_hash(site / path), str((site / path).stat().st_size)])
    out = io.StringIO(newline="")
    csv.writer(out).writerows(rows)
    (wheel.dist_info / "RECORD").write_text(out.getvalue(), newline="")


def _refresh_byte_code(site: Path, patched: list[str]) -> None:
    """Delete the byte-compiled files of every patched module and compile what is there now."""
    for path in (site / p for p in patched if p.endswith(".py")):
        for stale in path.parent.glob(f"__pycache__/{path.stem}.*.pyc"):
            stale.unlink()
        if path.is_file() and not compileall.compile_file(path, quiet=2, force=True):
            raise PatchError(f"{path.relative_to(site)} does not compile once patched")


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.is_file() else ""


def _some(paths: list[str], shown: int = 4) -> str:
    more = f" and {len(paths) - shown} more" if len(paths) > shown else ""
    return ", ".join(paths[:shown]) + more


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.patch", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("diff", type=Path)
    parser.add_argument("--site", type=Path, required=True, help="the torch's site-packages")
    args = parser.parse_args(argv)
    try:
        plan = check(args.diff.read_bytes(), args.site)
    except PatchError as exc:
        print(f"writeback: {args.diff} does not apply: {exc}", file=sys.stderr)
        return 1
    print(f"{args.diff} applies to the torch in {args.site} (checked, nothing written):")
    lines = [f"  patched: {path}" for path in plan.patched]
    print("\n".join(lines + [f"  skipped (not in the wheel): {path}" for path in plan.skipped]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
