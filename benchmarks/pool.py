"""Run independent probe tasks on every usable core: one worker process per core.

A cold build's time is mostly `setup_cache` compiling and checking one control after another
in one process, with the machine's other cores idle. Each control's rows depend on nothing
another control does, so `run(function, tasks)` hands the tasks (one per control) to worker
processes, each taking the next task when it finishes one, and returns the results in task
order: the record is the one a single process would have written, row for row.

Workers are fresh interpreters (`python -c`, not a fork of a process that has torch's threads
and caches), started with this process's environment and `sys.path`, so they compile into
the same emptied Inductor cache (`TORCHINDUCTOR_CACHE_DIR`: Inductor's cache files are
written atomically and its C++ builds are locked, for processes sharing one cache) under the
same knobs. A task that raises fails the whole run with its traceback; a worker that dies
(a crash in a compile) fails it naming the task; Ctrl-C stops every worker.

`$WRITEBACK_WORKERS` sets how many (default: the cores this process may run on); 1 runs every
task in this process, as before.
"""

from __future__ import annotations

import importlib
import os
import pickle
import selectors
import struct
import subprocess
import sys
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
) -> list:
    """`function(*task)` for every task, in up to `workers` processes; the results in task
    order. `function` must be a module-level function (workers import it by name), tasks and
    results picklable. `on_result(index, result)` is called here as each one arrives (for
    progress). With one worker or one task, everything runs in this process."""
    results: list = [None] * len(tasks)
    if workers <= 1 or len(tasks) <= 1:
        for index, task in enumerate(tasks):
            results[index] = function(*task)
            if on_result:
                on_result(index, results[index])
        return results
    reference = (function.__module__, function.__qualname__)
    pending = list(enumerate(tasks))
    running: dict[subprocess.Popen, int] = {}  # each worker's task index
    selector = selectors.DefaultSelector()
    try:
        for _ in range(min(workers, len(tasks))):
            worker = _start(reference)
            selector.register(worker.stdout, selectors.EVENT_READ, worker)
            running[worker] = _give(worker, pending)
        done = 0
        while done < len(tasks):
            for key, _ in selector.select():
                worker = key.data
                index = running[worker]
                message = _read(worker.stdout)
                if message is None:
                    raise RuntimeError(
                        f"a probe worker died (exit code {worker.wait()}) while running task "
                        f"{index} {_describe(tasks[index])} of {function.__qualname__}; its "
                        "output is above"
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
            if worker.poll() is None:
                worker.kill()
            worker.wait()
            worker.stdin.close()
            worker.stdout.close()
    return results


def _start(reference: tuple[str, str]) -> subprocess.Popen:
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = (
        f"import sys; sys.path.insert(0, {package_parent!r}); "
        f"from {__package__}.pool import _serve; _serve()"
    )
    worker = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    _write(worker.stdin, {"sys_path": list(sys.path), "function": reference})
    return worker


def _give(worker: subprocess.Popen, pending: list) -> int:
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
    """A worker: read the set-up, then tasks until told to stop, answering each."""
    requests = sys.stdin.buffer
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # prints (and g++) go to stderr
    setup = _read(requests)
    sys.path[:] = setup["sys_path"]
    module, qualname = setup["function"]
    function = importlib.import_module(module)
    for part in qualname.split("."):
        function = getattr(function, part)
    while (item := _read(requests)) is not None:
        _, task = item
        try:
            answer = ("ok", function(*task))
        except BaseException:  # the parent fails the run with this traceback
            answer = ("error", traceback.format_exc())
        _write(answers, answer)
