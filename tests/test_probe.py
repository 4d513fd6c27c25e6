"""The probes and the asv classes on the installed torch, at small sizes.

Nothing here assumes which swap controls this torch compiles correctly: verdicts are
measured, and the tests check that every part of the pipeline agrees with them. Controls
that are wrong or unavailable by construction test the gate and the skip.
"""

import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import torch

from benchmarks import artifacts, asv_classes, snapshot_swap
from benchmarks.compat import Unsupported
from benchmarks.compiled import build, compile_and_capture, graph_input_order
from benchmarks.contract import Case
from benchmarks.probes import instructions, probe
from benchmarks.probes.probe import find_row, probe_scenario
from benchmarks.probes.runtime import profile_warm_call
from benchmarks.scenario import Control, Scenario

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]


def half_swap(a, b):
    """Wrong under every backend: b keeps its old value."""
    a.copy_(b)
    return a, b


def needs_a_missing_api(a, b):
    return torch._writeback_no_such_api(a, b)


TOY = Scenario(
    name="toy_swap",
    controls=(
        Control("half_swap", half_swap),
        Control("explicit_copies", snapshot_swap.explicit_copies),
        Control("stack_buffer", snapshot_swap.stack_buffer),
        Control("missing", needs_a_missing_api, requires=("torch._writeback_no_such_api",)),
    ),
    sizes=(3, 8),
    make_case=snapshot_swap.make_case,
)


def asv_classes_of(scenario: Scenario) -> tuple[type, type]:
    """The scenario's Correctness and Cost classes, as a scenario module defines them."""

    def setup_cache(self):
        return asv_classes.probe_for_asv(self.scenario)

    probed = type("Probed", (), {"scenario": scenario, "setup_cache": setup_cache})
    return (
        type("Correctness", (probed, asv_classes.Correctness), {}),
        type("Cost", (probed, asv_classes.Cost), {}),
    )


ToyCorrectness, ToyCost = asv_classes_of(TOY)


@pytest.fixture(scope="module")
def swap_record(tmp_path_factory):
    root = tmp_path_factory.mktemp("artifacts")
    record = probe_scenario(
        snapshot_swap.SWAP, sizes=(3,), artifacts_root=root, count_instructions=False
    )
    return record, root


@pytest.fixture(scope="module")
def toy_record():
    return probe_scenario(TOY, measure_gated=False, count_instructions=False)


def test_every_swap_row_is_measured(swap_record):
    record, _ = swap_record
    assert record["torch_version"] == torch.__version__
    assert len(record["rows"]) == len(snapshot_swap.SWAP.controls) * 3
    for row in record["rows"]:
        assert row["error"] is None, row
        assert row["skipped"] is None, row
        assert row["wrong_elements"] is not None
    assert all(r["wrong_elements"]["total"] == 0 for r in record["rows"] if r["backend"] == "eager")


def test_costs_agree_with_the_verdicts_and_the_code(swap_record):
    record, _ = swap_record
    for row in (r for r in record["rows"] if r["backend"] == "inductor"):
        correct = row["wrong_elements"]["total"] == 0 and row["storages_moved"] == 0
        if correct:
            assert row["scratch_bytes"] == row["scratch_bytes_static"], row
            assert row["full_length_loops"] >= 1  # a swap passes over the data at least once
            assert row["entrypoint_calls"] == 1
            assert row["time_over_floor"] > 0
            assert len(row["floor_ratio_samples"]) == 41
        else:
            assert row["scratch_bytes"] is None and row["full_length_loops"] is None


def test_generated_code_is_kept_for_every_inductor_compile(swap_record):
    record, root = swap_record
    for row in (r for r in record["rows"] if r["backend"] == "inductor"):
        kept = root / record["machine"] / record["build"] / record["isa"] / "snapshot_swap"
        folder = kept / row["control"] / "n3"
        assert row["code_dir"] == str(folder)
        assert "def call(" in (folder / "wrapper.py").read_text()
        assert "kernel(" in (folder / "kernels.cpp").read_text()
    kept = root / record["machine"] / record["build"] / record["isa"] / "snapshot_swap"
    saved = json.loads((kept / "probe.json").read_text())
    assert saved["rows"] == artifacts.portable(record, kept)["rows"]  # paths relative to it


def test_a_control_wrong_at_the_gate_is_stopped_there(toy_record):
    gate = find_row(toy_record, "half_swap", "inductor", 3)
    assert gate["wrong_elements"] == {
        "ret_a": 0, "ret_b": 3, "in_a": 0, "in_b": 3, "view_a": 0, "view_b": 3,
        "alias_a": 0, "alias_b": 0, "total": 9,
    }  # fmt: skip
    larger = find_row(toy_record, "half_swap", "inductor", 8)
    assert larger["gated"] and larger["wrong_elements"] is None
    eager = find_row(toy_record, "half_swap", "eager", 8)
    assert not eager["gated"] and eager["wrong_elements"]["total"] == 3 * 8


def test_a_missing_api_is_a_skip_with_its_name(toy_record):
    for n in (3, 8):
        row = find_row(toy_record, "missing", "inductor", n)
        assert "torch._writeback_no_such_api" in row["skipped"]
    with pytest.raises(Unsupported, match="no torch._writeback_no_such_api"):
        ToyCorrectness().setup(toy_record, "missing", "eager", 3)


def test_an_eager_reference_that_breaks_its_contract_is_a_harness_failure(toy_record):
    """half_swap breaks the swap's contract in eager too: the reference itself is wrong, so its
    eager row is a harness failure, and asv records a failure for it, neither a skip nor a
    count that would read as torch's result."""
    row = find_row(toy_record, "half_swap", "eager", 3)
    broke = (
        "the eager reference broke its own contract: ret_b 3 wrong; in_b 3 wrong; view_b 3 wrong"
    )
    assert row["harness_failure"] == broke
    assert row["wrong_elements"]["total"] == 9 and row["skipped"] is row["error"] is None
    assert find_row(toy_record, "explicit_copies", "eager", 3)["harness_failure"] is None
    with pytest.raises(probe.HarnessFailure) as caught:
        ToyCorrectness().setup(toy_record, "half_swap", "eager", 3)
    assert not isinstance(caught.value, NotImplementedError)  # what asv records as a skip
    assert str(caught.value).endswith(f"toy_swap.half_swap (eager, n=3) on torch "
                                      f"{torch.__version__}: harness failure: {broke}")  # fmt: skip


def _attribution_raising(monkeypatch, raised: Exception) -> tuple[dict, dict]:
    """The toy's half_swap probed under Inductor at the gate size (wrong there), its
    attribution raising `raised`: the record and the row."""

    def attribute(*args):
        raise raised

    monkeypatch.setattr(probe.attribution, "attribute_if_enabled", attribute)
    record = probe_scenario(TOY, sizes=(3,), controls=("half_swap",), backends=("inductor",),
                            count_instructions=False)  # fmt: skip
    return record, find_row(record, "half_swap", "inductor", 3)


def test_an_unsupported_raised_after_a_wrong_verdict_keeps_the_verdict(monkeypatch):
    record, row = _attribution_raising(monkeypatch, Unsupported("torch 9 has no bisector"))
    assert row["skipped"] is None and row["error"] is None and row["attribution_error"] is None
    assert row["wrong_elements"]["total"] == 9
    assert row["attribution"]["note"] == "not attributed: torch 9 has no bisector"
    correctness = ToyCorrectness()
    correctness.setup(record, "half_swap", "inductor", 3)
    assert correctness.track_wrong_elements(record, "half_swap", "inductor", 3) == 9


def test_an_attribution_that_crashes_keeps_the_verdict_and_records_the_crash(monkeypatch):
    record, row = _attribution_raising(monkeypatch, RuntimeError("planted crash"))
    assert row["skipped"] is None and row["error"] is None
    assert row["wrong_elements"]["total"] == 9
    assert row["attribution_error"].startswith("RuntimeError: planted crash (at ")
    assert row["attribution"]["note"] == f"attribution failed: {row['attribution_error']}"
    ToyCorrectness().setup(record, "half_swap", "inductor", 3)


def test_asv_classes_report_the_verdict_and_refuse_to_cost_a_wrong_control():
    record = ToyCorrectness().setup_cache()  # measures gated sizes too, as asv does
    correctness = ToyCorrectness()
    correctness.setup(record, "half_swap", "inductor", 8)
    assert correctness.track_wrong_elements(record, "half_swap", "inductor", 8) == 3 * 8
    assert correctness.track_moved_storages(record, "half_swap", "inductor", 8) == 0

    with pytest.raises(Unsupported, match=r"wrong at the small correctness gate: ret_b 3 wrong"):
        ToyCost().setup(record, "half_swap", 8)


def test_a_size_a_knob_leaves_out_is_a_skip_and_the_parameters_stay_whole(monkeypatch):
    monkeypatch.setenv("WRITEBACK_SIZES", "3")
    # every size, the largest first: asv's graphs open on a parameter's first value
    assert ToyCorrectness.params[2] == [8, 3] and ToyCost.params[1] == [8, 3]
    record = ToyCorrectness().setup_cache()
    assert {row["n"] for row in record["rows"]} == {3}
    ToyCorrectness().setup(record, "explicit_copies", "eager", 3)
    with pytest.raises(Unsupported, match="WRITEBACK_SIZES=3 leaves size 8 out"):
        ToyCorrectness().setup(record, "explicit_copies", "eager", 8)


def test_a_probe_record_keeps_the_rows_a_later_run_did_not_measure(tmp_path, monkeypatch):
    monkeypatch.setenv("WRITEBACK_MACHINE", "records-test")
    full = probe_scenario(TOY, controls=("half_swap",), backends=("eager",),
                          artifacts_root=tmp_path, count_instructions=False)  # fmt: skip
    probe_scenario(TOY, sizes=(3,), controls=("half_swap",), backends=("eager",),
                   artifacts_root=tmp_path, count_instructions=False)  # fmt: skip
    (path,) = tmp_path.glob("records-test/torch-*/*/toy_swap/probe.json")
    kept = json.loads(path.read_text())
    assert kept["machine"] == "records-test"
    assert sorted(r["n"] for r in kept["rows"]) == sorted(r["n"] for r in full["rows"]) == [3, 8]


def test_asv_cost_of_a_correct_control_times_the_checked_function():
    record = ToyCost().setup_cache()
    correct = [
        name
        for name in ("explicit_copies", "stack_buffer")
        if find_row(record, name, "inductor", 3)["wrong_elements"]["total"] == 0
    ]
    if not correct:
        pytest.skip(f"both clone-free controls are miscompiled on torch {torch.__version__}")
    control = correct[0]
    cost = ToyCost()
    cost.setup(record, control, 8)
    row = find_row(record, control, "inductor", 8)
    assert cost.track_scratch_bytes(record, control, 8) == row["scratch_bytes_static"] > 0
    asv_classes._prepare_timed_call(record, control, 8)
    fn, (a, b) = asv_classes._TIMED[("toy_swap", control, 8)]
    before = a.clone()
    cost.time_warm_call(record, control, 8)
    assert torch.equal(b, before)


def test_case_builder_expectations_are_independent_copies():
    case: Case = snapshot_swap.make_case(4)
    case.inputs["a"].add_(100)
    assert case.after["b"][0].item() == 0.0


def test_a_failed_instruction_count_is_a_failure_where_valgrind_is_installed(monkeypatch):
    note = "callgrind run failed (exit 1): boom"
    row = {"control": "c", "backend": "inductor", "n": 3, "scratch_bytes": 0,
           "instructions": None, "instructions_note": note}  # fmt: skip
    record = {"scenario": "toy_swap", "isa": "avx2", "rows": [row]}
    monkeypatch.setattr(asv_classes.instructions, "valgrind_problem", lambda isa=None: None)
    with pytest.raises(RuntimeError, match="although valgrind is installed: callgrind run failed"):
        asv_classes._require_instructions(record, "c", 3)
    monkeypatch.setattr(
        asv_classes.instructions, "valgrind_problem", lambda isa=None: "valgrind not found"
    )
    with pytest.raises(Unsupported, match="instructions not counted"):
        asv_classes._require_instructions(record, "c", 3)
    row["instructions_note"] = asv_classes.INSTRUCTIONS_OFF
    monkeypatch.setattr(asv_classes.instructions, "valgrind_problem", lambda isa=None: None)
    with pytest.raises(Unsupported, match="WRITEBACK_INSTRUCTIONS=0"):
        asv_classes._require_instructions(record, "c", 3)


def add_one(x):
    x.add_(1)
    return x


def _add_one_case(n: int) -> Case:
    x = torch.arange(n, dtype=torch.float32)
    return Case(inputs={"x": x}, after={"x": x + 1}, returns={"x": x + 1})


ADD_ONE = Scenario(
    name="add_one", controls=(Control("add_one", add_one),), sizes=(3,), make_case=_add_one_case
)

AddOneCorrectness, AddOneCost = asv_classes_of(ADD_ONE)


def test_an_unsupported_raised_by_the_cost_stage_skips_the_cost_and_keeps_the_verdict(
    monkeypatch,
):
    def profiler_missing(*args):
        raise Unsupported("torch 9 has no profiler events")

    monkeypatch.setattr(probe, "profile_warm_call", profiler_missing)
    record = probe_scenario(ADD_ONE, backends=("inductor",), count_instructions=False)
    row = find_row(record, "add_one", "inductor", 3)
    assert row["skipped"] is None and row["error"] is None
    assert row["wrong_elements"]["total"] == 0
    assert row["cost_skipped"] == "torch 9 has no profiler events"
    correctness = AddOneCorrectness()
    correctness.setup(record, "add_one", "inductor", 3)
    assert correctness.track_wrong_elements(record, "add_one", "inductor", 3) == 0
    with pytest.raises(Unsupported, match="add_one.add_one \\(n=3\\): not costed: torch 9 has no"):
        AddOneCost().setup(record, "add_one", 3)


def test_a_kernel_loop_the_parser_cannot_read_fails_the_row_naming_it(monkeypatch):
    """The real compile and its verdict; the wrapper's first C++ loop gets a header of a form
    the loop parser does not read (a range-based for)."""

    def capture_then_garble(fn, inputs, fullgraph=True):
        compiled, wrappers = compile_and_capture(fn, inputs, fullgraph)
        kernel_at = wrappers[0].index("async_compile.cpp")
        head, tail = wrappers[0][:kernel_at], wrappers[0][kernel_at:]
        garbled = re.sub(r"\bfor\s*\(", "for (auto x0 : unread_range) for(", tail, count=1)
        assert garbled != tail
        return compiled, [head + garbled]

    monkeypatch.setattr(probe, "compile_and_capture", capture_then_garble)
    record = probe_scenario(ADD_ONE, backends=("inductor",), count_instructions=False)
    row = find_row(record, "add_one", "inductor", 3)
    assert row["wrong_elements"]["total"] == 0, row  # the verdict was measured first
    assert "UnreadableCode" in row["error"] and "auto x0 : unread_range" in row["error"], row
    assert row["full_length_loops"] is None


def test_a_call_that_enters_no_compiled_graph_fails_listing_the_events_seen():
    x = torch.arange(3, dtype=torch.float32)
    marks = r"shows no '## Call CompiledFxGraph' nor 'Torch-Compiled Region'"
    with pytest.raises(RuntimeError, match=marks + r".*events seen: .*aten::add_"):
        profile_warm_call(add_one, [x])


def test_a_compiled_call_counts_its_entrypoint():
    compiled = build(add_one, "inductor")
    x = torch.arange(3, dtype=torch.float32)
    with torch.no_grad():
        compiled(x)
    figures = profile_warm_call(compiled, [x])
    assert figures["entrypoint_calls"] == 1, figures


def test_the_timed_function_is_compiled_checked_and_timed_without_grad(monkeypatch):
    """Like the verdict, scratch, floor and kept code: grad mode is in dynamo's guards, so a
    call with grad would time another compile than the one verified."""
    grad_modes = []

    def recording_build(fn, backend, fullgraph=True):
        compiled = build(fn, backend, fullgraph)

        def call(*args):
            grad_modes.append(torch.is_grad_enabled())
            return compiled(*args)

        return call

    monkeypatch.setattr(asv_classes, "build", recording_build)
    monkeypatch.setattr(asv_classes, "_TIMED", {})
    monkeypatch.setitem(asv_classes._SCENARIOS, ADD_ONE.name, ADD_ONE)
    record = {"scenario": ADD_ONE.name}
    asv_classes._prepare_timed_call(record, "add_one", 3)
    asv_classes.Cost.time_warm_call(None, record, "add_one", 3)
    assert grad_modes == [False, False, False]  # compile, checked call, timed call
    # asv runs the setup again before every sample: the compiled, checked function is kept
    asv_classes._prepare_timed_call(record, "add_one", 3)
    asv_classes.Cost.time_warm_call(None, record, "add_one", 3)
    assert grad_modes == [False, False, False, False]  # one more timed call, nothing else


def _costed(record):
    rows = [r for r in record["rows"] if r["backend"] == "inductor" and r["scratch_bytes"]]
    if not rows:
        pytest.skip(f"no swap control is compiled correctly on torch {torch.__version__}")
    return rows


def _specs(record, rows):
    return [
        instructions.case_spec(str(i), snapshot_swap.SWAP, row, record["isa"])
        for i, row in enumerate(rows)
    ]


def _run_counting_child(folder, cases) -> dict:
    """A zygote and its counting fork without valgrind: the collection toggles do nothing."""
    zygote = instructions.Zygote.launch(folder, prefix=[])
    try:
        report = zygote.report(cases, timeout=600)
    finally:
        zygote.stop()
    assert report["identity"] == instructions._identity()  # the torch and Python counted in
    return {key: report[key] for key in ("counted", "broken")}


def test_the_counting_child_checks_the_kept_code_and_its_contract(swap_record, tmp_path):
    record, _ = swap_record
    cases = _specs(record, _costed(record))
    report = _run_counting_child(tmp_path, cases)
    assert report == {"counted": [case["key"] for case in cases], "broken": {}}


def test_the_counting_child_refuses_code_other_than_the_kept_kernels(swap_record, tmp_path):
    record, _ = swap_record
    kept_row, edited_row = _costed(record)[0], dict(_costed(record)[0])
    edited = tmp_path / "edited"
    shutil.copytree(kept_row["code_dir"], edited)
    (edited / "kernels.cpp").write_text((edited / "kernels.cpp").read_text() + "// edited\n")
    edited_row["code_dir"] = str(edited)
    report = _run_counting_child(tmp_path, _specs(record, [kept_row, edited_row]))
    assert report["counted"] == ["0"]  # the other case is still counted
    assert list(report["broken"]) == ["1"]
    assert (
        "edited/wrapper.py: its C++ is not the kernels.cpp kept beside it" in report["broken"]["1"]
    )


def test_the_counting_child_fails_on_code_that_breaks_the_contract(swap_record, tmp_path):
    """The kept code of a control Inductor miscompiles on this build, counted as if correct."""
    record, _ = swap_record
    wrong = [
        r
        for r in record["rows"]
        if r["backend"] == "inductor" and r["wrong_elements"]["total"] and r["code_dir"]
    ]
    if not wrong:
        pytest.skip(f"no swap control is miscompiled on torch {torch.__version__}")
    row = dict(wrong[0])
    control = snapshot_swap.SWAP.control(row["control"])
    row["input_order"] = graph_input_order(control.fn, snapshot_swap.make_case(row["n"]).inputs)
    cases = _specs(record, [row, row])
    cases[1]["isa"] = "another-isa"  # as if generated on another machine
    report = _run_counting_child(tmp_path, cases)
    assert report["counted"] == []
    assert "the first call of the counted code broke the contract" in report["broken"]["0"]
    assert "here Inductor builds" not in report["broken"]["0"]
    assert f"for {record['isa']}, not for the another-isa" in report["broken"]["1"]


def test_a_zygote_started_early_waits_for_its_cases_and_counts_each_hand_over(
    swap_record, tmp_path
):
    """A probe starts the zygote before its controls compile; it does nothing but import until
    cases come, and forks a child for each hand-over (natively here: the toggles do nothing).
    An empty hand-over (asking whether it runs) forks nothing."""
    record, _ = swap_record
    cases = _specs(record, _costed(record))
    zygote = instructions.Zygote.launch(tmp_path, prefix=[])
    try:
        time.sleep(1)
        assert zygote._popen.poll() is None  # still waiting
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as asking:
            asking.connect(zygote.address)
        first = zygote.report(cases, timeout=600)
        second = zygote.report(cases[:1], timeout=600)
        assert zygote._popen.poll() is None  # it stays for the next hand-over
    finally:
        zygote.stop()
    assert first["counted"] == [case["key"] for case in cases] and first["broken"] == {}
    assert second["counted"] == [cases[0]["key"]]
    assert first["dumps"] != second["dumps"]  # one child each, named by its process id


def test_a_zygote_leaves_when_the_process_that_started_it_does(tmp_path):
    """asv's forkserver (or a probe) that started a zygote may be killed: the zygote must not
    stay behind, nor its socket file."""
    script = (
        "import sys; from pathlib import Path; from benchmarks.probes import instructions; "
        "z = instructions.Zygote.launch(Path(sys.argv[1]), prefix=[]); "
        "print(z._popen.pid, z.address)"
    )
    started = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        capture_output=True, text=True, timeout=300, cwd=ROOT, check=True,
    )  # fmt: skip
    pid, address = int(started.stdout.split()[-2]), started.stdout.split()[-1]
    deadline = time.monotonic() + 120  # it imports torch first, then sees its parent gone
    while time.monotonic() < deadline and _running(pid):
        time.sleep(0.5)
    assert not _running(pid), f"zygote {pid} outlived the process that started it"
    assert not Path(address).exists()


def _running(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return status != "Z"  # a zombie has left; only its exit status waits for a parent


def test_a_counting_zygote_that_dies_before_its_cases_fails_loudly(tmp_path):
    """A valgrind that cannot start (here: a prefix that exits at once) is an error naming the
    exit code, not a silent missing count."""
    zygote = instructions.Zygote.launch(
        tmp_path, prefix=[sys.executable, "-c", "raise SystemExit(3)"]
    )
    try:
        zygote._popen.wait(60)
        with pytest.raises(RuntimeError, match=r"callgrind run failed \(exit 3\)"):
            zygote.report([{"key": "0"}], timeout=60)
    finally:
        zygote.stop()


def test_a_count_that_times_out_stops_its_child_and_the_zygote_serves_the_next(tmp_path):
    """A fork that never finishes (here: kept code that sleeps as it loads) would hold the
    zygote, which serves one hand-over at a time, from every later count: the timeout stops it
    and says so."""
    hanging = tmp_path / "hanging"
    hanging.mkdir()
    (hanging / "wrapper.py").write_text("import time\ntime.sleep(3600)\n")
    (hanging / "kernels.cpp").write_text("")  # no C++ in it: the kept-code check passes
    zygote = instructions.Zygote.launch(tmp_path / "zygote", prefix=[])
    try:
        assert zygote.report([], timeout=300)["counted"] == []  # imported and serving
        with pytest.raises(RuntimeError, match=r"did not finish in 5 s; its counting child") as err:
            zygote.report([{"key": "0", "code_dir": str(hanging)}], timeout=5)
        pid = int(re.search(r"\(process (\d+)\)", str(err.value)).group(1))
        assert zygote.report([], timeout=60)["counted"] == []  # not held by the stopped fork
        assert not _running(pid)
    finally:
        zygote.stop()


def test_a_probe_counts_in_the_zygote_its_builds_forkserver_started(
    swap_record, monkeypatch, tmp_path
):
    """Under asv the forkserver serves the build (`serve_build`); a setup_cache finds that
    zygote by its machine, build, ISA and Python, counts in a fork of it and leaves it running."""
    record, _ = swap_record
    monkeypatch.setenv("WRITEBACK_CACHE", str(tmp_path / "cache"))
    folder = instructions._shared_folder()
    address = instructions._address(folder)
    served = instructions.Zygote.launch(folder, address=address, prefix=[], fresh_folder=True)
    try:
        with pytest.raises(OSError):  # the address is taken while it runs
            instructions.Zygote.launch(tmp_path / "other", address=address, prefix=[])
        with instructions.started() as counter:
            assert counter.started_by == "this build's forkserver"
            assert counter.address == address
            report = counter.report(_specs(record, _costed(record)), timeout=600)
        assert served._popen.poll() is None  # the probe does not stop the build's zygote
    finally:
        served.stop()
    assert report["broken"] == {} and report["dumps"].startswith(str(folder))


def test_no_shared_zygote_means_the_probe_starts_its_own(monkeypatch, tmp_path):
    """Outside asv's forkserver no zygote serves the build: `started` launches one and stops it."""
    monkeypatch.setenv("WRITEBACK_CACHE", str(tmp_path / "cache"))
    assert instructions.Zygote.shared() is None
    launched = []
    real_launch = instructions.Zygote.launch

    def launch(folder, **kwargs):
        launched.append(real_launch(folder, prefix=[], **kwargs))
        return launched[-1]

    monkeypatch.setattr(instructions.Zygote, "launch", staticmethod(launch))
    with instructions.started() as counter:
        assert counter is launched[0] and counter.started_by == f"process {os.getpid()}"
    assert launched[0]._popen.poll() is not None  # stopped on exit
    assert not Path(launched[0].address).exists()  # and its socket file removed


FOREIGN_CLIENT = """
import json, socket, sys
address, spec = json.loads(sys.stdin.read())
connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
connection.settimeout(60)
try:
    connection.connect(address)
except OSError as exc:
    print(f"refused: {exc.strerror}")
    raise SystemExit
try:
    connection.sendall(f"{spec}\\n".encode())
    answer = connection.recv(4096)
except OSError as exc:
    answer = exc.strerror
print(f"closed: {answer!r}")
"""
"""A client that hands a spec to the zygote at `address` and says how it was answered."""


def _as_another_user() -> list[str]:
    """The command prefix that runs a program as user and group 65534 (nobody); a skip where
    this process cannot switch users."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv (util-linux) is not installed: no way to run a client as another user")
    prefix = [setpriv, "--reuid", "65534", "--regid", "65534", "--clear-groups"]
    tried = subprocess.run([*prefix, sys.executable, "-c", "pass"], capture_output=True, text=True)
    if tried.returncode != 0:
        pytest.skip(f"cannot run {sys.executable} as user 65534 here: {tried.stderr.strip()}")
    return prefix


def _planted_spec(folder: Path) -> Path:
    """A spec whose one case is kept code that, once loaded, writes `loaded` beside it."""
    code = folder / "code"
    code.mkdir(parents=True)
    (code / "wrapper.py").write_text(
        "from pathlib import Path\nPath(__file__).with_name('loaded').write_text('ran')\n"
    )
    (code / "kernels.cpp").write_text("")  # no C++ in it: the kept-code check passes
    spec = folder / "spec.json"
    spec.write_text(json.dumps({
        "calls": 1, "cases": [{"key": "0", "code_dir": str(code)}],
        "report": str(folder / "report.json"), "inductor_cache": None,
    }))  # fmt: skip
    return spec


def _written_beside(spec: Path) -> list[str]:
    """What appeared in the planted spec's folder besides what `_planted_spec` put there."""
    planted = {"spec.json", "code", "code/wrapper.py", "code/kernels.cpp"}
    return sorted(
        str(path.relative_to(spec.parent))
        for path in spec.parent.rglob("*")
        if str(path.relative_to(spec.parent)) not in planted
    )


def _foreign_hand_over(address: str, spec: Path, pass_fds=()) -> str:
    """How the zygote answered a hand-over of `spec` from a client running as user 65534."""
    run = subprocess.run(
        [*_as_another_user(), sys.executable, "-c", FOREIGN_CLIENT],
        input=json.dumps([address, str(spec)]), capture_output=True, text=True, timeout=120,
        pass_fds=pass_fds, cwd="/",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    return run.stdout.strip()


def test_another_user_cannot_reach_the_counting_zygote(tmp_path):
    """Whoever reaches the zygote has it load and run Python as the user who started it: a
    client running as another user is refused, and nothing it names is loaded or written."""
    _as_another_user()
    spec = _planted_spec(tmp_path / "foreign")
    zygote = instructions.Zygote.launch(tmp_path / "zygote", prefix=[])
    try:
        assert zygote.report([], timeout=300)["counted"] == []  # imported, serving its owner
        answer = _foreign_hand_over(zygote.address, spec)
        assert zygote.report([], timeout=60)["counted"] == []  # and serving it still
    finally:
        zygote.stop()
    assert _written_beside(spec) == []
    assert answer == "refused: Permission denied"


def test_the_zygote_closes_a_connection_from_another_user_unread(tmp_path):
    """Behind the private folder, the zygote's own check: here the socket file is opened to
    everyone and the other user's client reaches it through an inherited descriptor, past the
    folder. The zygote closes the connection before reading it; nothing is loaded."""
    _as_another_user()
    spec = _planted_spec(tmp_path / "foreign")
    zygote = instructions.Zygote.launch(tmp_path / "zygote", prefix=[])
    try:
        assert zygote.report([], timeout=300)["counted"] == []
        os.chmod(zygote.address, 0o777)
        descriptor = os.open(zygote.address, os.O_PATH)
        try:
            answer = _foreign_hand_over(f"/proc/self/fd/{descriptor}", spec, (descriptor,))
        finally:
            os.close(descriptor)
        assert zygote.report([], timeout=60)["counted"] == []
    finally:
        zygote.stop()
    assert _written_beside(spec) == []
    assert answer.startswith("closed: ")
    said = (tmp_path / "zygote" / "stderr.txt").read_text()
    assert "closed a connection from another user, unread" in said


@pytest.fixture
def short_tmp():
    """A temporary folder short enough to hold sockets' folders (pytest's may be too long)."""
    folder = Path(tempfile.mkdtemp(prefix="wb-"))
    yield folder
    shutil.rmtree(folder)


def test_the_sockets_folder_is_private_or_refused(short_tmp, monkeypatch):
    """The zygotes' sockets live in a folder only their user may enter: created 0700, and an
    existing one another user could enter, or that is not a folder of this user's, refused."""
    monkeypatch.setattr(tempfile, "tempdir", str(short_tmp))
    folder = instructions._private_folder()
    assert folder.parent == short_tmp and stat.S_IMODE(folder.stat().st_mode) == 0o700
    folder.chmod(0o755)
    with pytest.raises(PermissionError, match=r"mode 0700 \(it is drwxr-xr-x, owner"):
        instructions._private_folder()
    folder.rmdir()
    folder.symlink_to(short_tmp)
    with pytest.raises(PermissionError, match="Remove it, or set TMPDIR"):
        instructions._private_folder()
    monkeypatch.setattr(tempfile, "tempdir", str(short_tmp / ("x" * 80)))
    with pytest.raises(OSError, match="set TMPDIR to a shorter folder"):
        instructions._private_folder()


def test_a_socket_file_a_gone_zygote_left_is_replaced_and_a_served_one_is_not(
    short_tmp, monkeypatch
):
    monkeypatch.setattr(tempfile, "tempdir", str(short_tmp))
    address = str(instructions._private_folder() / "a.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as gone:
        gone.bind(address)  # its file stays after it closes
    with instructions._listening(address) as served:
        with pytest.raises(OSError, match="a callgrind zygote listens on it"):
            instructions._listening(address)
        assert served.getsockname() == address


def test_the_graph_takes_its_inputs_in_first_use_order():
    order = graph_input_order(snapshot_swap.foreach_clones, snapshot_swap.make_case(3).inputs)
    assert order == ["b", "a"]  # b.clone() comes first


def test_valgrind_cannot_count_avx512_code_and_says_so():
    """valgrind hides AVX512 from what it runs: Inductor would rebuild avx512 source for avx2
    (half the elements moved per vector at large N). That is a skip with the reason."""
    problem = instructions.valgrind_problem("avx512")
    assert problem and "AVX512" in problem and "ISA=avx2" in problem
