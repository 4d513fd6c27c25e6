"""Whether a thread that enters fake mode first leaves the CUDA device guard registry dangling
once it exits, with and without `compat.fake_cuda_guard_on_this_thread` called first (run
`python -m tests.fake_cuda_guard_probe [--shim]` in the checkout with the python of the build
to look at; prints one JSON line).

It reads libc10's `device_guard_impl_registry[CUDA]` with ctypes: the address registered and
the first word there (the guard's vtable pointer, inside libc10 while the guard lives; glibc
writes its free-list link over it when the memory is freed)."""

import ctypes
import json
import sys
import threading
import time
from pathlib import Path

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

CUDA = 1  # c10::DeviceType::CUDA


def registry_entry() -> tuple[int, int]:
    libc10 = ctypes.CDLL(str(Path(torch.__file__).parent / "lib" / "libc10.so"))
    registry = ctypes.c_void_p.in_dll(libc10, "_ZN3c104impl26device_guard_impl_registryE")
    slot = ctypes.addressof(registry) + CUDA * ctypes.sizeof(ctypes.c_void_p)
    address = ctypes.c_void_p.from_address(slot).value or 0
    first_word = ctypes.c_void_p.from_address(address).value if address else 0
    return address, first_word or 0


def in_a_library(address: int) -> bool:
    for line in Path("/proc/self/maps").read_text().splitlines():
        span, *rest = line.split()
        low, high = (int(x, 16) for x in span.split("-"))
        if low <= address < high:
            path = rest[4] if len(rest) >= 5 else ""  # an anonymous mapping (the heap) has none
            return ".so" in Path(path).name
    return False


def main() -> None:
    shim = sys.argv[1:] == ["--shim"]
    if shim:
        from benchmarks.compat import fake_cuda_guard_on_this_thread

        fake_cuda_guard_on_this_thread()
    before = registry_entry()
    seen = {}

    def enter_fake_mode():
        with FakeTensorMode():
            torch.empty(3)
        seen["alive"] = registry_entry()

    thread = threading.Thread(target=enter_fake_mode)
    thread.start()
    thread.join()  # returns once its Python state is gone: its C++ thread_locals go after
    time.sleep(1)
    garbage = [bytearray(64) for _ in range(10000)]  # reuse freed memory, as a compile would
    after = registry_entry()
    alive_vtable = seen["alive"][1]
    facts = {
        "torch": torch.__version__,
        "cuda_available": torch.cuda.is_available(),
        "shim": shim,
        "registered_before": hex(before[0]),
        "registered_by_the_thread": hex(seen["alive"][0]),
        "vtable_in_a_library_while_the_thread_lived": in_a_library(alive_vtable),
        "registered_after_it_exited": hex(after[0]),
        "vtable_intact_after_it_exited": after[1] == alive_vtable and in_a_library(after[1]),
    }
    print(json.dumps(facts))
    del garbage


if __name__ == "__main__":
    main()
