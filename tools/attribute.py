"""Name the Inductor pass behind one wrong verdict, on the installed torch.

    python -m tools.attribute --scenario snapshot_swap --control foreach_clones [--size 3]
    python -m tools.attribute --scenario aliasing --control slice_scatter_then_zero --size small

Runs `benchmarks.attribution.attribute` once (the compiler bisector, then ablation) and prints
the result as JSON, then the time it took. The size is an element count for the swap and the
TensorDict scenario, a label (`small`, `large`) for the aliasing catalogue; the default is the
scenario's gate size. A control that is exact here is reported as not attributed. The
scenarios are those of `benchmarks/registry.py`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from benchmarks import registry
from benchmarks.attribution import attribute
from benchmarks.compat import set_single_thread, torch_identity


def main(argv: list[str] | None = None) -> int:
    scenarios = registry.scenarios()
    args = _parse(argv, scenarios)
    scenario = scenarios[args.scenario]
    try:
        control = scenario.control(args.control)
    except KeyError as exc:
        print(f"error: {exc.args[0]}", file=sys.stderr)
        return 2
    size = _size(args.size, scenario)
    if size not in scenario.sizes and not isinstance(size, int):
        print(f"error: {scenario.name} sizes are {', '.join(scenario.sizes)}", file=sys.stderr)
        return 2
    set_single_thread()
    started = time.perf_counter()
    result = attribute(scenario, control, size)
    took = time.perf_counter() - started
    ident = torch_identity()
    print(json.dumps({"scenario": scenario.name, "control": control.name, "size": size,
                      **ident, "attribution": result}, indent=1))  # fmt: skip
    print(f"attribution took {took:.1f} s (torch {ident['torch_version']})")
    return 0


def _size(text: str | None, scenario):
    if text is None:
        return scenario.gate_size
    return int(text) if text.isdigit() else text


def _parse(argv, scenarios: dict):
    parser = argparse.ArgumentParser(
        prog="python -m tools.attribute", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--scenario", required=True, choices=list(scenarios))
    parser.add_argument("--control", required=True, help="a control or catalogue entry name")
    parser.add_argument("--size", help="element count, or small/large for the catalogue")
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(main())
