"""Machine identity: a name two CPUs cannot share, its hardware, other CPUs' results refused."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import machine
from tools import asv_project

XEON = "model name\t: Intel(R) Xeon(R) Processor\nflags\t\t: fpu sse sse2 avx avx2 avx512f fma\n"
ROOT = Path(__file__).resolve().parents[1]
EPYC = "model name\t: AMD EPYC 7B13 64-Core Processor\nflags\t\t: fpu sse sse2 avx avx2 fma\n"


@pytest.fixture(autouse=True)
def _no_knobs(monkeypatch):
    for knob in (machine.MACHINE_ENV, machine.ISA_ENV, machine.RESOLVED_ENV):
        monkeypatch.delenv(knob, raising=False)


def test_two_cpus_on_hosts_of_one_name_are_two_machines():
    xeon, epyc = machine.cpu_identity(XEON), machine.cpu_identity(EPYC)
    names = {machine.machine_name(xeon, host="vm"), machine.machine_name(epyc, host="vm")}
    assert len(names) == 2 and all(name.startswith("vm-") for name in names)
    assert xeon["native_isa"] == "avx512" and epyc["native_isa"] == "avx2"
    assert machine.machine_name(epyc, host="vm").startswith("vm-amd-epyc-7b13-")


def test_a_forced_isa_is_a_machine_of_its_own(monkeypatch):
    xeon = machine.cpu_identity(XEON)
    native = machine.machine_name(xeon, host="vm")
    monkeypatch.setenv(machine.ISA_ENV, "avx2")
    assert machine.machine_name(xeon, host="vm") == f"{native}-avx2"
    monkeypatch.setenv(machine.MACHINE_ENV, "lab")
    assert machine.machine_name(xeon, host="vm") == "lab-avx2"
    assert machine.machine_info(xeon)["isa"] == "avx2"


def test_results_of_another_cpu_are_refused(tmp_path, monkeypatch):
    here = machine.cpu_identity()
    folder = tmp_path / "vm"
    folder.mkdir()
    (folder / "abcd1234-virtualenv-py3.11.json").write_text("{}")
    (folder / "machine.json").write_text(json.dumps({"machine": "vm", "cpu": "AMD EPYC"}))
    assert "records no cpu id" in asv_project.identity_problem(tmp_path, "vm")
    other = {**machine.machine_info(), "cpu_id": "000000", "cpu": "AMD EPYC 7B13"}
    (folder / "machine.json").write_text(json.dumps(other))
    problem = asv_project.identity_problem(tmp_path, "vm")
    assert (
        "AMD EPYC 7B13" in problem and here["cpu_id"] in problem and "WRITEBACK_MACHINE" in problem
    )
    (folder / "machine.json").write_text(json.dumps(machine.machine_info()))
    assert asv_project.identity_problem(tmp_path, "vm") is None


def test_the_machine_file_lives_in_the_project_and_records_the_hardware(tmp_path):
    info = asv_project.register("lab", root=tmp_path)
    saved = json.loads((tmp_path / ".asv" / "asv-machine.json").read_text())
    assert saved["lab"] == info and saved["version"] == 1
    assert info["cpu_id"] and info["arch"] and info["num_cpu"] and info["ram"] != "0"


def test_the_name_asv_project_exports_is_taken_as_it_is(monkeypatch):
    """asv's children get the final name: an ISA suffix is never added twice."""
    monkeypatch.setenv(machine.MACHINE_ENV, "lab")
    monkeypatch.setenv(machine.ISA_ENV, "avx2")
    monkeypatch.setenv(machine.RESOLVED_ENV, "lab-avx2")
    assert machine.machine_name() == "lab-avx2"


_ISA_ANSWERS = """
import json, sys
from benchmarks import compat
if sys.argv[1] == "in-turn":
    compat._check_candidates_side_by_side = lambda where: None
isa = compat.vector_isa()
from torch._inductor import cpu_vec_isa
print(json.dumps([isa, [str(candidate) for candidate in cpu_vec_isa.valid_vec_isa_list()]]))
"""


def test_the_isa_candidates_checked_side_by_side_give_inductors_answers(tmp_path):
    """Inductor's ISA check, with its candidates built side by side first, picks what its own
    check one after another picks, and accepts the same candidates (fresh caches, each in a
    process of its own)."""
    pytest.importorskip("torch._inductor.cpu_vec_isa")
    answers = {}
    for way in ("side-by-side", "in-turn"):
        env = {**os.environ, "WRITEBACK_CACHE": str(tmp_path / way)}
        done = subprocess.run([sys.executable, "-c", _ISA_ANSWERS, way], env=env, cwd=ROOT,
                              capture_output=True, text=True, timeout=600)  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        answers[way] = json.loads(done.stdout.strip().splitlines()[-1])
    assert answers["side-by-side"] == answers["in-turn"]


@pytest.mark.parametrize(
    "name", ["../results", "/tmp/x", ".", "..", "lab one", "lab;rm", "a/b", "x" * 101]
)
def test_a_machine_name_that_is_not_a_folder_name_is_refused_naming_the_variable(name, monkeypatch):
    """The name becomes folders that runs empty: a path would empty someone else's."""
    monkeypatch.setenv(machine.MACHINE_ENV, name)
    with pytest.raises(machine.MachineNameError) as refused:
        machine.machine_name(machine.cpu_identity(XEON), host="vm")
    assert str(refused.value).startswith(f"WRITEBACK_MACHINE={name!r} cannot name")
    assert "1-100 characters of A-Z a-z 0-9 . _ -" in str(refused.value)


def test_a_forced_isa_that_is_not_a_name_is_refused_naming_it(monkeypatch):
    monkeypatch.setenv(machine.ISA_ENV, "avx2/../..")
    with pytest.raises(machine.MachineNameError, match=r"^WRITEBACK_ISA='avx2/../..' cannot"):
        machine.machine_name(machine.cpu_identity(XEON), host="vm")


def test_a_folder_name_is_a_machine_name(monkeypatch):
    monkeypatch.setenv(machine.MACHINE_ENV, "Lab_2.b-" + "x" * 92)
    assert machine.machine_name(machine.cpu_identity(XEON), host="vm") == "Lab_2.b-" + "x" * 92


def test_a_machine_name_that_is_a_path_is_refused_before_anything_runs(tmp_path):
    """asv through this project (as `make history` runs it) with WRITEBACK_MACHINE=..: one
    message naming the variable, exit 2, no machine registered under it."""
    env = {**os.environ, machine.MACHINE_ENV: "..", "HOME": str(tmp_path)}
    env.pop(machine.RESOLVED_ENV, None)
    registered = asv_project.machine_file()
    before = registered.read_bytes() if registered.is_file() else None
    run = subprocess.run(
        [sys.executable, "-m", "tools.asv_project", "run", "--dry-run", "NEW"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 2
    assert run.stderr.startswith("writeback: WRITEBACK_MACHINE='..' cannot name a machine")
    assert (registered.read_bytes() if registered.is_file() else None) == before


def _asv_writes_machine_json(name: str, root: Path, results: Path) -> bytes:
    """What `asv run` writes into results/<name>/machine.json from the project's machine file
    (asv's own code: `Machine.load`, then `save`)."""
    from asv.machine import Machine

    Machine.load(machine_name=name, _path=str(asv_project.machine_file(root))).save(str(results))
    return (results / name / "machine.json").read_bytes()


def test_machine_json_is_kept_byte_for_byte_while_the_machine_is_the_same(tmp_path, monkeypatch):
    """A new kernel or another RAM size is not another machine: asv writes the machine.json it
    found again; a field that names the machine (here the core count) changes it."""
    results = tmp_path / "results"
    asv_project.register("lab", root=tmp_path, results=results)
    first = _asv_writes_machine_json("lab", tmp_path, results)
    here = machine.machine_info()
    upgraded = {**here, "os": "Linux 9.9.9-upgraded", "ram": "1"}
    monkeypatch.setattr(machine, "machine_info", lambda: upgraded)
    asv_project.register("lab", root=tmp_path, results=results)
    assert _asv_writes_machine_json("lab", tmp_path, results) == first
    monkeypatch.setattr(machine, "machine_info", lambda: {**upgraded, "num_cpu": "512"})
    asv_project.register("lab", root=tmp_path, results=results)
    rewritten = json.loads(_asv_writes_machine_json("lab", tmp_path, results))
    assert rewritten["num_cpu"] == "512" and rewritten["os"] == "Linux 9.9.9-upgraded"


def test_an_unreadable_machine_json_is_named_and_left_as_it_is(tmp_path):
    recorded = tmp_path / "lab" / "machine.json"
    recorded.parent.mkdir()
    recorded.write_text('{"cpu_id": ')
    with pytest.raises(asv_project.WrongMachine, match="machine.json cannot be read"):
        asv_project.prepare("lab", tmp_path, root=tmp_path)
    assert recorded.read_text() == '{"cpu_id": '
