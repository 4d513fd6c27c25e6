"""Run independent probe tasks on every usable core: one worker process per core.

A cold build's time is mostly `setup_cache` compiling and checking one control after another
in one process, with the machine's other cores idle. Each control's rows depend on nothing
another control does, so `run(function, tasks)` hands the tasks (one per control) to worker
processes, each taking the next task when it finishes one, and returns the results in task
order: the record is the one a single process would have written, row for row.

Workers are forks of this process while it has one thread, as asv's forkserver forks a
process per benchmark: torch, Inductor and its ISA check are already loaded, so a worker
starts at once (a fresh interpreter took about 5 s). A process with other threads (a test
runner, say) cannot be forked safely; its workers are fresh interpreters (`python -c`) with
this process's environment and `sys.path`. Either way they compile into the same emptied
Inductor cache (`TORCHINDUCTOR_CACHE_DIR`: Inductor writes its cache files atomically and
locks its C++ builds, for processes sharing one cache; torch 2.1-2.2's C++ wrappers share
one precompiled header it does not lock, so the probes build those one at a time:
`compat.one_cpp_wrapper_build_at_a_time`) under the same knobs. A task that
raises fails the whole run with its traceback; a worker that dies (a crash in a compile) fails
it naming the task, with the Python stack it died in (each worker's `faulthandler` writes to a
file of the parent's, which the error quotes: a SIGSEGV prints nothing by itself, and the
worker's own output may be cut from what asv shows); Ctrl-C stops every worker. `beside`,
when given, runs in a thread of this process while the workers work (started after they are
forked, joined before return).

`$WRITEBACK_WORKERS` sets how many (default: the cores this process may run on); 1 runs every
task in this process, as before.
"""

from __future__ import annotations

import contextlib
import faulthandler
import importlib
import os
import pickle
import selectors
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable, Sequence

KNOB = "WRITEBACK_WORKERS"
_HEADER = struct.Struct("<Q")


def workers_wanted() -> int:
    """`$WRITEBACK_WORKERS`, or the number of cores this process may run on."""
    text = os.environ.get(KNOB, "").strip()
    if not text:
        return max(1, len(os.sched_getaffinity(0)))
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{KNOB}={text!r}: give a whole number of worker processes, 1 or more")
    return int(text)


def run(
    function: Callable,
    tasks: Sequence[tuple],
    workers: int,
    on_result: Callable[[int, object], None] | None = None,
    beside: Callable[[], object] | None = None,
    order: Sequence[int] | None = None,
) -> list:
    """`function(*task)` for every task, in up to `workers` processes; the results in task
    order. `function` must be a module-level function (workers import it by name), tasks and
    results picklable. `on_result(index, result)` is called here as each one arrives (for
    progress). `order`: the task indices in the order workers get them (default: task order;
    the longest first keeps a long task from running alone at the end). With one worker or one
    task, everything runs in this process, in task order (and `beside` first)."""
    results: list = [None] * len(tasks)
    order = list(range(len(tasks))) if order is None else list(order)
    if sorted(order) != list(range(len(tasks))):
        raise ValueError(f"order must list each of the {len(tasks)} task indices once: {order}")
    if workers <= 1 or len(tasks) <= 1:
        if beside:
            beside()
        for index, task in enumerate(tasks):
            results[index] = function(*task)
            if on_result:
                on_result(index, results[index])
        return results
    reference = (function.__module__, function.__qualname__)
    pending = [(index, tasks[index]) for index in order]
    running: dict[_Worker, int] = {}  # each worker's task index
    selector = selectors.DefaultSelector()
    aside = None
    try:
        fork = threading.active_count() == 1
        for _ in range(min(workers, len(tasks))):
            worker = _fork(function, running) if fork else _interpreter(reference)
            selector.register(worker.stdout, selectors.EVENT_READ, worker)
            running[worker] = _give(worker, pending)
        if beside:
            from .compat import fake_cuda_guard_on_this_thread

            fake_cuda_guard_on_this_thread()  # before `beside` compiles in a thread (2.10, 2.11)
            aside = threading.Thread(target=beside, name="writeback-pool-beside", daemon=True)
            aside.start()
        done = 0
        while done < len(tasks):
            for key, _ in selector.select():
                worker = key.data
                index = running[worker]
                message = _read(worker.stdout)
                if message is None:
                    raise RuntimeError(
                        f"a probe worker died (exit code {worker.wait()}) while running task "
                        f"{index} {_describe(tasks[index])} of {function.__qualname__}; "
                        + worker.fatal_error()
                    )
                status, value = message
                if status == "error":
                    raise RuntimeError(
                        f"task {index} {_describe(tasks[index])} of {function.__qualname__} "
                        f"failed in a worker:\n{value}"
                    )
                results[index] = value
                done += 1
                if on_result:
                    on_result(index, value)
                if pending:
                    running[worker] = _give(worker, pending)
                else:
                    selector.unregister(worker.stdout)
                    _write(worker.stdin, None)  # no more work: the worker exits
    finally:
        selector.close()
        for worker in running:
            worker.stop()
        if aside is not None:
            aside.join()
    return results


class _Worker:
    """A worker process: its pid, the pipe to it (`stdin`) and from it (`stdout`), and the
    file its `faulthandler` writes to (`faults`, this process's)."""

    def __init__(self, pid: int, stdin, stdout, faults, popen: subprocess.Popen | None = None):
        self.pid, self.stdin, self.stdout, self.faults = pid, stdin, stdout, faults
        self._popen = popen
        self._code = None

    def fatal_error(self) -> str:
        """What the worker's faulthandler wrote as it died (the Python stack of each of its
        threads), or why there is none."""
        self.faults.seek(0)
        report = self.faults.read().decode(errors="replace").strip()
        if not report:
            return "it left no fatal-error report (killed from outside?); its output is above"
        return f"its fatal-error report (faulthandler):\n{report}"

    def wait(self) -> int:
        """The exit code (minus the signal that killed it, as subprocess says)."""
        if self._popen is not None:
            return self._popen.wait()
        if self._code is None:
            _, status = os.waitpid(self.pid, 0)
            self._code = os.waitstatus_to_exitcode(status)
        return self._code

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            if self._code is None and (self._popen is None or self._popen.poll() is None):
                os.kill(self.pid, signal.SIGKILL)
        self.wait()
        for stream in (self.stdin, self.stdout, self.faults):
            with contextlib.suppress(OSError):
                stream.close()


def _fork(function: Callable, others: dict) -> _Worker:
    """A worker forked from this (single-threaded) process, serving `function`."""
    to_child, from_parent = os.pipe()
    to_parent, from_child = os.pipe()
    faults = tempfile.TemporaryFile()  # noqa: SIM115 (closed by _Worker.stop)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the worker: it must never return into the caller's code
        code = 1
        try:
            os.close(from_parent)
            os.close(to_parent)
            for other in others:  # else a dead sibling's pipes would never reach end of file
                other.stdin.close()
                other.stdout.close()
            faulthandler.enable(faults, all_threads=True)
            _serve_tasks(function, os.fdopen(to_child, "rb"), os.fdopen(from_child, "wb"))
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    os.close(to_child)
    os.close(from_child)
    return _Worker(pid, os.fdopen(from_parent, "wb"), os.fdopen(to_parent, "rb"), faults)


def _interpreter(reference: tuple[str, str]) -> _Worker:
    """A worker in a fresh interpreter that imports the function by name."""
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = (
        f"import sys; sys.path.insert(0, {package_parent!r}); "
        f"from {__package__}.pool import _serve; _serve()"
    )
    faults = tempfile.TemporaryFile()  # noqa: SIM115 (closed by _Worker.stop)
    popen = subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        pass_fds=(faults.fileno(),),
    )
    setup = {"sys_path": list(sys.path), "function": reference, "faults": faults.fileno()}
    _write(popen.stdin, setup)
    return _Worker(popen.pid, popen.stdin, popen.stdout, faults, popen)


def _give(worker: _Worker, pending: list) -> int:
    """Send the next pending task to `worker`; return its index."""
    index, task = pending.pop(0)
    _write(worker.stdin, (index, task))
    return index


def _write(stream, item) -> None:
    data = pickle.dumps(item)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _read(stream):
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    return pickle.loads(stream.read(size))


def _describe(task: tuple) -> str:
    return "(" + ", ".join(repr(item)[:60] for item in task) + ")"


def _serve() -> None:
    """An interpreter worker: read the set-up, then serve tasks."""
    requests = sys.stdin.buffer
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # prints (and g++) go to stderr
    setup = _read(requests)
    faulthandler.enable(setup["faults"], all_threads=True)  # the same file descriptor number
    sys.path[:] = setup["sys_path"]
    module, qualname = setup["function"]
    function = importlib.import_module(module)
    for part in qualname.split("."):
        function = getattr(function, part)
    _serve_tasks(function, requests, answers)


def _serve_tasks(function: Callable, requests, answers) -> None:
    """Read tasks until told to stop, answering each."""
    while (item := _read(requests)) is not None:
        _, task = item
        try:
            answer = ("ok", function(*task))
        except BaseException:  # the parent fails the run with this traceback
            answer = ("error", traceback.format_exc())
        _write(answers, answer)
