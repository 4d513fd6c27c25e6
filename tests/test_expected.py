"""Expected results gate in both directions (tools/expected.py), on the recorded history."""

from pathlib import Path

import pytest

from benchmarks import metrics
from tools import builds, expected, ledger

ROOT = Path(__file__).resolve().parents[1]

RECORDED = ROOT / "tests" / "fixtures" / "history" / "results"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("expected")
    ledger.build_ledger(builds.read(ROOT / "builds.txt"), tmp / "ledger")
    args = ["--machine", "vm", "--results", str(RECORDED), "--ledger", str(tmp / "ledger")]
    return tmp, args


def _check(recorded, text, capsys):
    tmp, args = recorded
    path = tmp / "expected.csv"
    path.write_text(text)
    code = expected.main(["check", *args, "--file", str(path)])
    return code, capsys.readouterr().out


def _replacement(recorded, capsys):
    tmp, args = recorded
    code = expected.main(["check", *args, "--file", str(tmp / "absent.csv")])
    out = capsys.readouterr().out
    assert code == 1 and "no expected results in" in out
    return out.split("\n\n", 1)[1]


def test_the_file_it_proposes_passes_and_gates_every_metric(recorded, capsys):
    text = _replacement(recorded, capsys)
    header = text.splitlines()[1].split(",")
    assert {"metric", "expected", "margin"} <= set(header)
    metrics = {line.split(",")[5] for line in text.splitlines()[2:]}
    assert {"wrong_elements", "full_length_loops", "scratch_bytes", "instructions"} <= metrics
    code, out = _check(recorded, text, capsys)
    assert code == 0 and "within their margins" in out


def _with_row(text: str, prefix: str, expected: int, margin: int | None = None) -> str:
    """`text` (an expected file) with the row starting `prefix` expecting `expected`, and
    with `margin` when given."""
    lines = text.splitlines()
    index = next(i for i, line in enumerate(lines) if line.startswith(prefix))
    cells = lines[index].split(",")
    cells[6] = str(expected)
    if margin is not None:
        cells[7] = str(margin)
    lines[index] = ",".join(cells)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("metric", "control", "change", "direction"),
    [
        ("full_length_loops", "explicit_copies", +1, "down"),
        ("wrong_elements", "foreach_clones", -1, "up"),
    ],
)
def test_a_row_that_moved_either_way_fails_naming_it(recorded, capsys, metric, control, change,
                                                     direction):  # fmt: skip
    text = _replacement(recorded, capsys)
    wanted = f"torch-2.15.0,snapshot_swap,{control},inductor,3,{metric},"
    line = next(line for line in text.splitlines() if line.startswith(wanted))
    code, out = _check(recorded, _with_row(text, wanted, int(line.split(",")[6]) + change), capsys)
    assert code == 1
    assert f"torch-2.15.0/snapshot_swap/{control}/inductor/3/{metric}" in out
    assert f"({direction})" in out and "replace" in out


def test_the_least_margins_hold_for_rows_written_with_smaller_ones(recorded, capsys):
    """A file written before a least margin was raised gates with the raised one: a count
    within 3 x the noise between environments passes at margin 0; one beyond it fails."""
    text = _replacement(recorded, capsys)
    prefix = "torch-2.15.0,snapshot_swap,select_swap,inductor,3,instructions,"
    line = next(line for line in text.splitlines() if line.startswith(prefix))
    value = int(line.split(",")[6])
    least = expected.least_margin("instructions", value)
    assert least == 3 * metrics.INSTRUCTIONS_BETWEEN_ENVIRONMENTS
    code, out = _check(recorded, _with_row(text, prefix, value + least, 0), capsys)
    assert code == 0, out
    assert f"instructions: {len(_rows(text, 'instructions'))} rows moved" in out
    assert f"moved -{least}.0 to" in out  # the shifted row is the most moved
    code, out = _check(recorded, _with_row(text, prefix, value + least + 1, 0), capsys)
    assert code == 1
    assert f"{prefix.replace(',', '/')[:-1]}: expected {value + least + 1} +- {least}" in out
    assert f"measured {value} (down)" in out


@pytest.mark.parametrize(
    "bad, why",
    [
        ("make: *** [Makefile:68: expected] Error 1\n", "8 comma-separated fields expected"),
        ("torch-2.13.0,snapshot_swap,select_swap,inductor,3,wrong_elements,none,0\n",
         "could not convert string to float: 'none'"),
    ],
)  # fmt: skip
def test_a_line_that_is_not_a_row_is_one_message_naming_it(recorded, capsys, bad, why):
    """A line that is not a row (say, a make error pasted with the replacement file) is one
    message naming the file, the line and what a row is; no traceback, exit 2."""
    text = _replacement(recorded, capsys)
    number = len(text.splitlines()) + 2  # after the blank line below
    tmp, args = recorded
    (tmp / "expected.csv").write_text(text + "\n" + bad)
    code = expected.main(["check", *args, "--file", str(tmp / "expected.csv")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"expected.csv, line {number}: {bad.strip()!r} is not a row ({why})" in err
    assert "correct or remove that line" in err


def test_a_header_with_an_unknown_column_is_one_message_naming_it(recorded, capsys):
    """A header with a column no row has (a file of another version of the suite, a typo) is
    one message naming the file, the line and the header expected; no traceback, exit 2."""
    text = _replacement(recorded, capsys)
    lines = text.splitlines()
    header = next(n for n, line in enumerate(lines) if not line.startswith("#"))
    lines[header] += ",unit"
    tmp, args = recorded
    (tmp / "expected.csv").write_text("\n".join(lines) + "\n")
    code = expected.main(["check", *args, "--file", str(tmp / "expected.csv")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"expected.csv, line {header + 1}: the header has columns no row has (unit)" in err
    assert f"the header is {','.join(expected.COLUMNS)}" in err


def _rows(text: str, metric: str) -> list[str]:
    return [line for line in text.splitlines() if f",{metric}," in line]


COMMITTED = sorted(path.parent.name for path in (ROOT / "results").glob("*/machine.json"))


@pytest.mark.parametrize("machine", COMMITTED)
def test_the_committed_results_are_within_their_expected_results(recorded, machine, capsys):
    """What main carries passes its machine class's expected file: results that moved are
    committed with their re-baselined file (and the reason), or not at all."""
    tmp, _ = recorded
    code = expected.main(["check", "--machine", machine, "--ledger", str(tmp / "ledger")])
    out = capsys.readouterr().out
    assert code == 0, out[: out.find("If every move")]
    assert "within their margins" in out and "drift of the noisy rows" in out


def test_without_an_expected_file_check_names_it_and_prints_one_that_passes(
    recorded, tmp_path, capsys
):
    """A machine with no file yet (a new CPU): check says which file, exits 1 and prints
    the file to paste, which then passes."""
    tmp, _ = recorded
    path = tmp_path / "new-machine.csv"
    command = ["check", "--machine", COMMITTED[0], "--ledger", str(tmp / "ledger"),
               "--file", str(path)]  # fmt: skip
    assert expected.main(command) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"writeback: no expected results in {path} yet (machine {COMMITTED[0]}")
    path.write_text(out.split(":\n\n", 1)[1])
    assert expected.main(command) == 0
    assert "within their margins" in capsys.readouterr().out


def test_a_machine_with_its_own_expected_file_is_gated_by_it_else_by_its_isas(tmp_path):
    (tmp_path / "expected").mkdir()
    (tmp_path / "expected" / "avx2.csv").write_text("")
    assert expected.expected_file("vm-amd", "avx2", tmp_path) == tmp_path / "expected/avx2.csv"
    (tmp_path / "expected" / "vm-amd.csv").write_text("")
    assert expected.expected_file("vm-amd", "avx2", tmp_path) == tmp_path / "expected/vm-amd.csv"
    assert expected.expected_file("vm-intel", "avx2", tmp_path) == tmp_path / "expected/avx2.csv"
