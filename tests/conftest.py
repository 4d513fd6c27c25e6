import pytest


@pytest.fixture(autouse=True)
def _artifacts_in_tmp(tmp_path_factory, monkeypatch):
    """Generated code written by the asv classes under test goes to a temporary folder."""
    monkeypatch.setenv("WRITEBACK_ARTIFACTS", str(tmp_path_factory.getbasetemp() / "artifacts"))
    # callgrind takes minutes per probe run: only the asv end-to-end test counts instructions
    monkeypatch.setenv("WRITEBACK_INSTRUCTIONS", "0")
    # attribution recompiles a wrong control tens of times: only tests/test_attribution.py runs it
    monkeypatch.setenv("WRITEBACK_ATTRIBUTION", "0")
