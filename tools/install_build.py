"""Install one ledger commit's torch build into the asv environment running this script.

asv runs it as the install command (asv.conf.json) with the environment's own python, from the
project's folder (`in-dir={conf_dir}`, so that `tools` and `benchmarks` import as packages):

    python -m tools.install_build --build-dir {build_dir} --results {conf_dir}/results

It pip-installs the build that the checked-out `build.json` names (then the client libraries
in CLIENTS, never over torch: `clients`), imports it in a fresh
process to read what was really installed (`torch.__version__`, `torch.version.git_version`),
and records that identity, with the sha256 of the torch wheel pip installed (from pip's
`--report`), in `results/builds/<machine>/<ledger commit>.json`, beside asv's results (the
machine as in benchmarks/machine.py: whether a build installs depends on where it runs).
A build that does not install or import is recorded there too, with pip's last error line,
and the script exits non-zero: asv then marks that commit's benchmarks failed and goes on.

A build whose line carries `sha256=` is checked before anything is installed: the torch
wheel is fetched alone (`pip download --no-deps` with the line's own arguments; a local
wheel is hashed where it lies), hashed, and installed from that very file only when the hash
matches; a mismatch is an install failure naming both hashes. Download-then-check rather than
pip's `--require-hashes`: pip's hash-checking mode is all or nothing, so a hash on torch alone
would make pip demand a pinned hash for every dependency (sympy, networkx, ...), which the
builds file does not know; the dependencies still resolve as they do without a hash.

After installing, the torch that imports must be the one asked for, or the install fails
naming both: `import torch` loads the installed distribution's files; its `__version__` is
the version asked for (a release's or a `torch==` pin's public version, `2.16.0.dev20261105` of
a nightly, a wheel file's full version); and for a wheel file (a `wheel` line, or any line
with `sha256=`) the distribution's own record of the file it was installed from (pip's
`direct_url.json`) names that file's sha256 (a remote wheel without `sha256=`: its URL). pip
keeps an installed torch of the same version rather than install another wheel of it, so a
mismatch there is reinstalled once (`--force-reinstall --no-deps`) before it fails.

The record names no path of the machine that wrote it (`python` is relative to the project or
to the environment's folder), and a reinstall that changes nothing but the time it took (asv
reinstalls the first build to discover the benchmarks) leaves the earlier record byte for
byte; an earlier record that cannot be read stops the install before anything is installed,
naming the file.

A `patch` build (tools/builds.py) installs its base release as that release's line does, then
applies the diff its ledger commit holds (`patch.diff`, checked against build.json's sha256) to
the installed `torch/` with tools/patch.py: every hunk is checked before any file is written, a
file that is not in the wheel is skipped and listed, one that needs a source build refuses the
build. The record's `patch` adds the files patched and skipped to the line's (base, diff, its
sha256, pull request), and the identity `torch_patch` (the diff's sha256, read from what
tools/patch.py wrote into torch's dist-info), which names the folder of the build's records
and caches (benchmarks/machine.py `build_folder`). A diff that does not apply fails the
install, naming the file and the hunk, with the base left as pip installed it. pip keeps an
installed torch of the version asked for, patched or not, so a torch that carries a patch is
uninstalled before a build is installed (unless it carries the very patch that build applies,
its files as applied: a reinstall then installs nothing, as for a release), and the torch
that imports must carry exactly the patch its build asks for (none for a build of the
timeline).

pip runs with PIP_CONSTRAINT=/dev/null: a build's pin is exact, and a machine-wide
constraint file (such as one capping torch) would only make the pin fail. Its cache is the
project's own (tools/disk.py `PIP_CACHE`), emptied before each install of its least recently
written entries down to `PIP_CACHE_BOUND` (3 GB: the last install's downloads stay, so a
patch build that reinstalls its base's wheel finds it; 26 releases never keep 26 wheels).

Every build goes into the one environment asv made, so once a build is installed what the
builds before it left is removed (`remove_what_earlier_builds_left`): the distributions
nothing asked for and nothing here requires (a CUDA build's CUDA libraries and triton under a
CPU build, or another CUDA generation's), and the Inductor caches of the machine's other
builds. pip itself replaces a torch of another version whole (its files, and the byte code
compiled beside them), so the environment holds what a new one would.

Standard library only: it runs in the benchmark environment, which holds nothing else.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import hashlib
import importlib.metadata
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from benchmarks import artifacts  # standard library only
from benchmarks import machine as host  # standard library only
from benchmarks.machine import PATCH_RECORD, machine_name, release_numbers  # standard library only
from tools import disk, patch

# Client libraries some scenarios import, installed after torch. tensordict goes in without
# its dependencies (it depends on torch, and pip must never swap the torch under test); its
# other dependencies do not touch torch. A client that fails to install is recorded, not
# fatal: its scenario skips with the reason on that build. tensordict 0.15.3 requires
# torch>=2.11.0a0: on older releases its scenario skips saying so (benchmarks/compat.py
# `declared_torch_problem`), one client for the whole history rather than the tensordict of
# each release (the TensorDict code of tensordict 0.2.1 to 0.5.0 calls no torch._foreach_copy_).
CLIENTS = (
    ("--no-deps", "tensordict==0.15.3"),
    ("numpy==2.4.6", "cloudpickle==3.1.3", "pyvers==0.2.3"),
)

NUMPY_2_FIRST = (2, 3)
"""The first torch release built against numpy 2: the 2.1.x and 2.2.x wheels load numpy's C
API as `numpy.core` (numpy 1), and next to numpy 2 they import with a warning and without
numpy (`Tensor.numpy()` raises "Numpy is not available": 2.1.0 and 2.2.0 measured); 2.3.0's
wheel loads `numpy._core`, numpy 2's (2.4.1 measured with numpy 2.4.6)."""
NUMPY_1 = "numpy==1.26.4"


def clients(torch_version: str) -> tuple[tuple[str, ...], ...]:
    """The pip arguments of each client group for this torch (`CLIENTS`, with numpy 1 for a
    release built against it: `NUMPY_2_FIRST`)."""
    if release_numbers(torch_version) >= NUMPY_2_FIRST:
        return CLIENTS
    return tuple(tuple(NUMPY_1 if a.startswith("numpy==") else a for a in group)
                 for group in CLIENTS)  # fmt: skip


SETUPTOOLS_WITH_PKG_RESOURCES = "setuptools==69.5.1"
"""The setuptools a release's Inductor needs when its `torch.utils.cpp_extension` (imported
by Inductor's C++ compile) imports `pkg_resources.packaging`: setuptools 70 dropped that name
and 82 removed `pkg_resources`, so next to the environment's own setuptools (84 here) every
Inductor compile of such a release raises ModuleNotFoundError (2.1.0 measured). Which
releases need it is measured at each install (`_inductor_toolchain`), not listed."""

CPP_EXTENSION_PROBE = "import torch.utils.cpp_extension"
"""What Inductor's C++ compile imports first on every release (its include and library
paths): run in the environment once a build is installed."""


# pip and the identity check run in the environment's own folder (asv starts this script in the
# project's): no folder of the project (site/, expected/, ...) can shadow a module they import.
ENV_DIR = sys.prefix

IDENTITY_SCRIPT = """
import importlib.metadata, json, os, sys, torch
try:
    dist = importlib.metadata.distribution("torch")
except importlib.metadata.PackageNotFoundError:
    dist = None
direct = dist.read_text("direct_url.json") if dist else None
patch = dist.read_text(sys.argv[1]) if dist else None
identity = {"torch_version": str(torch.__version__),
            "torch_git_version": str(getattr(torch.version, "git_version", "unknown")),
            "cuda": torch.version.cuda}
if patch:
    identity["torch_patch"] = json.loads(patch)["diff_sha256"]
print(json.dumps({
    "identity": identity,
    "imported": os.path.realpath(torch.__file__),
    "installed": os.path.realpath(dist.locate_file("torch/__init__.py")) if dist else None,
    "direct_url": json.loads(direct) if direct else None,
    "patch": json.loads(patch) if patch else None,
}))
"""
"""What the torch that imports is (`identity`, recorded), where it imports from, what the
installed distribution records of its origin (checked against what was asked for) and the
patch tools/patch.py applied to it (its file name is the script's argument)."""

TIME_FIELDS = ("attempted_at", "install_seconds")
"""Fields of an install record that a reinstall of the same build changes without changing
what is installed."""


@dataclass(frozen=True)
class Wheel:
    """A torch wheel file asked for: where pip gets it, and its sha256 when known."""

    where: str
    sha256: str | None

    def describe(self) -> str:
        name = urllib.parse.unquote(self.where.rstrip("/").rsplit("/", 1)[-1])
        return f"{name} (sha256 {self.sha256})" if self.sha256 else self.where


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.install_build", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--build-dir", type=Path, required=True)
    parser.add_argument("--results", type=Path, required=True)
    args = parser.parse_args(argv)

    build = json.loads((args.build_dir / "build.json").read_text())
    commit = os.environ.get("ASV_COMMIT") or _head(args.build_dir)
    machine = machine_name()
    path = args.results / "builds" / machine / f"{commit}.json"
    try:
        earlier = _earlier(path)
    except ValueError as exc:
        print(f"writeback: build {build['name']} not installed: {exc}", file=sys.stderr)
        return 1
    record = {
        **build,
        "ledger_commit": commit,
        "machine": machine,
        "host": platform.node(),
        "python": _python(Path(os.path.abspath(args.results)).parent),
        "attempted_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }
    print(f"writeback: installing {build['name']}: pip install {' '.join(build['pip_args'])}")
    pruned, cached = disk.prune_pip_cache(disk.PIP_CACHE)
    if pruned:
        print(f"writeback: pip's cache {disk.PIP_CACHE}: {disk.gb(pruned)} of its least recently "
              f"written entries removed, {disk.gb(cached)} kept (at most "
              f"{disk.gb(disk.PIP_CACHE_BOUND)})")  # fmt: skip
    diff = (args.build_dir / patch.DIFF_FILE).read_bytes() if build.get("patch") else None
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="writeback-wheel-") as folder:
        error, wheels, found = _install(build, Path(folder), diff)
    identity = found["identity"] if found else None
    record.update(identity or {})
    if build.get("patch") and found and found.get("patch"):
        record["patch"] = {**build["patch"], **{k: found["patch"][k] for k in PATCHED}}
    kept = {} if wheels.get("torch") else _kept(earlier, identity)  # pip installed no torch now
    wheel = _named(wheels["torch"], folder) if wheels.get("torch") else kept.get("torch_wheel")
    record.update(installed=error is None, error=error, torch_wheel=wheel)
    if error is None:
        groups = clients(identity["torch_version"])
        client_errors = [e for e in (_pip("install", list(args)) for args in groups) if e]
        record["clients_error"] = "; ".join(client_errors) or None
        for problem in client_errors:
            print(f"writeback: a client library did not install (its scenario will skip): "
                  f"{problem}", file=sys.stderr)  # fmt: skip
        record["setuptools"], error = _inductor_toolchain()
        if error:
            record.update(installed=False, error=error)
        removed = remove_what_earlier_builds_left(machine, identity)
        if leftovers := merged_leftovers(kept.get("leftovers") or {}, removed):
            record["leftovers"] = leftovers  # asv shows an install's output only if it fails
        if (removed["uninstalled"] or removed["failed"]) and not error \
                and isinstance(after := _identity(), str):  # fmt: skip
            error = f"after removing what earlier builds left: {after}"  # it broke torch
            record.update(installed=False, error=error)
    # the report's time table: the install that put this torch here, not a later no-op
    record["install_seconds"] = kept.get("install_seconds") or round(time.monotonic() - started, 1)
    if _same_install(earlier, record):
        print(f"writeback: {path.name} kept as it was (this install changed nothing in it)")
    else:
        _save(path, record)
    if error:
        print(f"writeback: build {build['name']} did not install: {error}", file=sys.stderr)
        return 1
    print(
        f"writeback: {build['name']} is torch {identity['torch_version']} "
        f"(commit {identity['torch_git_version']})"
    )
    return 0


SEEDS = ("pip", "setuptools", "wheel")
"""What virtualenv puts into an environment before anything is asked for."""


def _inductor_toolchain() -> tuple[dict, str | None]:
    """Make `torch.utils.cpp_extension` import (`CPP_EXTENSION_PROBE`), which Inductor's C++
    compile needs. An earlier build's pin is undone first (the build is probed next to a
    current setuptools, as a new environment would hold); when the probe fails on
    `pkg_resources`, `SETUPTOOLS_WITH_PKG_RESOURCES` is installed and the probe tried again.
    Returns what the record keeps (the setuptools version, and why it was pinned) and the
    error that leaves this build without Inductor (the install then fails, saying so), else
    None."""
    if _distribution_version("setuptools") == SETUPTOOLS_WITH_PKG_RESOURCES.split("==")[1]:
        _pip("install", ["setuptools>=70"])
    found: dict = {}
    if (problem := _probe_problem()) and "pkg_resources" in problem:
        found["pinned_because"] = (f"`{CPP_EXTENSION_PROBE}` failed next to setuptools "
                                   f"{_distribution_version('setuptools')}: {problem}")  # fmt: skip
        print(f"writeback: {found['pinned_because']}; installing {SETUPTOOLS_WITH_PKG_RESOURCES}")
        if error := _pip("install", [SETUPTOOLS_WITH_PKG_RESOURCES]):
            problem = f"{SETUPTOOLS_WITH_PKG_RESOURCES} did not install: {error}"
        else:
            problem = _probe_problem()
    found = {"version": _distribution_version("setuptools"), **found}
    if problem:
        return found, (f"Inductor cannot compile C++ on this build: `{CPP_EXTENSION_PROBE}` "
                       f"fails: {problem}")  # fmt: skip
    return found, None


def _probe_problem() -> str:
    """'' when `CPP_EXTENSION_PROBE` runs in the environment, else its error's last line."""
    result = subprocess.run([sys.executable, "-c", CPP_EXTENSION_PROBE],
                            capture_output=True, text=True, cwd=ENV_DIR)  # fmt: skip
    return "" if result.returncode == 0 else _last_line(result.stderr)


def _last_line(text: str) -> str:
    """The last line a command printed that is not blank, stripped (`(no output)` when none)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return (lines or ["(no output)"])[-1]


def _distribution_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def remove_strays(name: str = "torch", path: list[str] | None = None) -> list[Path]:
    """Remove the files in the installed `name` package's folder that its distribution does not
    list (its RECORD), byte-compiled files aside: what earlier builds wrote there at run time,
    which pip's uninstall leaves behind. Such a file changes what this build does: torch's
    `cpp_extension` of 2.4 and later writes a precompiled `torch/include/torch/extension.h.gch`
    beside the header, and 2.1.0, which knows nothing of it, had gcc pick it up and crash
    (an internal compiler error in every cpp_wrapper compile). `path`: where to look for the
    distribution (sys.path). Returns what was removed."""
    found = importlib.metadata.distributions(name=name, path=path or sys.path)
    dist = next(iter(found))
    root = Path(dist.locate_file(name)).resolve()
    listed = {f.resolve() for f in _recorded(dist)}
    strays = sorted(
        file for file in root.rglob("*")
        if file.is_file() and "__pycache__" not in file.parts and file.resolve() not in listed
    )  # fmt: skip
    for stray in strays:
        stray.unlink()
    if strays:
        shown = ", ".join(str(p.relative_to(root.parent)) for p in strays[:3])
        more = f" and {len(strays) - 3} more" if len(strays) > 3 else ""
        print(f"writeback: removed {len(strays)} file(s) that earlier builds left in the "
              f"installed {name}/ and its wheel does not have: {shown}{more}")  # fmt: skip
    return strays


def remove_what_earlier_builds_left(machine: str, identity: dict) -> dict[str, list[str]]:
    """Once a build is installed: uninstall the distributions the builds installed before it
    left and nothing here needs (`unneeded`: the CUDA libraries and triton of a CUDA build
    under a CPU build, or of another CUDA generation), and remove the Inductor caches of
    `machine`'s other builds (`other_builds_caches`). The environment then holds what a new
    one would, and a run over many builds keeps one build's worth of each. Returns the
    distributions uninstalled, those reinstalled because that uninstall took files they own
    too, and what pip failed to do (the install record keeps them: `leftovers`)."""
    site = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    done: dict[str, list[str]] = {"uninstalled": [], "reinstalled": [], "failed": []}
    if names := unneeded(site):
        if error := _pip("uninstall", ["--yes", *names]):
            done["failed"].append(f"uninstall {', '.join(names)}: {error}")
            print(f"writeback: could not uninstall what no build here needs ({', '.join(names)})"
                  f": {error}", file=sys.stderr)  # fmt: skip
        else:
            done["uninstalled"] = names
            print(f"writeback: uninstalled what earlier builds left and nothing here needs: "
                  f"{', '.join(names)}")  # fmt: skip
        if broken := clobbered(site):  # a file two distributions own went with the other
            print(f"writeback: that uninstall removed files of {', '.join(broken)} (one path "
                  f"owned by two distributions); reinstalling them")  # fmt: skip
            if error := _pip("install", ["--force-reinstall", "--no-deps", *broken]):
                done["failed"].append(f"reinstall {', '.join(broken)}: {error}")
                print(f"writeback: could not reinstall {', '.join(broken)}: {error}",
                      file=sys.stderr)  # fmt: skip
            else:
                done["reinstalled"] = broken
    if caches := other_builds_caches(artifacts.cache_root() / machine, host.build_folder(identity)):
        for folder in caches:
            shutil.rmtree(folder, ignore_errors=True)
        print(f"writeback: removed the Inductor caches of {len(caches)} other build(s) of "
              f"{machine} ({', '.join(f.name for f in caches)})")  # fmt: skip
    return done


def merged_leftovers(earlier: dict[str, list[str]], now: dict[str, list[str]]) -> dict:
    """The install record's `leftovers`: what the install that put this torch here removed
    (`earlier`, kept across reinstalls of the same torch) and what this one removed (`now`),
    each kind in order without repeats; kinds with nothing in them left out. A reinstall that
    removes something more adds to the list, never replaces it."""
    kinds = dict.fromkeys([*earlier, *now])
    merged = {k: list(dict.fromkeys([*earlier.get(k, []), *now.get(k, [])])) for k in kinds}
    return {k: v for k, v in merged.items() if v}


def unneeded(site: list[str]) -> list[str]:
    """The distributions installed in the folders `site` that nothing asked for: neither asked
    for by name (pip's `REQUESTED`: the torch build, its clients, asv's own packages), nor a
    seed of the environment (`SEEDS`), nor named by a requirement of one of those, however
    deep (every marker and extra taken as true: what one of them might need stays)."""
    installed = {}
    for dist in importlib.metadata.distributions(path=site):
        installed.setdefault(_canonical(dist.metadata["Name"] or ""), dist)
    todo = [name for name, dist in installed.items()
            if name in SEEDS or dist.read_text("REQUESTED") is not None]  # fmt: skip
    needed: set[str] = set()
    while todo:
        name = todo.pop()
        if name in needed:
            continue
        needed.add(name)
        for requirement in installed[name].requires or []:
            if (required := _requirement_name(requirement)) in installed:
                todo.append(required)
    return sorted(set(installed) - needed)


def clobbered(site: list[str]) -> list[str]:
    """`name==version` of each distribution installed in `site` that misses a file its RECORD
    lists (byte-compiled files aside; the environment's own `SEEDS` left out). Two
    distributions may own one path: nvidia-cudnn-cu12 (torch 2.5.0's) and nvidia-cudnn-cu13
    (2.11.0's) both install nvidia/cudnn/lib/libcudnn.so.9, so uninstalling the first as a
    leftover took the second's library with it, and torch 2.11.0 no longer imported
    (measured in the long history; nccl the same)."""
    broken = []
    for dist in importlib.metadata.distributions(path=site):
        if _canonical(dist.metadata["Name"] or "") in SEEDS:  # the environment's, not a build's
            continue
        files = [f for f in _recorded(dist) if "__pycache__" not in f.parts]
        if any(not f.exists() for f in files):
            broken.append(f"{dist.metadata['Name']}=={dist.version}")
    return sorted(broken)


def _recorded(dist) -> list[Path]:
    """Every path the distribution's RECORD lists, read from RECORD itself: the
    importlib_metadata backport, when something has imported it, answers `files` for the
    whole process and leaves out the files that no longer exist (the very ones `clobbered`
    looks for)."""
    text = dist.read_text("RECORD") or ""
    return [Path(dist.locate_file(row[0])) for row in csv.reader(text.splitlines()) if row]


def _canonical(name: str) -> str:
    """A distribution's name as pip compares names (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(requirement: str) -> str:
    """The distribution a requirement (`nvidia-cublas-cu12==12.1.3.1; platform_system ==
    "Linux"`) names."""
    found = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    return _canonical(found.group(1)) if found else ""


def other_builds_caches(folder: Path, build: str) -> list[Path]:
    """The Inductor cache folders in `folder` (one machine's: benchmarks/artifacts.py) of
    builds other than `build`. A build's run empties its own caches before it compiles, so
    no run reads another build's."""
    if not folder.is_dir():
        return []
    return sorted(path for path in folder.iterdir() if path.is_dir() and path.name != build)


PATCHED = ("patched", "skipped")
"""What an install record's `patch` adds to the build's: the files tools/patch.py changed and
the diff's files it skipped (not in the wheel)."""


def _install(
    build: dict, folder: Path, diff: bytes | None = None
) -> tuple[str | None, dict, dict | None]:
    """Install `build` (a wheel to check is fetched into `folder`; a patch build's `diff`
    applied once its base is in place): (why the torch that imports is not the build asked
    for, or None; pip's report of what it installed, `_pip_install_reported`; what
    `IDENTITY_SCRIPT` reports of the torch that imports, None when none does)."""
    if error := _unpatched(build):
        return error, {}, None
    pip_args, error = _checked_pip_args(build, folder)
    if error:
        return error, {}, None
    error, wheels = _pip_install_reported(pip_args)
    if error:
        return error, wheels, None
    wheel = _asked_wheel(build, pip_args)
    found = _identity()
    if wheel and isinstance(found, dict) and _origin_problem(wheel, found):
        print(f"writeback: pip kept the torch already installed ({_origin(found)}); "
              f"reinstalling {wheel.describe()}")  # fmt: skip
        error, wheels = _pip_install_reported([wheel.where, "--force-reinstall", "--no-deps"])
        if error:
            return error, wheels, None
        found = _identity()
    if isinstance(found, str):
        return found, wheels, None
    remove_strays()
    problem = _version_problem(build, pip_args, found["identity"]["torch_version"])
    problem = problem or _import_problem(found) or (wheel and _origin_problem(wheel, found))
    if not problem and diff is not None and not found.get("patch"):
        return _patched(build, diff, found, wheels)
    return problem or _patch_problem(build, found) or None, wheels, found


def _unpatched(build: dict) -> str:
    """'' once the torch installed here, if any, carries no patch, or the very patch `build`
    applies as tools/patch.py left it (kept, as pip keeps a release); any other patched torch
    is uninstalled, since pip would keep it as the release of its version. Else pip's error."""
    try:
        site = Path(importlib.metadata.distribution("torch").locate_file(""))
    except importlib.metadata.PackageNotFoundError:
        return ""
    carried = patch.applied(site)
    if not carried:
        return ""
    if carried["diff_sha256"] == (build.get("patch") or {}).get("diff_sha256"):
        if not (altered := patch.altered(site)):
            print("writeback: the torch installed here carries this patch, as applied")
            return ""
        why = f"its patched files changed since ({', '.join(altered)})"
    else:
        why = f"it carries the patch {carried.get('name') or carried['diff_sha256']}"
    print(f"writeback: uninstalling the torch installed here first: {why}")
    return _pip("uninstall", ["--yes", "torch"])


def _patched(build: dict, diff: bytes, found: dict, wheels: dict) -> tuple:
    """`_install`'s answer once a patch build's `diff` is applied to the torch `found` imports
    (its base, installed and checked), and what imports then is checked again."""
    stored = build["patch"]["diff_sha256"]
    if (actual := patch.sha256(diff)) != stored:
        return (f"the ledger commit's {patch.DIFF_FILE} has sha256 {actual}, its build.json says "
                f"{stored}; rebuild the ledger (python -m tools.ledger)"), wheels, None  # fmt: skip
    try:
        done = patch.apply(diff, Path(found["installed"]).parents[1], build["name"],
                           build["patch"]["base"])  # fmt: skip
    except patch.PatchError as exc:
        return str(exc), wheels, None
    skipped = f"; skipped (not in the wheel): {', '.join(done.skipped)}" if done.skipped else ""
    print(f"writeback: {build['patch']['diff']} applied to {build['patch']['base']}: "
          f"{', '.join(done.patched)}{skipped}")  # fmt: skip
    again = _identity()
    if isinstance(again, str):
        return again, wheels, None
    return _patch_problem(build, again) or None, wheels, again


def _patch_problem(build: dict, found: dict) -> str:
    """'' when the torch that imports carries exactly the patch `build` asks for (none for a
    build of the timeline)."""
    asked = (build.get("patch") or {}).get("diff_sha256")
    carried = (found.get("patch") or {}).get("diff_sha256")
    if asked == carried:
        return ""
    wanted = f"with the diff {asked} applied" if asked else "as released"
    has = f"the diff {carried}" if carried else "no patch"
    return f"asked for torch {wanted}, but the torch that imports carries {has}"


def _named(wheel: dict, folder: str) -> dict:
    """pip's report of the torch wheel, where a wheel fetched into the temporary `folder` (gone
    once installed) is named by its file name; its sha256 says which file it was."""
    url = str(wheel.get("url") or "")
    fetched = url.startswith(Path(folder).as_uri() + "/")
    return {**wheel, "url": url.rsplit("/", 1)[-1]} if fetched else wheel


def _asked_wheel(build: dict, pip_args: list[str]) -> Wheel | None:
    """The torch wheel file `pip_args` install (the checked file of a `sha256=` line, a
    `wheel` line's file), or None (a requirement resolved from an index)."""
    if build.get("sha256"):
        return Wheel(pip_args[0], build["sha256"])
    if build["kind"] != "wheel":
        return None
    local = Path(pip_args[0])
    return Wheel(pip_args[0], _sha256(local) if local.is_file() else None)


def _asked_version(build: dict, pip_args: list[str]) -> str | None:
    """The torch version the build asks for: a wheel file's (from its name), else the first
    `torch==V` pin's; None for pip arguments that pin none."""
    if build["kind"] == "wheel" or build.get("sha256"):
        name = urllib.parse.unquote(pip_args[0].rstrip("/").rsplit("/", 1)[-1])
        return name.split("-")[1]
    pins = [a.partition("==")[2] for a in build["pip_args"] if a.startswith("torch==")]
    return pins[0] if pins else None


def _version_problem(build: dict, pip_args: list[str], installed: str) -> str:
    """'' when `installed` (torch.__version__) is the version asked for: in full when that
    names a local version (`+cpu`), else its public part."""
    asked = _asked_version(build, pip_args)
    compared = installed if asked is None or "+" in asked else installed.split("+")[0]
    if asked is None or compared == asked:
        return ""
    return f"asked for torch {asked}, but {installed} is installed"


def _import_problem(found: dict) -> str:
    """'' when `import torch` loads the files of the installed torch distribution."""
    if found["installed"] is None:
        return f"`import torch` imports {found['imported']}, but no torch distribution is installed"
    if found["imported"] != found["installed"]:
        return (f"`import torch` imports {found['imported']}, not the installed distribution's "
                f"{found['installed']}")  # fmt: skip
    return ""


def _origin_problem(wheel: Wheel, found: dict) -> str:
    """'' when the installed torch distribution records `wheel` as the file it came from."""
    direct = found["direct_url"] or {}
    if wheel.sha256 is not None:
        same = _direct_sha256(direct) == wheel.sha256
    else:
        same = _url(str(direct.get("url", ""))) == _url(wheel.where)
    if same:
        return ""
    return (f"asked for the torch wheel {wheel.describe()}, but the torch installed came from "
            f"{_origin(found)}")  # fmt: skip


def _origin(found: dict) -> str:
    """The file the installed torch distribution records it came from."""
    direct = found["direct_url"]
    if not direct:
        return "an index (its distribution records no wheel file: no direct_url.json)"
    name = urllib.parse.unquote(str(direct.get("url", "")).rsplit("/", 1)[-1])
    sha256 = _direct_sha256(direct)
    return f"{name} (sha256 {sha256})" if sha256 else name


def _url(text: str) -> str:
    """A URL as compared: unquoted, without its fragment (`#sha256=...`)."""
    return urllib.parse.unquote(urllib.parse.urldefrag(text).url)


def _direct_sha256(direct: dict) -> str | None:
    """The sha256 pip's direct_url.json records of the archive it installed from."""
    info = direct.get("archive_info") or {}
    if sha256 := (info.get("hashes") or {}).get("sha256"):
        return sha256
    algorithm, _, digest = str(info.get("hash") or "").partition("=")
    return digest if algorithm == "sha256" else None


def _checked_pip_args(build: dict, folder: Path) -> tuple[list[str], str | None]:
    """The pip arguments that install `build`, and why not (None when nothing is wrong).
    Without `sha256` they are the ledger's; with it, the torch wheel is fetched into `folder`,
    checked, and the arguments install that file (its index options kept for the
    dependencies)."""
    args = list(build["pip_args"])
    expected = build.get("sha256")
    if not expected:
        return args, None
    wheel = _fetched_wheel(args, folder)
    if isinstance(wheel, str):
        return args, wheel
    actual = _sha256(wheel)
    if actual != expected:
        return args, (
            f"sha256 mismatch for {wheel.name}: the builds file says {expected}, "
            f"the wheel is {actual}; nothing was installed"
        )
    print(f"writeback: {wheel.name} has the sha256 the builds file names")
    return [str(wheel), *args[1:]], None


def _fetched_wheel(pip_args: list[str], folder: Path) -> Path | str:
    """The torch wheel `pip_args` name: a local wheel file as it lies, anything else downloaded
    alone (no dependencies) into `folder`; or why it could not be fetched."""
    if pip_args[0].endswith(".whl") and Path(pip_args[0]).is_file():
        return Path(pip_args[0])
    error = _pip("download", ["--no-deps", "--dest", str(folder), *pip_args])
    if error:
        return error
    wheels = sorted(folder.glob("*.whl"))
    if len(wheels) != 1:
        names = ", ".join(w.name for w in wheels) or "nothing"
        return f"pip download of {pip_args[0]} gave {names}, not one wheel to check"
    return wheels[0]


def _sha256(path: Path) -> str:
    with path.open("rb") as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()


def _pip_install_reported(pip_args: list[str]) -> tuple[str | None, dict]:
    """Run pip with `--report`; return (error or None, {package: {"version", "url", "sha256"}}
    for what it installed). A package already installed is not in the report."""
    with tempfile.TemporaryDirectory(prefix="writeback-pip-") as tmp:
        report = Path(tmp) / "report.json"
        # pip byte-compiles what it installs in one process (12 of the 18 s a CPU build took);
        # compileall does the same on every core afterwards
        error = _pip("install", [*pip_args, "--no-compile", "--report", str(report)]) or None
        if not error and (problem := _byte_compile()):  # as pip, a file that fails is no error
            print(f"writeback: {problem} (imports compile those files themselves)",
                  file=sys.stderr)  # fmt: skip
        items = json.loads(report.read_text()).get("install", []) if report.is_file() else []
    wheels = {}
    for item in items:
        info = item.get("download_info") or {}
        hashes = (info.get("archive_info") or {}).get("hashes") or {}
        name = (item.get("metadata") or {}).get("name", "").lower()
        wheels[name] = {"version": (item.get("metadata") or {}).get("version"),
                        "url": info.get("url"), "sha256": hashes.get("sha256")}  # fmt: skip
    return error, wheels


def _earlier(path: Path) -> dict:
    """The install record at `path` ({} when there is none); a ValueError naming the file and
    the fix when it cannot be read."""
    if not path.exists():
        return {}
    try:
        earlier = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        problem = f"cannot be read ({exc})"
    else:
        if isinstance(earlier, dict):
            return earlier
        problem = "is not an install record"
    raise ValueError(
        f"the install record {path} {problem}; it was left as it is. Restore it (`git "
        f"checkout -- {path}` if it is committed) or remove it, then run again."
    )


def _kept(earlier: dict, identity: dict | None) -> dict:
    """What an earlier install of this same torch recorded and a reinstall that installs
    nothing (asv reinstalls a build to discover benchmarks, say) must not lose: the wheel that
    was proven, how long the real install took (not the seconds of a no-op), and what it
    removed of earlier builds."""
    if not identity or earlier.get("torch_version") != identity.get("torch_version"):
        return {}
    return {
        k: earlier[k] for k in ("torch_wheel", "install_seconds", "leftovers") if earlier.get(k)
    }


def _same_install(earlier: dict, record: dict) -> bool:
    """Whether `record` says what `earlier` says, apart from the time it took (`TIME_FIELDS`)."""
    drop = set(TIME_FIELDS)
    return bool(earlier) and {k: v for k, v in earlier.items() if k not in drop} == {
        k: v for k, v in record.items() if k not in drop
    }


def _python(project: Path) -> str:
    """This environment's python, without the machine's paths: relative to the project (asv's
    environments are in it: `.asv/env/<hash>/bin/python`), else to its environment's parent."""
    python = Path(os.path.abspath(sys.executable))
    for base in (project, Path(os.path.abspath(sys.prefix)).parent):
        if python.is_relative_to(base):
            return python.relative_to(base).as_posix()
    return python.name


def _byte_compile() -> str:
    """What pip would have compiled, compiled on every core; '' or what did not compile."""
    folder = sysconfig.get_paths()["purelib"]
    result = subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "-j", "0", folder],
        capture_output=True,
        text=True,
        cwd=ENV_DIR,
    )
    if result.returncode == 0:
        return ""
    return f"byte-compiling {folder} failed: {_last_line(result.stdout + result.stderr)}"


def _pip(command: str, pip_args: list[str]) -> str:
    """Run `pip COMMAND`; return '' on success, else the last line pip printed as an error."""
    env = {**os.environ, **disk.PIP_ENV, "PIP_CONSTRAINT": "/dev/null",
           "PIP_DISABLE_PIP_VERSION_CHECK": "1"}  # fmt: skip
    quiet = ["--progress-bar", "off"] if command != "uninstall" else []
    result = subprocess.run(
        [sys.executable, "-m", "pip", command, *quiet, *pip_args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ENV_DIR,
    )
    if result.returncode == 0:
        return ""
    lines = [line.strip() for line in result.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR")] or lines or ["(no output)"]
    return f"pip exited {result.returncode}: {errors[-1]}"


def _identity() -> dict | str:
    """What `IDENTITY_SCRIPT` reports of the torch that imports, or why it does not import."""
    result = subprocess.run(
        [sys.executable, "-c", IDENTITY_SCRIPT, PATCH_RECORD],
        capture_output=True,
        text=True,
        cwd=ENV_DIR,
    )
    if result.returncode != 0:
        return f"installed, but `import torch` fails: {_last_line(result.stderr)}"
    return json.loads(result.stdout.strip().splitlines()[-1])


def _head(build_dir: Path) -> str:
    result = subprocess.run(
        ["git", "-C", str(build_dir), "rev-parse", "HEAD"], capture_output=True, text=True
    )
    return result.stdout.strip() or "unknown"


def _save(path: Path, record: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    tmp.replace(path)


if __name__ == "__main__":
    sys.exit(main())
