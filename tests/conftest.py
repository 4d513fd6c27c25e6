from pathlib import Path

import pytest

from tools import builds, ledger

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _artifacts_in_tmp(tmp_path_factory, monkeypatch):
    """Generated code written by the asv classes under test goes to a temporary folder."""
    monkeypatch.setenv("WRITEBACK_ARTIFACTS", str(tmp_path_factory.getbasetemp() / "artifacts"))
    # callgrind takes minutes per probe run: only the asv end-to-end test counts instructions
    monkeypatch.setenv("WRITEBACK_INSTRUCTIONS", "0")
    # attribution recompiles a wrong control tens of times: only tests/test_attribution.py runs it
    monkeypatch.setenv("WRITEBACK_ATTRIBUTION", "0")


@pytest.fixture(scope="session")
def ledger_path(tmp_path_factory):
    """The ledger of builds.txt, which the recorded results (tests/fixtures/history) were
    measured on."""
    path = tmp_path_factory.mktemp("ledger") / "ledger"
    ledger.build_ledger(builds.read(ROOT / "builds.txt"), path)
    return path
