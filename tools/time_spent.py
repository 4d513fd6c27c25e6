"""Where a build's time went, from what the run itself kept: the install record's
`install_seconds` (tools/install_build.py), asv's durations in its results file (each
`setup_cache`: the probe that compiles and checks every combination, with attribution and
callgrind in it; each benchmark: its asv processes), and the probe records' `seconds`
(callgrind's share of a setup_cache) and each row's attribution seconds (its share too).

Install, setup_cache and the asv processes are wall-clock seconds of one build as asv ran it;
a setup_cache probes its controls in one worker process per core (benchmarks/pool.py), so
attribution, summed over those workers, can exceed their setup_cache's share. Callgrind is
the wait for the count after the compiles (a fork of the build's zygote, which imported
torch and Inductor under valgrind before).
Builds measured side by side share the cores: compare builds of one run, not runs.

Each build's run (`make history`, or a shard of it) has its peak disk beyond the checkout
beside it: what the run's asv environment, pip's cache, Inductor caches, kept code and
temporary files took at most, sampled while it ran (tools/disk.py). Below the table, each
release line's builds summed (`line_totals`): how long the whole line took, whether it was
measured in one run or in shards across sessions.
"""

from __future__ import annotations

from tools import disk

SETUP_CACHE = "<setup_cache "


def time_spent(
    durations: dict,
    install_seconds: float | None,
    callgrind: dict | None,
    attribution: float | None = None,
) -> dict:
    """One build's seconds by phase. `durations`: asv's `Results.duration` (benchmark name or
    `<setup_cache module:line>` -> seconds); `callgrind`: scenario -> callgrind seconds, None
    where the probe records kept none (records written before they did); `attribution`: the
    seconds the probe rows' attributions took (inside the setup_caches too)."""
    durations = {k: v for k, v in durations.items() if v is not None}  # None: asv did not run it
    setup = {}
    for key, seconds in durations.items():
        if key.startswith(SETUP_CACHE):
            scenario = key[len(SETUP_CACHE) :].split(":", 1)[0]
            setup[scenario] = setup.get(scenario, 0.0) + float(seconds)
    phases = {
        "install": install_seconds,
        "setup_cache": sum(setup.values()),
        "callgrind": None if callgrind is None else sum(callgrind.values()),
        "attribution": attribution,
        "asv processes": sum(float(v) for k, v in durations.items() if not k.startswith("<")),
    }
    inside = ("callgrind", "attribution")  # parts of setup_cache, not counted again
    counted = [v for k, v in phases.items() if k not in inside and v is not None]
    return {**phases, "total": sum(counted), "setup_by_scenario": setup}


def render(rows: list[tuple[str, dict, dict | None]]) -> list[str]:
    """Markdown lines: one row per (build label, `time_spent` figures, the record of the run
    that measured it: tools/disk.py, None when none was recorded), then a line per run with
    its peak disk and what made it up."""
    if not rows:
        return []
    lines = [
        "| build | install | setup_cache (compile + check) | of which attribution "
        "| of which callgrind | asv benchmark processes | total | slowest setup_cache "
        "| its run's peak disk |",
        "|---|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    runs = {_run_key(run): run for _, _, run in rows if run}
    for label, spent, run in rows:
        slowest = max(spent["setup_by_scenario"].items(), key=lambda kv: kv[1], default=None)
        disk_cell = f"{disk.gb(run['peak_disk']['bytes'])}, run of {run['started']}" if run else "-"
        lines.append(
            f"| {label} | {_seconds(spent['install'])} | {_seconds(spent['setup_cache'])} "
            f"| {_seconds(spent['attribution'])} "
            f"| {_seconds(spent['callgrind'])} | {_seconds(spent['asv processes'])} "
            f"| {_seconds(spent['total'])} "
            f"| {f'{slowest[0]} {_seconds(slowest[1])}' if slowest else '-'} | {disk_cell} |"
        )
    return lines + ([""] if runs else []) + [disk.run_line(runs[key]) for key in sorted(runs)]


def line_totals(lines: list[tuple[str, list[dict]]]) -> list[str]:
    """Markdown lines: per release line (its name, the `time_spent` figures of each of its
    builds with a time), the builds' totals summed, and the shortest and longest build: how
    long the whole line took, build after build, whether in one run or in shards."""
    out = []
    for name, spent in lines:
        totals = [s["total"] for s in spent]
        if not totals:
            continue
        builds = f"{len(totals)} build" + ("" if len(totals) == 1 else "s")
        out.append(
            f"- {name}: {builds}, {_hours(sum(totals))} in all (each build's total above, "
            f"summed), {_minutes(min(totals))} to {_minutes(max(totals))} a build"
        )
    return out


def _hours(seconds: float) -> str:
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min"


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min"


def _run_key(run: dict) -> tuple:
    """A run's start and the builds it measured (two shards may start in the same second)."""
    return run["started"], tuple(build["commit"] for build in run["builds"])


def _seconds(value) -> str:
    return "not recorded" if value is None else f"{value:,.0f} s"
