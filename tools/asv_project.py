"""asv, with this project's machine identity: use it wherever you would type `asv`.

    .venv/bin/python -m tools.asv_project run|find|publish|preview|... [asv's arguments]

What it adds to asv (everything else is asv's own command line):
- asv's machine file lives in the project (`.asv/asv-machine.json`), not in `~`;
- the machine is named after this host's CPU and vector ISA (`benchmarks/machine.py`), not the
  host name alone, unless `--machine` or `WRITEBACK_MACHINE` names it; its entry records the
  hardware (asv's fields plus the CPU id, vector flags and ISA), so every `machine.json` in
  results/ says what it was measured on; a `machine.json` that already describes this machine
  is kept byte for byte (its kernel version and RAM stay as first recorded);
- before `run`, `find` or `continuous`, results already filed under that machine name must have
  been measured on this CPU: otherwise it stops and says so (results of another CPU are never
  taken as this machine's);
- the final name is exported to what asv runs (`WRITEBACK_MACHINE_NAME`), so the records kept
  beside asv's results are filed under the same machine as asv's own;
- asv's `branches` are asv.conf.json's plus every patch build's ledger branch
  (`patch/main/NAME`, tools/ledger.py), so asv graphs each patch as a branch that leaves the
  timeline at its base (a tagged commit on no branch asv would draw on the timeline's graph);
- `run --reuse-discovery` (what `make history` passes) takes the benchmark list from the
  results folder's `benchmarks.json` instead of discovering it again (a process importing torch
  and every benchmark module, seconds each run) when nothing discovery depends on changed
  since asv wrote that file: every file under the benchmark directory, asv's configuration,
  the commits (the first is the build discovery imports) and what pip installed for them, the
  `WRITEBACK_*` and `ATEN_*` variables, Python and asv. Anything else, or a first run,
  discovers as asv does and remembers what it discovered from (`.asv/discovery.json`).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path

from benchmarks import machine as host  # standard library only
from tools import ledger as ledger_repo

ROOT = Path(__file__).resolve().parents[1]

MACHINE_FILE = ROOT / ".asv" / "asv-machine.json"
MEASURING = ("run", "find", "continuous", "profile")
REUSE_DISCOVERY = "--reuse-discovery"


class WrongMachine(RuntimeError):
    """This machine cannot be measured under its name: results filed under it were measured on
    another CPU, their machine.json cannot be read, or the name is not a folder's name."""


def machine_file(root: Path = ROOT) -> Path:
    return root / ".asv" / "asv-machine.json"


def register(name: str, root: Path = ROOT, results: Path | None = None) -> dict:
    """Write (or refresh) this host's entry `name` in the project's asv machine file, which
    asv copies into `results/<name>/machine.json` when it runs. Where that file already
    describes this machine (`IDENTITY` the same), the entry is its content, so that asv writes
    it again byte for byte: what changes without changing the machine (`os`, the kernel
    version; `ram`) stays as first recorded there."""
    info = {**host.machine_info(), "machine": name}
    recorded = _recorded_machine(results / name / "machine.json") if results else {}
    if recorded and all(recorded.get(key) == info[key] for key in IDENTITY):
        info = {key: value for key, value in recorded.items() if key != "version"}
    path = machine_file(root)
    known = json.loads(path.read_text()) if path.is_file() else {"version": 1}
    known[name] = info
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(known, indent=4, sort_keys=True) + "\n")
    return info


IDENTITY = ("machine", "arch", "cpu", "cpu_id", "vector_flags", "isa", "isa_forced", "num_cpu")
"""The fields of a machine.json that say which machine measured (what the numbers depend
on); its other fields (`os`, `ram`) are incidental."""


def _recorded_machine(path: Path) -> dict:
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise WrongMachine(
            f"{path} cannot be read ({exc}); it was left as it is. Restore it "
            f"(`git checkout -- {path}` if it is committed), or remove it if its folder holds "
            "no results, then run again."
        ) from None


def identity_problem(results_dir: Path, name: str) -> str | None:
    """Why results/<name>/ cannot be this host's results, or None (no results yet, or ours)."""
    recorded = results_dir / name / "machine.json"
    if not recorded.is_file():
        return None
    if not any(p.name != "machine.json" for p in (results_dir / name).glob("*.json")):
        return None
    why = host.mismatch(_recorded_machine(recorded))
    if why is None:
        return None
    return (
        f"results/{name}/ holds results that are not this machine's: {why}. Measuring here "
        f"would mix two CPUs under one name. Name this machine differently "
        f"(WRITEBACK_MACHINE=... make history), or move results/{name}/ away if it is yours."
    )


def prepare(name: str | None, results_dir: Path, root: Path = ROOT, measuring: bool = True) -> str:
    """Name, register and check the machine; export it for asv's children. Returns the name."""
    try:
        name = host.checked_name(name, "--machine") if name else host.machine_name()
    except host.MachineNameError as exc:
        raise WrongMachine(str(exc)) from None
    if measuring and (problem := identity_problem(results_dir, name)):
        raise WrongMachine(problem)
    register(name, root, results_dir)
    os.environ[host.RESOLVED_ENV] = name
    return name


_ASV_DEFAULTS = {"results_dir": "results", "env_dir": "env", "benchmark_dir": "benchmarks"}
"""asv's own defaults for the folders its configuration names."""


def configured(key: str, config: Path | None = None) -> Path:
    """A folder asv's configuration (`config`, else this checkout's asv.conf.json) names:
    `results_dir`, `env_dir` or `benchmark_dir`, relative to the configuration's folder as asv
    reads it, with asv's defaults."""
    path = Path(config).resolve() if config else ROOT / "asv.conf.json"
    conf = json.loads(path.read_text())
    return path.parent / conf.get(key, _ASV_DEFAULTS[key])


def results_dir(argv: list[str]) -> Path:
    """The results folder of the asv configuration the arguments name (`--config`)."""
    return configured("results_dir", _option(argv, "--config"))


def _option(argv: list[str], option: str) -> str | None:
    for index, arg in enumerate(argv):
        if arg == option and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith(f"{option}="):
            return arg.split("=", 1)[1]
    return None


def _command(argv: list[str]) -> str:
    """asv's subcommand in `argv` (`--config PATH` may come before it)."""
    skip_next = False
    for arg in argv:
        if skip_next:
            skip_next = False
        elif arg == "--config":
            skip_next = True
        elif not arg.startswith("-"):
            return arg
    return ""


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    reuse = REUSE_DISCOVERY in argv
    argv = [arg for arg in argv if arg != REUSE_DISCOVERY]
    command = _command(argv)
    if command == "machine":
        print("writeback: the machine is registered by this wrapper itself "
              f"({MACHINE_FILE.relative_to(ROOT)}); nothing to do.")  # fmt: skip
        return 0
    named = _option(argv, "--machine")
    try:
        name = prepare(named, results_dir(argv), measuring=command in MEASURING)
    except WrongMachine as exc:
        print(f"writeback: {exc}", file=sys.stderr)
        return 2
    if command in MEASURING and named is None:
        argv[argv.index(command) + 1 : argv.index(command) + 1] = ["--machine", name]
    if reuse and command == "run":
        _reuse_discovery(argv, name)
    return run_asv(argv)


def run_asv(argv: list[str], root: Path = ROOT) -> int:
    """asv's own main, with the machine file in the project and the patch branches."""
    from asv import main as asv_main
    from asv.machine import MachineCollection

    MachineCollection.get_machine_file_path = staticmethod(lambda: str(machine_file(root)))
    _graph_patch_branches()
    _loud_setup_cache_failures("--show-stderr" in argv or "-e" in argv, root / ".asv" / "logs")
    sys.argv = ["asv", *argv]
    try:
        asv_main.main()
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return 0


SETUP_CACHE_LINES = 30
"""How much of a failed setup_cache's output is printed (its end, where the error is); the
whole of it is kept in a file the message names."""


def _loud_setup_cache_failures(shown_by_asv: bool, logs: Path) -> None:
    """Print why a setup_cache failed, which asv prints only with `--show-stderr`: a scenario's
    expected states are skips its own setup_cache records, so a setup_cache that fails is
    never expected, and its skipped benchmarks alone ("skipped (setup_cache failed)") do not
    say why (asv keeps no output in its results). The whole output goes to a file in `logs`
    (a crashed probe worker's stack or a compiler's error can lie above the printed end).
    Once a process."""
    from asv import runner
    from asv.console import log

    create = runner.Spawner.create_setup_cache
    if getattr(create, "loud", False) or shown_by_asv:
        return

    def loud(self, benchmark_id, timeout, params_str):
        cache_dir, output = create(self, benchmark_id, timeout, params_str)
        if cache_dir is None:
            text = output or "(no output)"
            kept = _keep_setup_cache_output(logs, benchmark_id, self.env.name, text)
            lines = text.splitlines()[-SETUP_CACHE_LINES:]
            log.error(f"writeback: setup_cache of {benchmark_id} failed; the end of its "
                      f"output (the whole of it: {kept}):\n" + "\n".join(lines))  # fmt: skip
        return cache_dir, output

    loud.loud = True
    runner.Spawner.create_setup_cache = loud


def _keep_setup_cache_output(logs: Path, benchmark_id: str, env_name: str, output: str) -> str:
    """Write a failed setup_cache's whole output to a new file in `logs`; its path, or why
    it could not be written."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    path = logs / f"setup_cache-{benchmark_id}-{env_name}-{stamp}-{os.getpid()}.log"
    try:
        logs.mkdir(parents=True, exist_ok=True)
        path.write_text(output)
    except OSError as exc:
        return f"not kept: {exc}"
    return str(path)


def with_patch_branches(conf):
    """asv's configuration `conf` with every patch build's branch of its ledger (`conf.repo`,
    relative to where asv runs, as asv reads it) added to its `branches`."""
    found = ledger_repo.patch_branches(Path(conf.repo))
    conf.branches = [*conf.branches, *(name for name in found if name not in conf.branches)]
    return conf


def _graph_patch_branches() -> None:
    """Make every configuration asv loads `with_patch_branches` (once a process)."""
    from asv.config import Config

    if getattr(Config.from_json, "with_patch_branches", False):
        return
    from_json = Config.from_json.__func__

    def extended(cls, d):
        return with_patch_branches(from_json(cls, d))

    extended.with_patch_branches = True
    Config.from_json = classmethod(extended)


def discovery_inputs(argv: list[str], machine: str) -> str | None:
    """A digest of everything asv's benchmark discovery for `run argv` depends on; None when
    the commits are not named by a HASHFILE (a range's commits move with the ledger)."""
    hashfile = next((Path(a[9:]) for a in argv if a.startswith("HASHFILE:")), None)
    if hashfile is None or not hashfile.is_file():
        return None
    from asv import __version__ as asv_version

    config = Path(_option(argv, "--config") or ROOT / "asv.conf.json").resolve()
    bench = configured("benchmark_dir", config)
    commits = hashfile.read_text()
    digest = hashlib.sha256(config.read_bytes())
    for path in sorted(bench.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(f"\0{path.relative_to(bench)}\0".encode() + path.read_bytes())
    variables = sorted(
        (k, v) for k, v in os.environ.items() if k.startswith(("WRITEBACK_", "ATEN_"))
    )
    digest.update(json.dumps([commits, argv, variables, sys.version, asv_version]).encode())
    records = results_dir(argv) / "builds" / machine
    for commit in commits.split():  # what was installed for each (a local wheel may change)
        record = records / f"{commit}.json"
        if record.is_file():
            installed = json.loads(record.read_text())
            keys = ("torch_version", "torch_git_version", "torch_wheel", "clients_error")
            digest.update(json.dumps([installed.get(k) for k in keys]).encode())
    return digest.hexdigest()


def _reuse_discovery(argv: list[str], machine: str) -> None:
    """Make asv's discovery read the results folder's benchmarks.json when a discovery from
    the same inputs wrote it; otherwise discover as asv does and remember the inputs."""
    from asv.benchmarks import Benchmarks
    from asv.console import log

    inputs = discovery_inputs(argv, machine)
    if inputs is None:
        return
    key = str(results_dir(argv))
    listing, memo = Path(key) / "benchmarks.json", ROOT / ".asv" / "discovery.json"
    known = json.loads(memo.read_text()) if memo.is_file() else {}
    if listing.is_file() and known.get(key) == [inputs, _sha256(listing)]:

        def discover(cls, conf, repo, environments, commit_hash, regex=None, check=False):
            shown = listing.relative_to(ROOT) if listing.is_relative_to(ROOT) else listing
            log.info(f"Discovering benchmarks: none of its inputs changed since it wrote "
                     f"{shown}, so that is the list")  # fmt: skip
            return cls.load(conf, regex=regex)

    else:
        asv_discover = Benchmarks.discover.__func__

        def discover(cls, conf, repo, environments, commit_hash, regex=None, check=False):
            found = asv_discover(cls, conf, repo, environments, commit_hash, regex, check)
            found.save()
            known[key] = [inputs, _sha256(listing)]
            memo.write_text(json.dumps(known, indent=1) + "\n")
            return found

    Benchmarks.discover = classmethod(discover)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


if __name__ == "__main__":
    sys.exit(main())
