"""The worker pool that probes controls side by side (benchmarks/pool.py): results in task
order from other processes, a failure loud and named, and a probe record the same row for row
as one process's."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from benchmarks import pool
from benchmarks.compat import cxx_compiler_problem
from benchmarks.probes import probe as probe_module
from benchmarks.probes.probe import longest_first, probe_scenario
from benchmarks.snapshot_swap import SWAP

ROOT = Path(__file__).resolve().parents[1]


def where_and_square(x):
    return os.getpid(), x * x


def fails_on_three(x):
    if x == 3:
        raise ValueError("three is not allowed")
    return x


def dies_on_two(x):
    if x == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return x


def segfaults_on_two(x):
    if x == 2:
        import ctypes

        ctypes.string_at(0)  # reads address 0: SIGSEGV, which prints nothing by itself
    return x


def how_started(x):
    """'-c' in a fresh interpreter; a forked worker keeps this process's argv."""
    return sys.argv[0], x


RAN_ALONE = "fork, ran alone"


@pytest.fixture(params=["fork", "interpreter"])
def start(request):
    """Run the test with forked workers (this process has one thread) and with interpreters
    (another thread is alive: forking would be unsafe). Where earlier tests left threads in
    this process, the fork case runs in a pytest process of its own, which must pass; the
    test then sees RAN_ALONE and checks nothing more itself."""
    if request.param == "fork" and threading.active_count() != 1:
        alone = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", request.node.nodeid],
            capture_output=True,
            text=True,
            cwd=request.config.rootpath,
        )
        assert alone.returncode == 0, alone.stdout[-3000:] + alone.stderr[-2000:]
        assert "1 passed" in alone.stdout, alone.stdout[-3000:]
        yield RAN_ALONE
        return
    stop = threading.Event()
    other = threading.Thread(target=stop.wait) if request.param == "interpreter" else None
    if other:
        other.start()
    yield request.param
    stop.set()
    if other:
        other.join()


def test_results_come_back_in_task_order_from_other_processes(start):
    if start == RAN_ALONE:
        return
    arrived = []
    results = pool.run(where_and_square, [(i,) for i in range(7)], 2,
                       on_result=lambda i, r: arrived.append(i))  # fmt: skip
    assert [square for _, square in results] == [i * i for i in range(7)]
    pids = {pid for pid, _ in results}
    assert os.getpid() not in pids and 1 <= len(pids) <= 2
    assert sorted(arrived) == list(range(7))
    argv0 = {first for first, _ in pool.run(how_started, [(1,), (2,)], 2)}
    assert (argv0 == {"-c"}) == (start == "interpreter"), argv0


def test_beside_runs_while_the_workers_work_and_is_done_on_return(start, tmp_path):
    if start == RAN_ALONE:
        return
    mark = tmp_path / "beside"
    pool.run(where_and_square, [(1,), (2,), (3,)], 2, beside=lambda: mark.write_text("ran"))
    assert mark.read_text() == "ran"


def test_the_fake_cuda_guard_is_registered_from_this_thread_before_beside_compiles(
    start, monkeypatch
):
    """torch 2.10-2.11 keep the fake CUDA guard that fake mode registers in a thread_local:
    a `beside` thread entering fake mode first would leave the process's registry dangling
    once it exits (a SIGSEGV in the next compile, in this process or a fork of it). The pool
    registers it from the calling thread first (`compat.fake_cuda_guard_on_this_thread`)."""
    if start == RAN_ALONE:
        return
    import torch

    events = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(
        torch._C,
        "_ensureCUDADeviceGuardSet",
        lambda: events.append(("guard", threading.current_thread().name)),
        raising=False,
    )
    pool.run(where_and_square, [(1,), (2,)], 2,
             beside=lambda: events.append(("beside", threading.current_thread().name)))  # fmt: skip
    assert events[0] == ("guard", threading.current_thread().name), events
    assert events[1] == ("beside", "writeback-pool-beside"), events


def note_start(folder, x):
    """Note that task `x` started, then wait until two tasks have (so the third can only
    start after both first ones did)."""
    with open(folder / "started", "a") as started:
        started.write(f"{x}\n")
    deadline = time.monotonic() + 60
    while len((folder / "started").read_text().split()) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    return x


def test_workers_get_the_tasks_in_the_order_given_and_results_stay_in_task_order(start, tmp_path):
    if start == RAN_ALONE:
        return
    results = pool.run(note_start, [(tmp_path, i) for i in range(3)], 2, order=[2, 0, 1])
    assert results == [0, 1, 2]
    started = (tmp_path / "started").read_text().split()
    assert set(started[:2]) == {"2", "0"}  # the first two go out at once
    assert started[2] == "1"  # the last waits for a free worker


@pytest.mark.parametrize("order", [[0, 0, 1], [0, 1], [0, 1, 3]])
def test_an_order_that_is_not_every_task_once_is_refused(order):
    with pytest.raises(ValueError, match="each of the 3 task indices once"):
        pool.run(where_and_square, [(1,), (2,), (3,)], 2, order=order)


def test_the_longest_controls_go_first_as_earlier_records_timed_them(tmp_path, monkeypatch):
    monkeypatch.setattr(probe_module, "machine_name", lambda: "m")
    for build, seconds in (("b1", (1.0, 9.0, 4.0)), ("b2", (1.0, 11.0, 6.0))):
        folder = tmp_path / "m" / build / "avx2" / "s"
        folder.mkdir(parents=True)
        rows = [{"control": c, "seconds": t / 2} for c, t in zip("xyz", seconds) for _ in (1, 2)]
        (folder / "probe.json").write_text(json.dumps({"rows": rows}))
    (tmp_path / "m" / "b3" / "avx2" / "s").mkdir(parents=True)
    (tmp_path / "m" / "b3" / "avx2" / "s" / "probe.json").write_text("not json")  # ignored
    assert longest_first("s", ["x", "y", "z"], tmp_path) == [1, 2, 0]
    assert longest_first("s", ["x", "new", "y"], tmp_path) == [1, 2, 0]  # untimed first
    assert longest_first("other", ["x", "y"], tmp_path) == [0, 1]  # no record: as given
    assert longest_first("s", ["x", "y"], None) == [0, 1]


def test_one_worker_runs_in_this_process():
    results = pool.run(where_and_square, [(2,), (3,)], 1)
    assert results == [(os.getpid(), 4), (os.getpid(), 9)]


def test_a_task_that_raises_fails_the_run_with_its_traceback(start):
    if start == RAN_ALONE:
        return
    with pytest.raises(RuntimeError, match=r"task 3 \(3\).*fails_on_three(.|\n)*three is not"):
        pool.run(fails_on_three, [(i,) for i in range(5)], 2)


def test_a_worker_that_dies_fails_the_run_naming_its_task(start):
    if start == RAN_ALONE:
        return
    with pytest.raises(RuntimeError, match=r"worker died \(exit code -9\) while running task 2"):
        pool.run(dies_on_two, [(i,) for i in range(4)], 2)


def test_a_worker_that_crashes_fails_the_run_with_the_stack_it_died_in(start):
    """A SIGSEGV in a compiled kernel or a compiler prints nothing; the error itself quotes
    the worker's faulthandler report, down to the line that crashed."""
    if start == RAN_ALONE:
        return
    with pytest.raises(RuntimeError) as raised:
        pool.run(segfaults_on_two, [(i,) for i in range(4)], 2)
    message = str(raised.value)
    assert "worker died (exit code -11) while running task 2 (2) of segfaults_on_two" in message
    assert "Segmentation fault" in message
    assert 'test_pool.py", line' in message and "in segfaults_on_two" in message


def test_a_worker_killed_from_outside_says_it_left_no_report(start):
    if start == RAN_ALONE:
        return
    with pytest.raises(RuntimeError, match=r"left no fatal-error report"):
        pool.run(dies_on_two, [(i,) for i in range(4)], 2)


@pytest.mark.parametrize("text", ["0", "two", "-1"])
def test_a_bad_worker_count_is_one_clear_error(monkeypatch, text):
    monkeypatch.setenv(pool.KNOB, text)
    with pytest.raises(ValueError, match="WRITEBACK_WORKERS"):
        pool.workers_wanted()


def test_the_default_is_the_cores_this_process_may_use_not_the_machines():
    """A process pinned to one core (a CI job's cgroup or taskset) gets one worker, though
    the machine has more: the default follows the affinity, not os.cpu_count()."""
    first = min(os.sched_getaffinity(0))
    env = {key: value for key, value in os.environ.items() if key != pool.KNOB}

    def wanted(**pinning) -> list[str]:
        return subprocess.run(
            [sys.executable, "-c", "from benchmarks import pool; print(pool.workers_wanted())"],
            capture_output=True, text=True, check=True, cwd=ROOT, env=env, timeout=120,
            **pinning,
        ).stdout.split()  # fmt: skip

    assert wanted(preexec_fn=lambda: os.sched_setaffinity(0, {first})) == ["1"]
    assert wanted() == [str(len(os.sched_getaffinity(0)))]


TIMES = {"seconds", "measured_at", "code_dir", "samples_s", "median_s", "time_over_floor",
         "floor_ratio_samples", "floor_ratio_iqr", "floor_median_s", "control_median_s",
         "floor_calls_per_sub_block"}  # fmt: skip
"""Row fields that are times, or where the code was kept (each probe its own cache)."""


@pytest.mark.skipif(bool(cxx_compiler_problem()), reason="no C++ compiler")
def test_two_workers_write_the_record_one_process_writes(tmp_path):
    """The swap's five controls at the gate size, compiled by two workers and by this process:
    every row the same but what is a time (when, how long, the timed ratios)."""

    def rows(workers):
        cache = tmp_path / f"cache{workers}"
        record = probe_scenario(SWAP, sizes=(SWAP.gate_size,), count_instructions=False,
                                inductor_cache=cache, workers=workers)  # fmt: skip
        return [{k: v for k, v in row.items() if k not in TIMES} for row in record["rows"]]

    together, alone = rows(2), rows(1)
    assert [r["control"] for r in together] == [r["control"] for r in alone]
    assert together == alone
