"""Where a build's time went: the phases come from asv's durations, the install record and
the probe records, and nothing is counted twice (callgrind runs inside a setup_cache)."""

import pytest

from tools import time_spent


def test_phases_from_asv_durations_install_and_callgrind():
    durations = {
        "<setup_cache snapshot_swap:93>": 100.0,
        "<setup_cache aliasing:603>": 40.0,
        "snapshot_swap.Cost.time_warm_call": 30.0,
        "snapshot_swap.Correctness.track_wrong_elements": 1.5,
        "aliasing.Correctness.track_wrong_elements": 2.5,
    }
    spent = time_spent.time_spent(durations, 50.0, {"snapshot_swap": 20.0}, attribution=30.0)
    assert spent["setup_cache"] == 140.0
    assert spent["asv processes"] == 34.0
    assert spent["callgrind"] == 20.0
    assert spent["attribution"] == 30.0
    assert spent["total"] == 50.0 + 140.0 + 34.0  # callgrind and attribution: in setup_cache
    assert spent["setup_by_scenario"] == {"snapshot_swap": 100.0, "aliasing": 40.0}
    lines = time_spent.render([("torch-2.15.0", spent, None)])
    assert (
        "| torch-2.15.0 | 50 s | 140 s | 30 s | 20 s | 34 s | 224 s | snapshot_swap 100 s | - |"
        in lines
    )


def test_an_install_without_seconds_says_so_and_is_not_counted():
    spent = time_spent.time_spent({"<setup_cache corpus:35>": 10.0}, None, None)
    assert spent["total"] == 10.0
    assert time_spent.render([("old", spent, None)])[-1].count("not recorded") == 3


def test_a_build_whose_setup_caches_failed_has_its_benchmarks_without_durations():
    """asv's results give a benchmark it skipped (its setup_cache failed) no duration: the
    time table counts what ran (torch 2.1.0's first run of the long history took the report
    down here)."""
    durations = {
        "<setup_cache snapshot_swap:93>": 4.5,
        "<setup_cache corpus:55>": 4.3,
        "snapshot_swap.Cost.time_warm_call": None,
        "corpus.Correctness.x": None,
    }
    spent = time_spent.time_spent(durations, 100.9, None)
    assert spent["asv processes"] == 0
    assert spent["setup_cache"] == pytest.approx(8.8)
    assert spent["total"] == pytest.approx(100.9 + 8.8)
