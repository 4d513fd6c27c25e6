"""Install one ledger commit's torch build into the asv environment running this script.

asv runs it as the install command (asv.conf.json) with the environment's own python, from the
project's folder (`in-dir={conf_dir}`, so that `tools` and `benchmarks` import as packages):

    python -m tools.install_build --build-dir {build_dir} --results {conf_dir}/results

It pip-installs the build that the checked-out `build.json` names (then the client libraries
in CLIENTS, never over torch), imports it in a fresh
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

pip runs with PIP_CONSTRAINT=/dev/null: a build's pin is exact, and a machine-wide
constraint file (such as one capping torch) would only make the pin fail.
Standard library only: it runs in the benchmark environment, which holds nothing else.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import platform
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from benchmarks.machine import machine_name  # standard library only

# Client libraries some scenarios import, installed after torch. tensordict goes in without
# its dependencies (it depends on torch, and pip must never swap the torch under test); its
# other dependencies do not touch torch. A client that fails to install is recorded, not
# fatal: its scenario skips with the reason on that build.
CLIENTS = (
    ("--no-deps", "tensordict==0.15.3"),
    ("numpy==2.4.6", "cloudpickle==3.1.3", "pyvers==0.2.3"),
)

# pip and the identity check run in the environment's own folder (asv starts this script in the
# project's): no folder of the project (site/, expected/, ...) can shadow a module they import.
ENV_DIR = sys.prefix

IDENTITY_SCRIPT = (
    "import json, torch; print(json.dumps({'torch_version': str(torch.__version__), "
    "'torch_git_version': str(getattr(torch.version, 'git_version', 'unknown')), "
    "'cuda': torch.version.cuda}))"
)


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
    record = {
        **build,
        "ledger_commit": commit,
        "machine": machine,
        "host": platform.node(),
        "python": sys.executable,
        "attempted_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }
    print(f"writeback: installing {build['name']}: pip install {' '.join(build['pip_args'])}")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="writeback-wheel-") as folder:
        pip_args, error = _checked_pip_args(build, Path(folder))
        error, wheels = (error, {}) if error else _pip_install_reported(pip_args)
    identity = None if error else _identity()
    if isinstance(identity, str):
        error, identity = identity, None
    if identity and build["kind"] == "release":
        installed = identity["torch_version"].split("+")[0]
        if installed != build["spec"]:
            error = f"asked for torch {build['spec']}, but {identity['torch_version']} is installed"
    record.update(identity or {})
    path = args.results / "builds" / machine / f"{commit}.json"
    kept = {} if wheels.get("torch") else _kept(path, identity)  # pip installed no torch now
    wheel = wheels.get("torch") or kept.get("torch_wheel")
    record.update(installed=error is None, error=error, torch_wheel=wheel)
    if error is None:
        client_errors = [e for e in (_pip("install", list(args)) for args in CLIENTS) if e]
        record["clients_error"] = "; ".join(client_errors) or None
        for problem in client_errors:
            print(f"writeback: a client library did not install (its scenario will skip): "
                  f"{problem}", file=sys.stderr)  # fmt: skip
    # the report's time table: the install that put this torch here, not a later no-op
    record["install_seconds"] = kept.get("install_seconds") or round(time.monotonic() - started, 1)
    _save(path, record)
    if error:
        print(f"writeback: build {build['name']} did not install: {error}", file=sys.stderr)
        return 1
    print(
        f"writeback: {build['name']} is torch {identity['torch_version']} "
        f"(commit {identity['torch_git_version']})"
    )
    return 0


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


def _kept(path: Path, identity: dict | None) -> dict:
    """What an earlier install of this same torch recorded and a reinstall that installs
    nothing (asv reinstalls a build to discover benchmarks, say) must not lose: the wheel that
    was proven, and how long the real install took (not the seconds of a no-op)."""
    if not path.is_file() or not identity:
        return {}
    earlier = json.loads(path.read_text())
    if earlier.get("torch_version") != identity.get("torch_version"):
        return {}
    return {k: earlier[k] for k in ("torch_wheel", "install_seconds") if earlier.get(k)}


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
    lines = [line.strip() for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    return f"byte-compiling {folder} failed: {(lines or ['(no output)'])[-1]}"


def _pip(command: str, pip_args: list[str]) -> str:
    """Run `pip COMMAND`; return '' on success, else the last line pip printed as an error."""
    env = {**os.environ, "PIP_CONSTRAINT": "/dev/null", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "pip", command, "--progress-bar", "off", *pip_args],
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
    result = subprocess.run(
        [sys.executable, "-c", IDENTITY_SCRIPT], capture_output=True, text=True, cwd=ENV_DIR
    )
    if result.returncode != 0:
        lines = [line for line in result.stderr.splitlines() if line.strip()] or ["(no output)"]
        return f"installed, but `import torch` fails: {lines[-1].strip()}"
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
