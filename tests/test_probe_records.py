"""Probe records as saved beside asv's results (benchmarks/artifacts.py): an unreadable one is
never written over, rows are merged only with rows of the same benchmark versions, and a saved
record names no path of the checkout that wrote it: its paths are relative to its folder."""

import json
from pathlib import Path

import pytest

from benchmarks import artifacts

ROOT = Path(__file__).resolve().parents[1]
VERSIONS = {"swap.Correctness.track_wrong_elements": "writeback-1"}


def _folder(base: Path) -> Path:
    return artifacts.scenario_dir(base, "m", "torch-2.13.0+cpu-cf30153c", "avx2", "swap")


def _row(control: str, n: int, **fields) -> dict:
    return {"control": control, "backend": "inductor", "n": n, "code_dir": None, **fields}


def _record(rows: list[dict], versions: dict | None = VERSIONS) -> dict:
    return {"scenario": "swap", artifacts.VERSIONS: versions, "rows": rows}


@pytest.mark.parametrize(
    "content", [b'{"rows": [{"control": "a"', b"[]", b'{"rows": 3}', b"\xff\xfe"]
)
def test_an_unreadable_record_is_named_and_left_as_it_is(tmp_path, content):
    path = _folder(tmp_path) / "probe.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    with pytest.raises(artifacts.UnreadableRecord) as raised:
        artifacts.save_record(path, _record([_row("a", 3)]))
    assert str(raised.value).startswith(f"{path} ")
    assert f"git checkout -- {path}" in str(raised.value)
    assert path.read_bytes() == content


def test_rows_of_other_benchmark_versions_are_dropped_not_kept_beside_new_ones(tmp_path, capsys):
    path = _folder(tmp_path) / "probe.json"
    artifacts.save_record(path, _record([_row("a", 3, wrong=1), _row("a", 5, wrong=2)]))
    artifacts.save_record(path, _record([_row("a", 3, wrong=0)]))
    same = artifacts.read_record(path)["rows"]
    assert [(r["n"], r["wrong"]) for r in same] == [(5, 2), (3, 0)]  # same versions: merged

    bumped = {**VERSIONS, "swap.Cost.track_time_over_floor": "writeback-floor-3"}
    artifacts.save_record(path, _record([_row("a", 3, wrong=7)], bumped))
    assert [(r["n"], r["wrong"]) for r in artifacts.read_record(path)["rows"]] == [(3, 7)]
    assert "2 row(s) measured with other benchmark versions dropped" in capsys.readouterr().err

    unversioned = _folder(tmp_path / "older") / "probe.json"  # written before records had them
    unversioned.parent.mkdir(parents=True)
    unversioned.write_text(json.dumps({"rows": [_row("a", 5, wrong=2)]}))
    artifacts.save_record(unversioned, _record([_row("a", 3, wrong=0)]))
    assert [r["n"] for r in artifacts.read_record(unversioned)["rows"]] == [3]


def _kept_paths(record: dict, folder: Path) -> list[Path]:
    """The folders and files a saved record's rows name, as paths here."""
    rows = artifacts.portable(record, folder)["rows"]
    return [folder / row[key] for row in rows for key in artifacts.PATH_FIELDS if row.get(key)]


def test_saved_paths_are_relative_to_the_records_folder(tmp_path):
    folder = _folder(tmp_path / "results" / "generated")
    measured = _row("a", 3, code_dir=str(folder / "a" / "n3"))
    built = _row("b", 3, package=str(folder / "packages" / "b-12ab.pt2"))
    saved = artifacts.save_record(folder / "probe.json", _record([measured, built]))
    assert str(tmp_path) not in (folder / "probe.json").read_text()
    assert [r["code_dir"] for r in saved["rows"]] == ["a/n3", None]
    assert saved["rows"][1]["package"] == "packages/b-12ab.pt2"
    read = artifacts.read_record(folder / "probe.json")
    assert _kept_paths(read, folder) == [folder / "a" / "n3", folder / "packages" / "b-12ab.pt2"]


def test_an_absolute_path_written_elsewhere_is_saved_as_the_same_place_here(tmp_path):
    folder = _folder(tmp_path)
    elsewhere = "/tmp/run/all/w/results/generated/m/torch-2.13.0+cpu-cf30153c/avx2/swap/old/n3"
    folder.mkdir(parents=True)
    (folder / "probe.json").write_text(json.dumps(_record([_row("old", 3, code_dir=elsewhere)])))
    artifacts.save_record(folder / "probe.json", _record([_row("new", 3)]))
    kept = artifacts.read_record(folder / "probe.json")["rows"]
    assert [(r["control"], r["code_dir"]) for r in kept] == [("old", "old/n3"), ("new", None)]


def test_every_committed_records_paths_become_its_own_folders():
    """The committed records name their code with the absolute paths of the checkouts that
    measured them; saved again, each names the folder beside the record that holds it (every
    kept folder has its kernels.cpp, empty where the compile generated no wrapper)."""
    records = sorted((ROOT / "results" / "generated").glob("*/*/*/*/probe.json"))
    assert records
    for path in records:
        for kept in _kept_paths(artifacts.read_record(path), path.parent):
            if kept.suffix == ".pt2":  # AOTInductor packages are not committed
                assert kept.parent == path.parent / "packages", kept
            else:
                assert (kept / "kernels.cpp").is_file(), (path, kept)


def test_a_probe_record_carries_the_versions_asv_records_for_its_benchmarks(monkeypatch):
    """The names and versions are asv's own (the committed results/benchmarks.json), and
    they are what the asv classes' probe records."""
    from benchmarks import asv_classes, snapshot_swap

    listed = json.loads((ROOT / "results" / "benchmarks.json").read_text())
    for scenario in ("snapshot_swap", "aliasing"):
        __import__(f"benchmarks.{scenario}")
        versions = asv_classes.benchmark_versions(scenario)
        asv_names = {name for name in listed if name.startswith(f"{scenario}.C")}
        assert set(versions) == asv_names
        assert versions == {name: listed[name]["version"] for name in asv_names}
    probed = {}

    def probe_scenario(scenario, **kwargs):
        probed.update(kwargs)
        return {"rows": []}

    monkeypatch.setattr(asv_classes, "probe_scenario", probe_scenario)
    asv_classes.probe_for_asv(snapshot_swap.SWAP)
    assert probed["versions"] == asv_classes.benchmark_versions("snapshot_swap")
