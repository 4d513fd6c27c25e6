"""Where the generated code and the probe records are kept, beside the asv results.

    results/generated/<build>/<isa>/<scenario>/probe.json              every row the probes measured
    results/generated/<build>/<isa>/<scenario>/<control>/n<N>/wrapper.py   the generated wrapper
    results/generated/<build>/<isa>/<scenario>/<control>/n<N>/kernels.cpp  its C++ kernels

`<build>` is `torch-<version>-<commit[:8]>` and `<isa>` the vector ISA Inductor generated code
for (the same build emits different C++ on an AVX2 and an AVX512 machine), so one control on
two builds is two folders that differ only in `<build>`: `tools/diff_code.py` diffs them.

The root is `$WRITEBACK_ARTIFACTS` when set, else `results/generated` under the directory asv
runs from (`$ASV_CONF_DIR`, which asv sets for the environments it builds), else under the
folder that holds `benchmarks/` (asv's `existing` environments get no ASV_* variables).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .probes.generated_code import kernels


def root() -> Path:
    if explicit := os.environ.get("WRITEBACK_ARTIFACTS"):
        return Path(explicit)
    if conf_dir := os.environ.get("ASV_CONF_DIR"):
        return Path(conf_dir) / "results" / "generated"
    return Path(__file__).resolve().parents[1] / "results" / "generated"


def scenario_dir(base: Path, build: str, isa: str, scenario: str) -> Path:
    return base / build / isa / scenario


def code_dir(base: Path, build: str, isa: str, scenario: str, control: str, n: int) -> Path:
    return scenario_dir(base, build, isa, scenario) / control / f"n{n}"


def save_code(folder: Path, wrappers: list[str]) -> None:
    """Write each generated wrapper, and all their C++ kernels in one file, into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    cpp = []
    for index, wrapper in enumerate(wrappers):
        name = "wrapper.py" if index == 0 else f"wrapper_{index}.py"
        (folder / name).write_text(wrapper)
        for kernel in kernels(wrapper):
            cpp.append(f"// ---- {name}: {kernel.name} ----\n{kernel.source.strip()}\n")
    (folder / "kernels.cpp").write_text("\n".join(cpp))


def save_json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    tmp.replace(path)
