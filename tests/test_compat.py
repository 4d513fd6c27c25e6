"""The shims turn into `Unsupported` (a skip) only the exceptions by which a release says it
lacks what was asked; anything else raised inside them propagates."""

import sys

import pytest
import torch

from benchmarks import compat


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
