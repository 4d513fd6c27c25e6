"""The shims of benchmarks/compat.py, each under the releases it serves: where no wheel of
them is at hand (CI has torch 2.13.0 only), under a faked `torch.__version__`. A shim turns
into a skip only what a release says it lacks (an `Unsupported`, a skip reason naming the
first release with it); anything else raised inside them propagates, or stays a failure."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from benchmarks import compat
from benchmarks.probes import probe

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def client_module(tmp_path, monkeypatch):
    """Write a module named `writeback_fake_client` whose import runs `body`; return its name."""
    name = "writeback_fake_client"
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)

    def write(body: str) -> str:
        (tmp_path / f"{name}.py").write_text(body + "\n")
        return name

    return write


@pytest.mark.parametrize(
    "body",
    ["import writeback_no_such_dependency", "from torch import writeback_no_such_api",
     "torch_api = __import__('torch').writeback_no_such_attribute"],
    ids=["missing-dependency", "missing-name", "missing-attribute"],
)  # fmt: skip
def test_a_client_this_release_cannot_import_is_a_reason(client_module, body):
    problem = compat.import_problem(client_module(body))
    assert problem.startswith(
        f"writeback_fake_client cannot be imported with torch {torch.__version__}"
    )
    assert "writeback_no_such_" in problem


def test_a_client_that_raises_anything_else_propagates(client_module):
    name = client_module("raise RuntimeError('the client is broken')")
    with pytest.raises(RuntimeError, match="the client is broken") as raised:
        compat.import_problem(name)
    assert not isinstance(raised.value, compat.Unsupported)


def test_no_compiler_is_unsupported_and_any_other_failure_propagates(monkeypatch):
    from torch._inductor import cpp_builder
    from torch._inductor.exc import InvalidCxxCompiler

    def no_compiler():
        raise InvalidCxxCompiler()

    monkeypatch.setattr(cpp_builder, "get_cpp_compiler", no_compiler)
    with pytest.raises(compat.Unsupported):
        compat.inductor_cxx()

    def broken():
        raise RuntimeError("the compiler search itself is broken")

    monkeypatch.setattr(cpp_builder, "get_cpp_compiler", broken)
    with pytest.raises(RuntimeError, match="compiler search itself is broken") as raised:
        compat.inductor_cxx()
    assert not isinstance(raised.value, compat.Unsupported)  # a RuntimeError too: not a skip


def test_the_interop_thread_count_is_set_only_while_it_is_not_one(monkeypatch):
    """On torch 2.1.0 a second set_num_interop_threads aborts the process from C++
    (results/logs/compat-torch-2.1.0/configs-2.1.0.log): set it only when it is not 1."""
    calls = []
    monkeypatch.setattr(torch, "set_num_interop_threads", calls.append)
    monkeypatch.setattr(torch, "get_num_interop_threads", lambda: 1)
    compat.set_single_thread()
    assert calls == []
    monkeypatch.setattr(torch, "get_num_interop_threads", lambda: 4)
    compat.set_single_thread()
    assert calls == [1]


@pytest.fixture
def old_torch(monkeypatch):
    """Make the running torch say it is another release (`torch.__version__`)."""

    def pretend(version: str) -> None:
        monkeypatch.setattr(torch, "__version__", version)

    return pretend


# --- the compiled-call marker: a release chooses its profiler range -------------------------

CALL_ON_2_1 = ["TorchDynamo Cache Lookup", "aten::empty_strided", "[memory]",
               "inductor::_reinterpret_tensor"]  # fmt: skip
"""The events of one warm compiled call of `stack_buffer` on torch 2.1.0 (its check's log)."""


def test_a_release_before_2_2_counts_its_compiled_calls_by_the_cache_lookup(old_torch):
    old_torch("2.1.0+cu121")
    assert compat.entrypoint_event(CALL_ON_2_1) == compat.LOOKUP_EVENT
    old_torch("2.2.0")  # its frame evaluation marks every compiled region: no lookup counted
    with pytest.raises(RuntimeError, match="no '## Call CompiledFxGraph' nor 'Torch-Compiled"):
        compat.entrypoint_event(CALL_ON_2_1)
    region = [*CALL_ON_2_1, "Torch-Compiled Region: 0/0"]
    assert compat.entrypoint_event(region) == compat.REGION_EVENT
    assert compat.entrypoint_event([*region, "## Call CompiledFxGraph fabc ##"]) == (
        compat.GRAPH_EVENT
    )


def test_an_old_release_counts_one_cache_lookup_a_warm_compiled_call(old_torch):
    """Every release since 2.1 opens the lookup range (2.13 here too): counted as 2.1.x's
    marker, one warm call of a compiled function is one entrypoint call."""
    from benchmarks.compiled import build
    from benchmarks.probes.runtime import profile_warm_call

    compiled = build(lambda x: x + 1, "aot_eager")
    x = torch.arange(3, dtype=torch.float32)
    with torch.no_grad():
        compiled(x)
        names = compat.event_names(compat.profiled_call(compiled, x))
    old_torch("2.1.0")
    assert compat.entrypoint_event(names) == compat.LOOKUP_EVENT
    assert profile_warm_call(compiled, [x])["entrypoint_calls"] == 1


# --- an error names the exception behind it -------------------------------------------------


def _backend_failure(exc: Exception) -> Exception:
    """What torch.compile raises when its backend raises `exc` (dynamo's
    BackendCompilerFailed, whose first line is only `backend='...' raised:`)."""

    def backend(graph_module, example_inputs):
        raise exc

    torch._dynamo.reset()
    with pytest.raises(Exception) as raised:
        torch.compile(lambda x: x * 2, backend=backend, fullgraph=True)(torch.ones(2))
    return raised.value


def _bitcast_failure() -> Exception:
    """What torch.compile raises on 2.1.0-2.3.1 where Inductor lowers `x.view(torch.int32)` of
    an int64 x: the lowering's NotImplementedError, in a LoweringException (raised `from None`),
    in BackendCompilerFailed."""
    from torch._inductor.exc import LoweringException

    bitcast = NotImplementedError(
        "bitcast torch.int64 to different bitwidth type torch.int32 is not supported yet."
    )
    return _backend_failure(LoweringException(bitcast, torch.ops.aten.view.dtype, [], {}))


def test_an_error_names_the_exception_a_backend_raised():
    error = probe._describe_error(_backend_failure(NotImplementedError("planted: bitcast")))
    assert error.startswith("BackendCompilerFailed: backend='backend' raised: "
                            "NotImplementedError: planted: bitcast (at "), error  # fmt: skip
    silent = compat.exception_summary(_backend_failure(AssertionError()))
    assert silent == "BackendCompilerFailed: backend='backend' raised: AssertionError"


# --- a capability an old release lacks is a skip there, a failure after --------------------


def test_a_capability_an_old_release_lacks_is_a_skip_naming_the_first_release_with_it(old_torch):
    failure = _bitcast_failure()
    old_torch("2.1.0+cu121")
    row = {}
    probe.record_failure(row, failure)
    assert row == {"skipped": (
        "torch 2.1.0+cu121 cannot lower a dtype view to a dtype of another bit width "
        "(Inductor's to_dtype_bitcast) (first in torch 2.4.0): "
        "torch._inductor.exc.LoweringException: NotImplementedError: bitcast torch.int64 to "
        "different bitwidth type torch.int32 is not supported yet.")}  # fmt: skip
    old_torch("2.4.0")  # a release that lowers it: the same failure is a failure
    row = {}
    probe.record_failure(row, failure)
    assert list(row) == ["error"]
    assert row["error"].startswith(
        "BackendCompilerFailed: backend='backend' raised: "
        "LoweringException: NotImplementedError: bitcast torch.int64"
    )


@pytest.mark.parametrize(
    ("raised", "release", "first"),
    [(RuntimeError("\nFound following user inputs located at [0, 1] are mutated. This is "
                   "currently banned in the aot_export workflow.\nIf you need ..."),
      "2.1.2", "2.2.0"),
     (torch._dynamo.exc.Unsupported("call_function args: NestedUserFunctionVariable() "), "2.1.0",
      "2.4.0"),
     (torch._dynamo.exc.Unsupported("torch.func.vmap capture is disabled, it can be turned on by "
                                    "setting `torch._dynamo.config.capture_func_transforms=True`"),
      "2.3.1", "2.4.0")],
    ids=["export-mutated-inputs", "vmap-of-grad", "vmap-capture-disabled"],
)  # fmt: skip
def test_each_limitation_is_a_skip_only_before_its_first_release(old_torch, raised, release,
                                                                  first):  # fmt: skip
    old_torch(release)
    assert f"(first in torch {first})" in compat.limitation(raised)
    old_torch(first)
    assert compat.limitation(raised) is None
    old_torch(release)
    assert compat.limitation(RuntimeError("another failure")) is None
    assert compat.limitation(compat.Unsupported(str(raised))) is None  # not dynamo's class


def test_a_limitation_reaches_the_probe_row_as_a_skip(old_torch, monkeypatch):
    """The catalogue's `dtype_view_then_mutate` under Inductor on a release before 2.4.0: the
    compile's NotImplementedError is the row's skip (asv's n/a), and eager still measures."""
    from benchmarks import aliasing

    def compile_fails(fn, inputs, fullgraph=True):
        raise _bitcast_failure()

    monkeypatch.setattr(probe, "compile_and_capture", compile_fails)
    old_torch("2.3.1")
    record = probe.probe_scenario(
        aliasing.CATALOGUE,
        sizes=("small",),
        backends=("eager", "inductor"),
        controls=("dtype_view_then_mutate",),
        count_instructions=False,
    )
    inductor = probe.find_row(record, "dtype_view_then_mutate", "inductor", "small")
    assert inductor["error"] is None
    assert inductor["skipped"].startswith("torch 2.3.1 cannot lower a dtype view")
    eager = probe.find_row(record, "dtype_view_then_mutate", "eager", "small")
    assert eager["skipped"] is None and eager["wrong_elements"]["total"] == 0


# --- every skip names the first release with what is missing --------------------------------


def _required_names() -> set[str]:
    from benchmarks import registry
    from benchmarks.probes.configs import CONFIGURATIONS, mode_name

    names = {name for scenario in registry.scenarios().values() for control in scenario.controls
             for name in control.requires}  # fmt: skip
    for config in CONFIGURATIONS.values():
        names.update(config.requires)
        if mode := config.compile_kwargs.get("mode"):
            names.add(mode_name(mode))
    return names


def test_everything_a_scenario_requires_has_its_first_release_in_the_table():
    from tools import builds

    releases = {b.spec for b in builds.read(ROOT / "builds-long.txt")}
    assert _required_names() - set(compat.FIRST_RELEASE) == set()
    assert {first for first in compat.FIRST_RELEASE.values()} <= releases
    assert {known.first for known in compat.LIMITATIONS} <= releases


def test_a_missing_api_names_its_first_release(old_torch):
    old_torch("2.3.1")
    assert compat.lacking(["torch.library.custom_op", "torch._writeback_no_such_api"]) == (
        "torch 2.3.1 has no torch.library.custom_op (first in torch 2.4.0), "
        "torch._writeback_no_such_api (its first release is not in benchmarks/compat.py "
        "FIRST_RELEASE)"
    )


def test_a_build_without_aoti_packaging_a_mode_or_the_bisector_names_the_first_release(
    monkeypatch, old_torch
):
    from benchmarks import attribution
    from benchmarks.probes.configs import CONFIGURATIONS, configuration_problem

    old_torch("2.5.1")
    monkeypatch.delattr(torch._inductor, "aoti_load_package", raising=False)
    assert configuration_problem(CONFIGURATIONS["aoti"]) == (
        "torch 2.5.1 has no torch._inductor.aoti_load_package (first in torch 2.6.0)"
    )
    monkeypatch.setattr(torch._inductor, "list_mode_options", lambda: {"default": {}})
    assert configuration_problem(CONFIGURATIONS["max_autotune"]) == (
        "torch 2.5.1 has no torch.compile mode 'max-autotune-no-cudagraphs' (first in torch 2.1.0)"
    )
    monkeypatch.setitem(sys.modules, "torch._inductor.compiler_bisector", None)
    monkeypatch.delattr(torch._inductor, "compiler_bisector", raising=False)
    found, why = attribution._bisect(lambda: True)
    assert found is None
    assert why == "torch 2.5.1 has no torch._inductor.compiler_bisector (first in torch 2.6.0)"


# --- a client library: the torch releases it declares ----------------------------------------


@pytest.fixture
def declared_client(tmp_path, monkeypatch, client_module):
    """The fake client module, installed as a distribution whose metadata says `requires`."""

    def install(*requires: str) -> str:
        name = client_module("VALUE = 1")
        info = tmp_path / f"{name}-1.0.dist-info"
        info.mkdir()
        lines = ["Metadata-Version: 2.1", f"Name: {name}", "Version: 1.0"]
        (info / "METADATA").write_text("\n".join(lines + [f"Requires-Dist: {r}" for r in requires])
                                       + "\n")  # fmt: skip
        (info / "top_level.txt").write_text(name + "\n")
        return name

    return install


def test_a_client_is_not_used_on_a_torch_it_does_not_support(declared_client, old_torch):
    name = declared_client("numpy", 'torch>=2.99; extra == "old"', "torch>=2.11.0a0,!=2.12.0")
    old_torch("2.1.0+cu121")
    assert compat.import_problem(name) == (
        f"{name} 1.0 requires torch>=2.11.0a0,!=2.12.0 (its package metadata), not torch "
        f"2.1.0+cu121: the suite measures {name} 1.0 on torch 2.11.0 and later "
        "(tools/install_build.py CLIENTS pins it)"
    )
    old_torch("2.12.0")
    assert "not torch 2.12.0" in compat.import_problem(name)
    for supported in ("2.11.0", "2.11.0.dev20260101+cpu", "2.15.0"):
        old_torch(supported)
        assert compat.import_problem(name) is None


def test_tensordict_as_installed_skips_before_torch_2_11(old_torch):
    """The client tools/install_build.py installs, 0.15.3, declares torch>=2.11.0a0: on 2.1.0
    it would fail to import (`is_compiling`), and on a release it imports with it is still
    not one it supports."""
    pytest.importorskip("tensordict")
    old_torch("2.10.0")
    assert compat.import_problem("tensordict").startswith(
        "tensordict 0.15.3 requires torch>=2.11.0a0 (its package metadata), not torch 2.10.0"
    )


@pytest.mark.parametrize(
    ("requirement", "clauses"),
    [("torch>=2.11.0a0", [(">=", "2.11.0a0")]), ("torch (==2.2.2)", [("==", "2.2.2")]),
     ("torch", []), ("torchvision>=0.20", None), ('torch>=2.3; extra == "tests"', None),
     ("numpy", None)],
)  # fmt: skip
def test_a_torch_requirement_is_read_from_its_clauses(requirement, clauses):
    assert compat.torch_clauses(requirement) == clauses


def test_a_torch_requirement_the_suite_cannot_read_is_an_error():
    with pytest.raises(ValueError, match="cannot read the torch requirement 'torch~=2.3'"):
        compat.torch_clauses("torch~=2.3")


# --- an old release's own fault stays a failure, known and explained ------------------------


def test_the_2_1_wrapper_that_uses_an_unallocated_buffer_is_known_on_2_1_only():
    from benchmarks.known_failures import known_failure

    error = "NameError: name 'buf1' is not defined"
    assert "never allocates" in known_failure(error, "2.1.2+cu121").reason
    assert known_failure(error, "2.2.0+cu121") is None
    assert known_failure(error, "2.13.0+cpu") is None
    assert known_failure("NameError: name 'x' is not defined", "2.1.0+cu121") is None


# --- the compiler bisector's state, with or without `in_process_cache` ----------------------


def test_the_bisector_keeps_its_state_in_the_folder_given_on_every_release(tmp_path):
    """2.6.x's bisector (its first releases) has no `in_process_cache`: its `get_dir()`, under
    Inductor's cache directory, is the only place; 2.7.0's and later name the folder in it."""

    class FirstBisector:
        @classmethod
        def get_dir(cls):
            return "/inductor-cache/bisect"

    class LaterBisector:
        in_process_cache = None

        @classmethod
        def get_dir(cls):
            return f"{cls.in_process_cache}/bisect"

    with compat.bisector_state_in(FirstBisector, str(tmp_path)):
        assert FirstBisector.get_dir() == str(tmp_path)
    assert FirstBisector.get_dir() == "/inductor-cache/bisect"
    with compat.bisector_state_in(LaterBisector, str(tmp_path)):
        assert LaterBisector.get_dir() == f"{tmp_path}/bisect"
    assert LaterBisector.in_process_cache is None


def test_the_shared_header_build_is_read_in_the_installed_inductor(monkeypatch):
    """torch 2.1 and 2.2 build a C++ wrapper through `load_inline(use_pch=True)`, one
    precompiled header inside the installed torch; 2.3 on do not (read in their sources). The
    answer comes from the installed Inductor's own source, not from its version: the same
    installed torch answers both ways when its codecache's source is made to say so."""
    import inspect

    import torch._inductor.codecache as codecache

    assert compat.cpp_wrapper_shares_a_header_build() == (
        compat.release(torch.__version__)[:2] < (2, 3)
    )
    source, answer = inspect.getsource, compat.cpp_wrapper_shares_a_header_build
    try:
        for text, expected in (("load_inline(use_pch=True)", True), ("load_inline()", False)):
            monkeypatch.setattr(inspect, "getsource", lambda module, text=text: (
                text if module is codecache else source(module)))  # fmt: skip
            answer.cache_clear()  # the answer is kept per process: read the source again
            assert answer() is expected
    finally:
        monkeypatch.undo()
        answer.cache_clear()


LOCKED = """
import json, os, sys, time
from pathlib import Path
from benchmarks import compat
compat.cpp_wrapper_shares_a_header_build = lambda: True  # as on torch 2.1 and 2.2
here = Path(os.environ["TMPDIR"])
(here / f"ready-{os.getpid()}").touch()
while len(list(here.glob("ready-*"))) < 2:  # both processes imported torch: start together
    time.sleep(0.01)
with compat.one_cpp_wrapper_build_at_a_time(sys.argv[1] == "cpp"):
    start = time.monotonic()
    time.sleep(1.0)
    print(json.dumps([start, time.monotonic()]))
"""


@pytest.mark.parametrize("kind, overlap", [("cpp", False), ("python", True)])
def test_c_plus_plus_wrappers_of_the_2_1_and_2_2_line_are_built_one_at_a_time(
    tmp_path, kind, overlap
):
    """Two processes compiling C++ wrappers at once on torch 2.1-2.2 both write the one shared
    precompiled header and one reads it half written (2.2.0's `foreach_clones` under
    cpp_wrapper, measured twice): the lock lets one process in at a time; a compile that is
    not a C++ wrapper is not held back."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp_path)}
    runs = [subprocess.Popen([sys.executable, "-c", LOCKED, kind], env=env, text=True,
                             stdout=subprocess.PIPE) for _ in range(2)]  # fmt: skip
    (a_start, a_end), (b_start, b_end) = sorted(json.loads(r.communicate()[0]) for r in runs)
    assert all(r.returncode == 0 for r in runs)
    assert (b_start < a_end) == overlap, (a_start, a_end, b_start, b_end)


@pytest.mark.parametrize("shim", [False, True])
def test_a_thread_in_fake_mode_leaves_the_cuda_guard_registry_valid_after_the_shim(shim):
    """`compat.fake_cuda_guard_on_this_thread` (torch 2.10-2.11, CUDA builds without a GPU):
    with it called first on the main thread, a thread that enters fake mode and exits leaves
    the registered CUDA guard alive. Without it the build's own behaviour is shown, not
    asserted (2.11.0: the registry left pointing at freed memory, results/logs/
    fake-cuda-guard-2.11.0-amd-avx512.log). Runs `tests/fake_cuda_guard_probe.py` in a
    process of its own: the registry is process-wide."""
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is here: fake mode registers no fake CUDA guard")
    if not hasattr(torch._C, "_ensureCUDADeviceGuardSet"):
        pytest.skip(f"torch {torch.__version__} has no _ensureCUDADeviceGuardSet (before 2.9)")
    if not torch.backends.cuda.is_built():
        pytest.skip(f"torch {torch.__version__} is a CPU-only build: it registers no CUDA guard")
    probe = [sys.executable, "-m", "tests.fake_cuda_guard_probe", *(["--shim"] if shim else [])]
    done = subprocess.run(probe, cwd=ROOT, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["vtable_in_a_library_while_the_thread_lived"], seen
    if shim:
        assert seen["registered_by_the_thread"] == seen["registered_before"], seen
        assert seen["vtable_intact_after_it_exited"], seen
    else:
        print(seen)  # the build's own behaviour: dangling on 2.10-2.11
