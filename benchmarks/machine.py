"""Which machine a result belongs to: a name that two different CPUs cannot share.

Every host here is called `vm`, on different CPUs, so a host name is not an identity. A
machine is the host's CPU (architecture, model, vector extensions) and the vector ISA the
suite runs with:

    <host>-<cpu model>-<hash of arch, model and vector flags>[-<forced ISA>]

e.g. `vm-intel-xeon-3f2a1c` on the host's native ISA, `vm-intel-xeon-3f2a1c-avx2` with
`WRITEBACK_ISA=avx2`. `WRITEBACK_MACHINE` replaces the first part (the ISA suffix is still
added). asv keys its results by this name, and every record kept beside them (install
records, probe records, generated code, Inductor caches) is keyed by it too: it names folders,
some of which are emptied before a run, so it must be a name, not a path (`checked_name`).

`WRITEBACK_ISA` (`avx512`, `avx2`, `default` for scalar code, ...) makes ATen and Inductor use
that ISA (`ATEN_CPU_CAPABILITY`), so one host measures as several machines.

Standard library only: tools/install_build.py imports it inside asv's environments.
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
from pathlib import Path

VECTOR_FLAG = re.compile(r"^(avx\w*|amx\w*|sse\w*|ssse3|fma|f16c|asimd\w*|sve\w*|neon|vsx)$")
"""CPU flags that change the code Inductor generates (x86, Arm and POWER vector units)."""

ISA_ENV = "WRITEBACK_ISA"
MACHINE_ENV = "WRITEBACK_MACHINE"
RESOLVED_ENV = "WRITEBACK_MACHINE_NAME"
"""The final name, exported by tools/asv_project.py to what asv runs (no suffix added again)."""
NAME = re.compile(r"[A-Za-z0-9._-]{1,100}")
"""What a machine name may be: one folder's name."""
PATCH_RECORD = "writeback_patch.json"
"""The file tools/patch.py writes into the dist-info of a torch it patched: what it applied
(`diff_sha256`, the patched files); the identity of a patched build names that diff."""


class MachineNameError(ValueError):
    """A machine name that is not one folder's name."""


def cpu_identity(cpuinfo: str | None = None) -> dict:
    """The host CPU: arch, model, vector flags, the widest vector ISA, and an id hashing them."""
    text = cpuinfo if cpuinfo is not None else _read_cpuinfo()
    model = _field(text, "model name") or _field(text, "Processor") or platform.processor()
    flags = sorted({f for f in (_field(text, "flags") or _field(text, "Features")).split()
                    if VECTOR_FLAG.match(f)})  # fmt: skip
    arch = platform.machine()
    digest = hashlib.sha1(f"{arch}|{model}|{' '.join(flags)}".encode()).hexdigest()[:6]
    return {
        "arch": arch,
        "cpu": model or "unknown",
        "vector_flags": flags,
        "native_isa": native_isa(flags),
        "cpu_id": digest,
    }


def native_isa(flags: list[str]) -> str:
    """The widest x86 vector ISA the flags allow, in ATEN_CPU_CAPABILITY's words."""
    if "avx512f" in flags:
        return "avx512"
    if "avx2" in flags:
        return "avx2"
    return "default"


def requested_isa() -> str | None:
    """`$WRITEBACK_ISA`, or None to run with the host's native ISA."""
    value = os.environ.get(ISA_ENV, "").strip().lower()
    return value or None


def machine_name(identity: dict | None = None, host: str | None = None) -> str:
    """This machine's name (see the module docstring)."""
    if resolved := os.environ.get(RESOLVED_ENV, "").strip():
        return checked_name(resolved, RESOLVED_ENV)
    ident = identity or cpu_identity()
    base = os.environ.get(MACHINE_ENV, "").strip()
    if base:
        checked_name(base, MACHINE_ENV)
    else:
        model = _slug(ident["cpu"])
        base = f"{_slug(host or platform.node()) or 'host'}-{model}-{ident['cpu_id']}"
    isa = requested_isa()
    return f"{base}-{checked_name(isa, ISA_ENV)}" if isa else base


def checked_name(name: str, source: str) -> str:
    """`name` when it can name one folder (see `NAME`); else MachineNameError naming `source`
    (the variable or option it came from), the value and what is allowed."""
    if NAME.fullmatch(name) and name not in (".", ".."):
        return name
    raise MachineNameError(
        f"{source}={name!r} cannot name a machine: its name becomes a folder (results, records, "
        "caches that a run empties), so it must be 1-100 characters of A-Z a-z 0-9 . _ - and "
        "not '.' or '..'"
    )


def machine_info(identity: dict | None = None) -> dict:
    """What asv's machine.json should record for this machine: asv's fields and the CPU's."""
    ident = identity or cpu_identity()
    return {
        "machine": machine_name(ident),
        "arch": ident["arch"],
        "cpu": ident["cpu"],
        "num_cpu": str(os.cpu_count() or 1),
        "os": f"{platform.system()} {platform.release()}",
        "ram": str(_ram_bytes()),
        "cpu_id": ident["cpu_id"],
        "vector_flags": " ".join(ident["vector_flags"]),
        "isa": requested_isa() or ident["native_isa"],
        "isa_forced": requested_isa() is not None,
    }


def mismatch(recorded: dict, identity: dict | None = None) -> str | None:
    """Why results recorded with `recorded` (a machine.json) are not this host's, or None."""
    ident = identity or cpu_identity()
    if recorded.get("cpu_id"):
        if recorded["cpu_id"] != ident["cpu_id"]:
            return (f"they were measured on {recorded.get('cpu')} ({recorded.get('arch')}, "
                    f"cpu id {recorded['cpu_id']}), this host is {ident['cpu']} "
                    f"({ident['arch']}, cpu id {ident['cpu_id']})")  # fmt: skip
        return None
    return (f"its machine.json records no cpu id (cpu: {recorded.get('cpu', 'none recorded')}), "
            "so nothing shows they were measured on this CPU")  # fmt: skip


def _read_cpuinfo() -> str:
    path = Path("/proc/cpuinfo")
    return path.read_text(errors="replace") if path.is_file() else ""


def _field(text: str, name: str) -> str:
    match = re.search(rf"^{re.escape(name)}\s*:\s*(.*)$", text, re.M)
    return match.group(1).strip() if match else ""


def _slug(text: str) -> str:
    words = re.sub(r"\((?:r|tm|R|TM)\)", "", text).lower()
    words = re.sub(r"\b(processor|cpu|core|with|radeon|graphics|\d+-core)\b", " ", words)
    return "-".join(re.findall(r"[a-z0-9]+", words)[:3])


def _ram_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def build_folder(identity: dict) -> str:
    """A build's folder name under each machine, from its identity (`torch_version`,
    `torch_git_version`, and `torch_patch` for a patched release): e.g.
    `torch-2.15.0+cpu-d0f2af8b`, `torch-2.15.0+cpu-d0f2af8b-patch-1a2b3c4d` (the diff's sha256),
    so that a patch build never shares its base's records or caches. Here (standard library
    only) so that the tools reading the records `<machine>/<build>/<isa>/` name builds as the
    probes did."""
    folder = f"torch-{identity['torch_version']}-{identity['torch_git_version'][:8]}"
    return folder + (f"-patch-{identity['torch_patch'][:8]}" if identity.get("torch_patch") else "")


def release_numbers(version: str) -> tuple[int, ...]:
    """The release numbers of a torch version: `2.1.0+cu121` -> (2, 1, 0); a nightly
    `2.16.0.dev20261105` or a pre-release `2.11.0a0` -> its release's numbers. Here (standard
    library only) so that tools/install_build.py reads versions as benchmarks/compat.py does."""
    numbers = re.match(r"\d+(?:\.\d+)*", str(version))
    if numbers is None:
        raise ValueError(f"{version!r} is not a torch version like 2.15.0")
    return tuple(int(part) for part in numbers.group().split("."))
