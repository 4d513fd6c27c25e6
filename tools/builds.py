"""The builds file: which torch builds the history covers, oldest first, one per line.

    # kind  what                              options (key=value, any order)
    release 2.15.0                            date=2026-10-28 [index=URL] [name=..] [sha256=..]
    nightly 2026-11-05                        [series=2.16] [index=URL] [name=..] [sha256=..]
    wheel   /path/or/https/url/torch-....whl  date=2026-11-20 name=pr-170001 [sha256=..]
    pip     "torch==2.15.0 numpy<2"           date=2026-11-21 name=my-build
    patch   2.15.0                            diff=patches/NAME.diff name=NAME [pr=N]
                                              [date=..] [sha256=..]

Lines are split like a shell line (quote a value with spaces); `#` starts a comment.

- `release V` installs `torch==V` (from `index` when given, else pip's configured indexes).
- `nightly YYYY-MM-DD` installs `torch==SERIES.0.devYYYYMMDD` (with `--pre`) from the
  nightly index: `index=URL` (a PEP 503 simple index: https://, http:// or file://), default
  https://download.pytorch.org/whl/nightly/cpu. SERIES defaults to the minor release after
  the newest `release` above it, which is what the nightlies of that period are called. Its
  date is its own.
- `wheel PATH-OR-URL` installs that wheel file (a build from a commit or a pull request).
- `pip "ARGS"` passes ARGS (one quoted string: requirements, options) to `pip install`
  exactly as written.
- `patch V diff=PATH` is the `release V` line above it (its base, required) with a unified
  diff applied to the installed `torch/` package (tools/patch.py: files not in the wheel are
  skipped, a diff that needs a source build is refused). PATH is relative to the builds
  file's folder; the diff itself is committed on the ledger beside build.json, so its ledger
  id changes whenever the diff does. `pr=N` names the upstream pull request it stands for
  (the report links https://github.com/pytorch/pytorch/pull/N). `date` defaults to the
  base's. A patch build is not on the timeline: its line may stand anywhere below its base,
  its date is not checked against its neighbours', and the ledger puts it on a branch of its
  own forked from its base's commit (tools/ledger.py).
- `sha256=HEX` (release, nightly, wheel): the torch wheel must have this sha256.
  tools/install_build.py fetches the wheel alone (`pip download --no-deps`; a local wheel is
  hashed where it lies), checks it before installing anything, and installs that very file;
  a mismatch is an install failure naming both hashes. On a `patch` line it is the diff's
  sha256, checked when the file is read (the wheel is checked by its base's line).

`python -m tools.builds --list-json builds.txt` prints the names of a file's builds as a JSON
list (the CI matrix: one job per build, `make history ONLY=<name>`).

Every build needs a date (the commit date on the ledger, so graphs are chronological; a
nightly's is in its name, a patch's defaults to its base's) and gets a short name, which
becomes a git tag on the ledger: `torch-2.15.0`, `nightly-2026-11-05`, or `name=` for wheels,
pip requirements and patches.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tools import patch as diffs

NIGHTLY_INDEX = "https://download.pytorch.org/whl/nightly/cpu"
KINDS = ("release", "nightly", "wheel", "pip", "patch")
OPTIONS = {
    "release": {"date", "index", "name", "sha256"},
    "nightly": {"series", "index", "name", "sha256"},
    "wheel": {"date", "name", "sha256"},
    "pip": {"date", "name"},
    "patch": {"diff", "name", "pr", "date", "sha256"},
}
PULL_REQUEST = "https://github.com/pytorch/pytorch/pull/{}"
_SHARD = re.compile(r"^(\d+)/(\d+)$")
_VERSION = re.compile(r"^\d+\.\d+(\.\d+)?([a-z]+\d+)?$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class BuildsFileError(ValueError):
    """A line of the builds file that cannot be used; the message names file, line and fix."""


@dataclass(frozen=True)
class Patch:
    """What a patch build applies to its base release: the diff (its path as the line names
    it, its bytes and their sha256), the base build's name, the pull request it stands for."""

    base: str
    diff: str
    sha256: str
    text: bytes = field(repr=False)
    pr: int | None = None

    def as_json(self) -> dict:
        stored = {"base": self.base, "diff": self.diff, "diff_sha256": self.sha256}
        return {**stored, "pr": self.pr} if self.pr else stored


@dataclass(frozen=True)
class Build:
    """One torch build: its ledger name and date, and the pip arguments that install it (a
    patch build: its base release's, and the `patch` it applies then)."""

    name: str
    date: dt.date
    kind: str
    spec: str
    pip_args: tuple[str, ...] = field(default=())
    line: int = 0
    sha256: str | None = None
    patch: Patch | None = None

    def as_json(self) -> dict:
        """What the ledger commit stores: enough to install and to describe the build.
        `sha256` (the torch wheel's) and `patch` only when the build has them, so the ids of
        lines without them stay as they were."""
        stored = {
            "name": self.name,
            "date": self.date.isoformat(),
            "kind": self.kind,
            "spec": self.spec,
            "pip_args": list(self.pip_args),
        }
        stored |= {"sha256": self.sha256} if self.sha256 else {}
        return stored | ({"patch": self.patch.as_json()} if self.patch else {})


def read(path: Path) -> list[Build]:
    """Parse a builds file; raises `BuildsFileError` naming the first bad line."""
    if not path.is_file():
        raise BuildsFileError(f"{path}: no such builds file (see builds.txt for the format)")
    return parse(path.read_text(), source=str(path), folder=path.parent)


def parse(text: str, source: str = "<builds>", folder: Path = Path()) -> list[Build]:
    """The builds of a builds file's `text`; a patch line's diff is read relative to
    `folder` (the file's own)."""
    builds: list[Build] = []
    newest_release: str | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        where = f"{source}:{number}"
        try:
            words = shlex.split(raw, comments=True)
        except ValueError as exc:
            raise BuildsFileError(f"{where}: {exc} (unbalanced quotes?)") from None
        if not words:
            continue
        if words[0] == "patch":
            build = _patch_line(words, where, number, builds, folder)
        else:
            build = _parse_line(words, where, number, newest_release)
        if build.kind == "release":
            newest_release = build.spec
        _check_order(builds, build, where)
        builds.append(build)
    if not builds:
        raise BuildsFileError(f"{source}: lists no builds")
    return builds


def _spec_and_options(words: list[str], where: str) -> tuple[str, dict[str, str]]:
    kind, *rest = words
    if kind not in KINDS:
        raise BuildsFileError(
            f"{where}: unknown kind {kind!r}; a line starts with one of {', '.join(KINDS)}"
        )
    if not rest or rest[0].partition("=")[0] in OPTIONS[kind]:
        raise BuildsFileError(f"{where}: `{kind}` needs what to install after it")
    return rest[0], _options(rest[1:], kind, where)


def _parse_line(words: list[str], where: str, number: int, newest_release: str | None) -> Build:
    kind = words[0]
    spec, options = _spec_and_options(words, where)
    if kind == "release":
        if not _VERSION.match(spec):
            raise BuildsFileError(f"{where}: {spec!r} is not a release version like 2.15.0")
        args = (f"torch=={spec}",) + _index_args(options)
        name = options.get("name", f"torch-{spec}")
    elif kind == "nightly":
        date = _date(spec, where)
        series = options.get("series") or _next_series(newest_release, where)
        if not re.fullmatch(r"\d+\.\d+", series):
            raise BuildsFileError(f"{where}: series={series!r} must look like 2.16")
        requirement = f"torch=={series}.0.dev{date:%Y%m%d}"
        args = (requirement, "--pre", "--index-url", options.get("index", NIGHTLY_INDEX))
        name = options.get("name", f"nightly-{date.isoformat()}")
        options.setdefault("date", spec)
    elif kind == "wheel":
        if not spec.endswith(".whl"):
            raise BuildsFileError(f"{where}: {spec!r} is not a wheel (a path or URL ending .whl)")
        args = (spec,)
        name = options.get("name") or _required(options, "name", kind, where)
    else:
        args = tuple(shlex.split(spec))
        name = options.get("name") or _required(options, "name", kind, where)
    _check_name(name, where)
    sha256 = _sha256_option(options, where)
    date = _date(_required(options, "date", kind, where), where)
    return Build(
        name=name, date=date, kind=kind, spec=spec, pip_args=args, line=number, sha256=sha256
    )


def _patch_line(
    words: list[str], where: str, number: int, builds: list[Build], folder: Path
) -> Build:
    """A `patch V diff=PATH name=NAME` line: the `release V` above it, installed the same
    way, with the diff at `folder`/PATH (read, parsed and hashed here)."""
    version, options = _spec_and_options(words, where)
    base = next((b for b in reversed(builds) if b.kind == "release" and b.spec == version), None)
    if base is None:
        raise BuildsFileError(
            f"{where}: `patch {version}` needs a `release {version}` line above it in this "
            "file: the release it patches"
        )
    name = _required(options, "name", "patch", where)
    _check_name(name, where)
    path = _required(options, "diff", "patch", where)
    text = _diff_text(folder / path, where)
    digest = hashlib.sha256(text).hexdigest()
    if (stated := _sha256_option(options, where)) and stated != digest:
        raise BuildsFileError(
            f"{where}: diff={path} has sha256 {digest}, the line says sha256={stated}: the "
            "diff changed since the line was written (restore it, or put its new sha256 on "
            "the line)"
        )
    pr = options.get("pr")
    if pr is not None and not pr.isdigit():
        raise BuildsFileError(f"{where}: pr={pr!r} must be a pull request's number (pr=198132)")
    date = _date(options["date"], where) if "date" in options else base.date
    if date < base.date:
        raise BuildsFileError(
            f"{where}: {name} ({date}) is older than its base {base.name} ({base.date})"
        )
    found = Patch(base.name, path, digest, text, int(pr) if pr else None)
    return Build(name=name, date=date, kind="patch", spec=version, pip_args=base.pip_args,
                 line=number, sha256=base.sha256, patch=found)  # fmt: skip


def _diff_text(path: Path, where: str) -> bytes:
    """The bytes of a patch line's diff, once tools/patch.py has read it as a diff git wrote."""
    if not path.is_file():
        raise BuildsFileError(
            f"{where}: diff={path}: no such file (the path is relative to the builds file)"
        )
    text = path.read_bytes()
    try:
        diffs.parse(text.decode("utf-8", "surrogateescape"))
    except diffs.PatchError as exc:
        raise BuildsFileError(f"{where}: diff={path}: {exc}") from None
    return text


def _check_name(name: str, where: str) -> None:
    if not _NAME.match(name):
        raise BuildsFileError(f"{where}: name {name!r} must be letters, digits and ._+- only")


def _sha256_option(options: dict[str, str], where: str) -> str | None:
    sha256 = options.get("sha256")
    if sha256 is not None and not _SHA256.match(sha256):
        raise BuildsFileError(f"{where}: sha256={sha256!r} must be 64 lowercase hex digits")
    return sha256


def _options(words: list[str], kind: str, where: str) -> dict[str, str]:
    options = {}
    for word in words:
        key, sep, value = word.partition("=")
        if not sep or not value:
            raise BuildsFileError(f"{where}: {word!r} is not an option of the form key=value")
        if key not in OPTIONS[kind]:
            allowed = ", ".join(sorted(OPTIONS[kind]))
            raise BuildsFileError(f"{where}: `{kind}` takes no option {key!r} (takes {allowed})")
        options[key] = value
    return options


def _index_args(options: dict[str, str]) -> tuple[str, ...]:
    return ("--index-url", options["index"]) if "index" in options else ()


def _required(options: dict[str, str], key: str, kind: str, where: str) -> str:
    if key not in options:
        raise BuildsFileError(f"{where}: `{kind}` needs {key}=... on its line")
    return options[key]


def _date(text: str, where: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise BuildsFileError(f"{where}: {text!r} is not a date like 2026-11-05") from None


def _next_series(newest_release: str | None, where: str) -> str:
    if newest_release is None:
        raise BuildsFileError(
            f"{where}: a nightly needs series=2.X (no release above it to count from)"
        )
    major, minor = newest_release.split(".")[:2]
    return f"{major}.{int(minor) + 1}"


def _check_order(builds: list[Build], build: Build, where: str) -> None:
    """Names are unique; the builds of the timeline (every kind but `patch`) oldest first."""
    for earlier in builds:
        if earlier.name == build.name:
            raise BuildsFileError(
                f"{where}: name {build.name!r} is already used on line {earlier.line}"
            )
    timeline = [b for b in builds if b.kind != "patch"]
    if build.kind != "patch" and timeline and build.date < timeline[-1].date:
        raise BuildsFileError(
            f"{where}: {build.name} ({build.date}) is older than {timeline[-1].name} "
            f"({timeline[-1].date}) above it; list builds oldest first"
        )


def parse_shard(text: str) -> tuple[int, int]:
    """`k/K` -> (k, K), with 1 <= k <= K; raises `BuildsFileError` saying what is wrong."""
    match = _SHARD.match(text.strip())
    if not match or not 1 <= int(match[1]) <= int(match[2]):
        raise BuildsFileError(f"shard {text!r} is not k/K with 1 <= k <= K (e.g. 1/2)")
    return int(match[1]), int(match[2])


def shard(items: list, index: int, count: int) -> list:
    """The `index`-th of `count` slices (1-based): every `count`-th item from the `index`-th, so
    old and new builds spread over the slices and every item is in exactly one."""
    return items[index - 1 :: count]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.builds", description="List the builds of a builds file."
    )
    parser.add_argument("--list-json", type=Path, required=True, metavar="BUILDS_FILE",
                        help="print the build names as a JSON list (one CI job each)")  # fmt: skip
    args = parser.parse_args(argv)
    try:
        builds = read(args.list_json)
    except BuildsFileError as exc:
        print(f"writeback: {exc}", file=sys.stderr)
        return 2
    print(json.dumps([build.name for build in builds]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
