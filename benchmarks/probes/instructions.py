"""Instructions executed by one warm call of a compiled control, counted by valgrind's callgrind.

Deterministic where wall time is not: the count repeats to within a few hundredths of a
percent on one build, whatever else the machine is doing. Starting valgrind and importing
torch and Inductor under it takes 20-30 s of a core, so it is done once a build: a *zygote*
(`Zygote`) imports them under valgrind and then forks one child per scenario, which loads
the wrappers Inductor already generated (their kernels come from Inductor's cache, nothing is
compiled under valgrind), counts every (control, n) of the scenario and switches collection
on only around the measured calls (`torch._C._valgrind_toggle`, what torch's own Timer uses).
Under asv the forkserver starts the build's zygote as it imports the suite
(`serve_build`, while the first setup_cache compiles), and every setup_cache of the build
hands its cases to it; anywhere else a probe starts its own (`started`), which imports while
the controls compile. A count depends on what else its process did (splitting a scenario's
cases over two processes moved some by thousands of instructions a call; importing Inductor
before the cases or with the first wrapper, by about 200 at N=3): every child starts from the
zygote's state and does the same steps in the same order, for every scenario and build, which
ever process started the zygote and whatever it counted before.

Instrumenting costs most of the time under callgrind, so where valgrind's headers are
installed (valgrind's own package ships /usr/include/valgrind/callgrind.h) the zygote starts
uninstrumented (`--instr-atstart=no`) and switches instrumentation on through a tiny helper
built with the C compiler Inductor needs anyway; that halves the run. Without the header,
everything runs instrumented: slower, same counts.

What is counted is the generated wrapper's `call` - the compiled graph's entrypoint, its
kernels and allocations - for `CALLS` warm calls, divided by `CALLS`. Dynamo's guards and
the Python frame around it are not in the count; they are in `time_warm_call`.

The child checks what it counts: the C++ inside the wrapper it loads must be the kernels.cpp
kept beside it, and the scenario's contract must hold (inputs, their views, their storage)
for the first call and for one call on fresh inputs after the counted ones, with the case
rebuilt from the scenario's module. The returns are not checked there: outputs that alias
inputs are rebuilt outside the wrapper, by the runtime around it. A failed check fails the
count (`CountedCodeBroken`) instead of giving a number.

Python's string hashing is seeded per process, and the dict lookups on the call's path
follow the seed: with a random seed a count at N=3 moved by 0.22% between two processes here, with
a fixed one (`PYTHONHASHSEED=0` in the zygote) it repeats to the instruction.

Whoever reaches the zygote has it load and run Python as the user who started it, so only
that user can: its socket is a file in a folder of that user's that no one else may enter
(`_private_folder`), and the zygote closes any connection from another user before reading a
byte of it (`_same_user`).

Run as a module, it is the zygote that valgrind runs (`_serve`: the listening socket's file
descriptor, its folder and the instrumentation switch come as arguments):
    valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file=<folder>/callgrind.out.%p \
        python -m benchmarks.probes.instructions <fd> <folder> <switch> <parent pid>
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import importlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
import traceback
import types
from dataclasses import dataclass
from pathlib import Path

from .. import artifacts
from ..compat import Unsupported, vector_isa
from ..contract import Case, check
from ..scenario import Scenario
from .generated_code import save_code

CALLS = 50
_TOTAL = re.compile(r"^(?:summary|totals):\s+(\d+)", re.M)
_REPORT = "report.json"
_CHILD_PID = "child.pid"
_LONGEST_FOLDER = 107 - 1 - 29  # a socket path's bytes, "/", the longest socket file name


class CountedCodeBroken(RuntimeError):
    """The code the child counted is not the kept code, or broke the scenario's contract."""


@dataclass
class Counts:
    """Instructions per warm call by case key, and why each case that failed its checks did."""

    instructions: dict[str, int]
    broken: dict[str, str]


def valgrind_problem(isa: str | None = None) -> str | None:
    """Why callgrind cannot count code generated for `isa` here, or None when it can.

    valgrind cannot run AVX512 and hides it from the programs it runs (measured: inside it,
    Inductor's `pick_vec_isa` says avx2), so code generated for avx512 would be rebuilt for
    avx2 there and move half of each tensor: not the code that runs natively. Such a machine
    counts nothing; its avx2 twin (`WRITEBACK_ISA=avx2`) counts the code it runs."""
    if shutil.which("valgrind") is None:
        return "valgrind not found: install it (Debian/Ubuntu: apt-get install valgrind)"
    if isa and isa.startswith("avx512"):
        return ("valgrind cannot run AVX512 code (it hides AVX512 from the program, so the "
                "kernels would be rebuilt for avx2): count on this host's avx2 machine, "
                "`make history ISA=avx2`")  # fmt: skip
    return None


def case_spec(key: str, scenario, row: dict, isa: str) -> dict:
    """What the child needs to load, check and count the kept code of one probe row."""
    return {
        "key": key,
        "code_dir": row["code_dir"],
        "isa": isa,  # the vector ISA the kept code was generated for
        "module": scenario.control(row["control"]).fn.__module__,  # defines the scenario
        "scenario": scenario.name,
        "control": row["control"],
        "n": row["n"],
        "input_order": row["input_order"],  # the wrapper's, which is not the call's
    }


def count(cases: list[dict], timeout: float = 1800) -> Counts:
    """Instructions per warm call for each case (`case_spec`), in one valgrind process; a case
    whose code fails the child's checks is in `broken` instead, with the reason.

    Raises RuntimeError with valgrind's last words when the run fails.
    """
    with started() as counter:
        return counter.count(cases, timeout)


@contextlib.contextmanager
def started():
    """A counter for this process's build, ready before its cases are known: the zygote
    asv's forkserver started for the build (`serve_build`), or else one started now, which
    imports torch and Inductor under valgrind while the probe compiles. `.count(cases)` has
    a fork of it count them. A zygote started here is stopped on exit."""
    shared = Zygote.shared()
    if shared is not None:
        yield shared
        return
    with tempfile.TemporaryDirectory(prefix="writeback-callgrind-") as tmp:
        zygote = Zygote.launch(Path(tmp))
        try:
            yield zygote
        finally:
            zygote.stop()


def serve_build() -> Zygote | None:
    """Start this build's zygote, for every setup_cache of the build to count with (asv's
    forkserver calls this as it imports the suite). It imports torch and Inductor under
    valgrind once a build, not once a costed scenario, and stops when its parent does. None
    where nothing will be counted (valgrind missing or unable to run this ISA's code,
    `WRITEBACK_INSTRUCTIONS=0`) or the address stays taken (setups then start their own)."""
    if os.environ.get("WRITEBACK_INSTRUCTIONS", "1") == "0":
        return None
    try:
        if valgrind_problem(vector_isa()):
            return None
    except Unsupported:
        return None  # no compiler for Inductor: nothing compiles, nothing to count
    folder = _shared_folder()
    for _ in range(50):  # the zygote of this build's previous forkserver leaves within 1 s
        try:
            return Zygote.launch(folder, address=_address(folder), fresh_folder=True, niceness=19)
        except PermissionError:
            return None  # said by each setup's own launch, which meets it too
        except OSError:
            time.sleep(0.1)
    return None


class Zygote:
    """A process under valgrind that imported torch and Inductor's wrapper modules, then forks
    one child per hand-over (a socket connection naming a spec file) to load, check and count
    its cases (`_count_spec`). Every count starts from the same state - the zygote's, which
    never runs a case - so a scenario's counts do not depend on which scenarios were counted
    before it, nor on whether the zygote was started by asv's forkserver or by the probe."""

    def __init__(self, folder: Path, address: str, popen=None, stderr=None):
        self.folder, self.address, self._popen, self._stderr = folder, address, popen, stderr
        self.started_by = "this build's forkserver" if popen is None else f"process {os.getpid()}"

    @classmethod
    def launch(cls, folder: Path, *, address: str | None = None, prefix: list[str] | None = None,
               fresh_folder: bool = False, niceness: int = 0) -> Zygote:  # fmt: skip
        """Start a zygote in `folder` under `prefix` (default: callgrind's command; empty runs
        it natively, where the collection toggles do nothing). It listens on `address` (a
        socket file in `_private_folder`; default: a new one there) from the start: a hand-over
        made while it imports waits for it. `niceness`: its scheduling niceness and its
        children's (`_lower_priority`), so that it takes mostly the time the cores would
        otherwise leave idle. OSError when a zygote listens on the address."""
        address = address or str(_private_folder() / f"{os.getpid()}-{secrets.token_hex(6)}.sock")
        listener = _listening(address)
        try:
            if fresh_folder:
                shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True, exist_ok=True)
            helper = _client_helper(folder)
            if prefix is None:
                prefix = [
                    "valgrind", "--tool=callgrind", "--collect-atstart=no",
                    f"--callgrind-out-file={folder / 'callgrind.out.%p'}",
                    f"--instr-atstart={'no' if helper else 'yes'}",
                ]  # fmt: skip
            root = Path(__file__).resolve().parents[2]
            env = {key: value for key, value in os.environ.items()
                   if key != "TORCHINDUCTOR_CACHE_DIR"}  # fmt: skip  # each count names its own
            env["PYTHONPATH"] = f"{root}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"
            env["PYTHONHASHSEED"] = "0"
            stderr = open(folder / "stderr.txt", "w+")  # noqa: SIM115 - closed in stop()
            command = [sys.executable, "-m", "benchmarks.probes.instructions"]
            popen = subprocess.Popen(
                [*prefix, *command, str(listener.fileno()), str(folder), helper or "",
                 str(os.getpid())],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr,
                pass_fds=(listener.fileno(),), env=env, cwd=folder,
                preexec_fn=(lambda: _lower_priority(niceness)) if niceness else None,
            )  # fmt: skip
        finally:
            listener.close()  # the zygote holds it now: it goes when the zygote does
        return cls(folder, address, popen, stderr)

    @classmethod
    def shared(cls) -> Zygote | None:
        """The zygote asv's forkserver started for this build (`serve_build`), if it runs."""
        folder = _shared_folder()
        address = _address(folder)
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                probe.connect(address)  # an empty hand-over: it forks nothing for it
        except OSError:
            return None
        return cls(folder, address)

    def count(self, cases: list[dict], timeout: float = 1800) -> Counts:
        """The counts of `cases` (see `count`)."""
        if not cases:
            return Counts({}, {})
        report = self.report(cases, timeout)
        here = _identity()
        if report["identity"] != here:
            raise RuntimeError(
                f"the callgrind zygote at {self.folder} runs {report['identity']}, this probe "
                f"{here}: its counts would not be this build's"
            )
        totals = {}
        dumps = [
            Path(f"{report['dumps']}.{index}") for index in range(1, len(report["counted"]) + 1)
        ]
        for key, dump in zip(report["counted"], dumps):
            match = _TOTAL.search(dump.read_text()) if dump.is_file() else None
            if match is None:
                raise RuntimeError(f"callgrind wrote no totals for case {key} ({dump})")
            totals[key] = int(match.group(1))
        for dump in [*dumps, Path(report["dumps"])]:
            dump.unlink(missing_ok=True)
        broken = report["broken"]
        counted = {key: round(total / CALLS) for key, total in totals.items() if key not in broken}
        return Counts(counted, broken)

    def report(self, cases: list[dict], timeout: float) -> dict:
        """Hand the cases to a fork of the zygote and return its report: {"counted": keys in
        the order of their dumps, "broken": {key: why}, "dumps": the dump files' prefix,
        "identity": the torch and Python it ran}. RuntimeError when it gave none."""
        with tempfile.TemporaryDirectory(prefix="writeback-count-") as tmp:
            spec, report = Path(tmp) / "spec.json", Path(tmp) / _REPORT
            spec.write_text(json.dumps({
                "calls": CALLS, "cases": cases, "report": str(report),
                "inductor_cache": os.environ.get("TORCHINDUCTOR_CACHE_DIR"),
            }))  # fmt: skip
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
                    connection.connect(self.address)
                    connection.settimeout(timeout)
                    connection.sendall(f"{spec}\n".encode())
                    while connection.recv(4096):  # the child closes it when it leaves
                        pass
            except TimeoutError:
                raise RuntimeError(
                    f"callgrind run did not finish in {timeout:.0f} s{_stop_child(spec)}"
                ) from None
            except OSError as exc:
                raise RuntimeError(self._failure(f"no hand-over ({exc})")) from None
            if not report.is_file():
                raise RuntimeError(self._failure("the counting child left no report"))
            return json.loads(report.read_text())

    def _failure(self, what: str) -> str:
        code = self._popen.poll() if self._popen else None
        if code is None and self._popen is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = self._popen.wait(5)  # it may be on its way out
        tail = " | ".join(_last_words(self.folder / "stderr.txt"))
        if self._popen is None:
            return f"callgrind run failed (the build's zygote, {self.folder}): {what}: {tail}"
        return f"callgrind run failed (exit {code}): {what}: {tail}"

    def stop(self) -> None:
        if self._popen is None:
            return
        if self._popen.poll() is None:
            self._popen.kill()
        self._popen.wait()
        self._stderr.close()
        with _socket_files_locked():
            _remove_if_unserved(self.address)


def _stop_child(spec: Path) -> str:
    """After a timeout: stop the fork counting `spec`, which would otherwise keep the zygote
    (it serves one hand-over at a time) from every later one. The spec goes first: a fork that
    has not yet written its process id (`_count_spec` writes it before reading the spec) finds
    no spec and leaves. Says what it did, for the error."""
    spec.unlink(missing_ok=True)
    try:
        pid = int(spec.with_name(_CHILD_PID).read_text())
    except (OSError, ValueError):
        return " (no counting child had started: the zygote was still importing or busy)"
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    return f"; its counting child (process {pid}) was stopped, the zygote serves the next one"


def _lower_priority(niceness: int) -> None:
    """In a starting zygote: a session of its own, at `niceness`. Linux shares the cores
    between sessions first (autogroups) and only then by niceness inside each, so a niced
    zygote in its starter's session still took a core from the setup_cache's workers; its own
    session's autogroup gets the niceness too, where the kernel has autogroups."""
    os.setsid()
    with contextlib.suppress(OSError), open("/proc/self/autogroup", "w") as autogroup:
        autogroup.write(str(niceness))
    os.nice(niceness)


def _last_words(path: Path) -> list[str]:
    try:
        return path.read_text(errors="replace").strip().splitlines()[-3:]
    except OSError:
        return []


def _shared_folder() -> Path:
    """Where this machine's, build's and ISA's zygote keeps its callgrind files: beside the
    build's Inductor caches (`artifacts.inductor_cache`)."""
    from ..compat import build_key
    from ..machine import machine_name

    return artifacts.inductor_cache(machine_name(), build_key(), vector_isa(), "callgrind")


def _address(folder: Path) -> str:
    """The shared zygote's socket: one per folder (clone, machine, build, ISA) and Python (the
    environment that runs the build), in this user's `_private_folder`."""
    key = hashlib.sha256(f"{folder.resolve()}\0{sys.executable}".encode()).hexdigest()[:24]
    return str(_private_folder() / f"{key}.sock")


def _private_folder() -> Path:
    """The folder of this user's zygote sockets, `<temporary folder>/writeback-callgrind-<uid>`:
    created mode 0700 in one step, or, when it exists, used only while it is a folder of this
    user's that no one else may enter. PermissionError otherwise, naming it and the fix."""
    path = Path(tempfile.gettempdir()) / f"writeback-callgrind-{os.getuid()}"
    if len(os.fsencode(path)) > _LONGEST_FOLDER:
        raise OSError(
            errno.ENAMETOOLONG,
            f"longer than the {_LONGEST_FOLDER} bytes a socket's folder may have: set TMPDIR to "
            "a shorter folder",
            str(path),
        )
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    found = os.lstat(path)
    if (not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid()
            or stat.S_IMODE(found.st_mode) != 0o700):  # fmt: skip
        raise PermissionError(
            f"{path} is not a folder of user {os.getuid()} with mode 0700 (it is "
            f"{stat.filemode(found.st_mode)}, owner {found.st_uid}): another user could reach "
            "the callgrind zygote's socket in it. Remove it, or set TMPDIR to a folder of yours"
        )
    return path


@contextlib.contextmanager
def _socket_files_locked():
    """Held while a socket file is checked and bound or removed, so that two processes never
    take each other's."""
    descriptor = os.open(_private_folder(), os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)


def _listening(address: str) -> socket.socket:
    """A socket listening on the file `address`, which replaces a file a zygote left there when
    it went. OSError when a zygote listens on it, or the path is too long for a socket."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with _socket_files_locked():
            if not _remove_if_unserved(address):
                raise OSError(errno.EADDRINUSE, "a callgrind zygote listens on it", address)
            listener.bind(address)
        listener.listen(8)
    except BaseException:
        listener.close()
        raise
    return listener


def _remove_if_unserved(address: str) -> bool:
    """Remove the socket file `address` unless a process accepts connections on it; whether
    the address is free now."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(5)
        try:
            probe.connect(address)  # an empty hand-over: a zygote forks nothing for it
        except (FileNotFoundError, ConnectionRefusedError):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(address)
            return True
        except TimeoutError:
            pass  # a zygote whose queue of hand-overs is full
    return False


def _same_user(connection: socket.socket) -> bool:
    """Whether the process at the other end of `connection` runs as this process's user (its
    credentials as the kernel recorded them when it connected)."""
    credentials = connection.getsockopt(
        socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")
    )
    _, uid, _ = struct.unpack("3i", credentials)
    return uid == os.getuid()


def _identity() -> dict:
    from ..compat import torch_identity

    return {**torch_identity(), "executable": sys.executable}


_HELPER_C = """
#include <valgrind/callgrind.h>
void writeback_instrument_on(void) { CALLGRIND_START_INSTRUMENTATION; }
"""


def _client_helper(folder: Path) -> str | None:
    """Build the instrumentation switch; None where valgrind's header or a compiler is missing."""
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if cc is None or not Path("/usr/include/valgrind/callgrind.h").is_file():
        return None
    source, library = folder / "switch.c", folder / "libwritebackswitch.so"
    source.write_text(_HELPER_C)
    built = subprocess.run([cc, "-O1", "-shared", "-fPIC", "-o", str(library), str(source)],
                           capture_output=True, text=True)  # fmt: skip
    return str(library) if built.returncode == 0 else None


PRELOADED = (
    "torch._inductor.hooks",
    "torch._inductor.utils",
    "torch._inductor.codegen.memory_planning",
    "torch._inductor.async_compile",
    "torch._inductor.select_algorithm",
)
"""What Inductor's generated wrappers import (7-11 s under valgrind): the zygote imports it
once, before any fork (a build without one of them goes without)."""


def _serve(listener_fd: int, folder: str, helper: str, parent: int) -> None:
    """The zygote, inside valgrind: torch, one thread, Inductor's wrapper modules; then, for
    each connection to the listening socket it was handed, read the spec's path and fork a
    child that counts it (`_count_spec`), one at a time. An empty hand-over (`Zygote.shared`
    asking whether it runs) forks nothing. It leaves when `parent` (the process that started
    it) is gone.

    Every child starts from this state and takes the same steps, so a scenario's counts do not
    depend on which scenarios were counted before it, nor on who started the zygote."""
    import torch

    torch.set_num_threads(1)
    for name in PRELOADED:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    with contextlib.suppress(Unsupported):
        # Inductor's ISA check, which loading the first wrapper makes (Python processes that
        # load a test library per ISA: 2-3 s under valgrind), once here and not in every fork;
        # in the folder of its own the other processes of the build use (`compat.vector_isa`)
        vector_isa()
    listener = socket.socket(fileno=listener_fd)
    listener.settimeout(1.0)
    while True:
        try:
            connection, _ = listener.accept()
        except TimeoutError:
            if os.getppid() != parent:  # the probe or the forkserver that started it is gone
                with contextlib.suppress(OSError):
                    os.unlink(listener.getsockname())  # still its own: it listens there
                return
            continue
        if not _same_user(connection):
            print("closed a connection from another user, unread", file=sys.stderr, flush=True)
            connection.close()
            continue
        connection.settimeout(60)
        line = b""
        with contextlib.suppress(OSError):
            while not line.endswith(b"\n") and (chunk := connection.recv(4096)):
                line += chunk
        if not line.strip():
            connection.close()
            continue
        pid = os.fork()
        if pid == 0:
            listener.close()
            try:
                _count_spec(Path(line.decode().strip()), Path(folder), helper)
            except BaseException:  # noqa: BLE001 - said on stderr; the probe finds no report
                traceback.print_exc()
            finally:
                sys.stderr.flush()
                os._exit(0)  # closes the connection: the probe's signal that it is done
        connection.close()
        os.waitpid(pid, 0)


def _count_spec(path: Path, folder: Path, helper: str) -> None:
    """In a fork of the zygote: load and check each wrapper, count `calls` calls, dump, check
    again, and write the report (`Zygote.report`)."""
    import ctypes
    import gc

    import torch

    path.with_name(_CHILD_PID).write_text(str(os.getpid()))  # first: see `_stop_child`
    spec = json.loads(path.read_text())
    if spec["inductor_cache"]:  # where the probe compiled: the kernels load from there
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = spec["inductor_cache"]
    switch = ctypes.CDLL(helper) if helper else None
    broken, loaded = {}, []
    with torch.no_grad():
        for index, case in enumerate(spec["cases"]):  # loading and first calls: uninstrumented
            try:
                module = _load_kept(Path(case["code_dir"]), f"writeback_counted_{index}")
                _check_one_call(module, case, "the first call")
            except CountedCodeBroken as exc:
                broken[case["key"]] = str(exc)
                continue
            loaded.append((case, module, list(_ordered_case(case).inputs.values())))
        # no collection inside a counted window: where one fell (which depends on everything
        # the process allocated before) it added about 210 000 instructions to a window of 50
        # calls (results/logs/callgrind-zygote-gc-torch-2.13.0.txt)
        gc.collect()
        gc.disable()
        if switch:
            switch.writeback_instrument_on()  # once, and on to the end: counts stay consistent
        for _, module, inputs in loaded:
            module.call(list(inputs))  # instrumented, not collected: translations settle
            torch._C._valgrind_toggle()
            for _ in range(spec["calls"]):
                module.call(list(inputs))
            torch._C._valgrind_toggle_and_dump_stats()
        gc.enable()
        for case, module, _ in loaded:
            try:
                _check_one_call(module, case, f"a call after the {spec['calls']} counted ones")
            except CountedCodeBroken as exc:
                broken[case["key"]] = str(exc)
    report = {
        "counted": [case["key"] for case, _, _ in loaded],
        "broken": broken,
        "dumps": str(folder / f"callgrind.out.{os.getpid()}"),  # valgrind's %p, then .1, .2 ...
        "identity": _identity(),
    }
    Path(spec["report"]).write_text(json.dumps(report))


def _load_kept(folder: Path, name: str):
    """The module of `folder`/wrapper.py, after checking that the C++ it compiles is the
    kernels.cpp kept beside it (the code a reader sees is the code counted)."""
    path = folder / "wrapper.py"
    text = path.read_text()
    with tempfile.TemporaryDirectory(prefix="writeback-kernels-") as tmp:
        save_code(Path(tmp), [text])
        loaded_cpp = (Path(tmp) / "kernels.cpp").read_text()
    if loaded_cpp != (folder / "kernels.cpp").read_text():
        raise CountedCodeBroken(f"{path}: its C++ is not the kernels.cpp kept beside it")
    module = types.ModuleType(name)
    module.__file__ = str(path)
    exec(compile(text, str(path), "exec"), module.__dict__)  # the very text compared above
    return module


def _ordered_case(case: dict):
    """A fresh case of the scenario, its inputs in the wrapper's order; no returns to check
    (outputs that alias inputs are rebuilt by the runtime around the wrapper)."""
    module = importlib.import_module(case["module"])
    scenario = next(
        value
        for value in vars(module).values()
        if isinstance(value, Scenario) and value.name == case["scenario"]
    )
    full = scenario.case(scenario.control(case["control"]), case["n"])
    inputs = {name: full.inputs[name] for name in case["input_order"]}
    return Case(inputs=inputs, after=full.after, returns={})


def _check_one_call(module, case: dict, which: str) -> None:
    verdict = check(lambda *inputs: module.call(list(inputs)), _ordered_case(case))
    if verdict.ok:
        return
    where = f"{case['scenario']}.{case['control']} n={case['n']} ({case['code_dir']})"
    message = f"{where}: {which} of the counted code broke the contract: {verdict.describe()}"
    if (isa := vector_isa()) != case["isa"]:
        message += (
            f" - here Inductor builds the kernels for {isa}, not for the {case['isa']} they were"
            " generated for (valgrind hides vector extensions it cannot run)"
        )
    raise CountedCodeBroken(message)


if __name__ == "__main__":
    _serve(int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4]))
    sys.stderr.flush()
    os._exit(0)  # torch's teardown under valgrind takes seconds
