"""Read what Inductor generated: the C++ kernels inside a wrapper, their full-length passes,
and the scratch the wrapper's `call` allocates; and keep them (`save_code`: the wrapper, and
its C++ in one file). Pure text, no torch needed.

The wrapper is the Python module Inductor writes for one compiled graph. Its C++ kernels are
the `'''...'''` bodies of `async_compile.cpp(...)` (older releases) or
`async_compile.cpp_pybinding(...)` calls. Its `call` function (module level up to about 2.9,
a `Runner.call` method later) allocates buffers with `empty_strided_cpu(...)` (or
`empty_strided(..., device='cpu', ...)` in older releases), aliases them with
`reinterpret_tensor(...)` or plain reuse (`buf2 = buf0`), and frees them with `del`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

_KERNEL = re.compile(
    r"^(?P<name>\w+)\s*=\s*async_compile\.cpp\w*\(.*?r?'''(?P<source>.*?)'''",
    re.DOTALL | re.MULTILINE,
)
_CPP_COMPILE = re.compile(r"async_compile\.cpp")
_FOR = re.compile(r"\bfor\s*\(")
_HEADER = re.compile(
    r"^\s*(?:[\w:<>]+\s+)?(?P<var>\w+)\s*=\s*(?P<start>[^;]+);"
    r"\s*(?P=var)\s*<\s*(?P<end>[^;]+);"
)
_INT = re.compile(r"\s*(?:static_cast<[\w:\s]+>\()?\s*(?P<value>-?\d+)L{0,2}\s*\)?\s*")

ITEMSIZE = {
    "float64": 8, "double": 8, "float32": 4, "float": 4, "float16": 2, "half": 2,
    "bfloat16": 2, "int64": 8, "long": 8, "int32": 4, "int": 4, "int16": 2, "short": 2,
    "int8": 1, "uint8": 1, "bool": 1,
}  # fmt: skip


@dataclass(frozen=True)
class Kernel:
    name: str
    source: str


@dataclass(frozen=True)
class Loop:
    """One C++ `for` statement: index variable, numeric bounds, and its text span."""

    var: str
    start: int
    end: int
    header_at: int
    body_end: int


class UnreadableCode(ValueError):
    """Generated code in a form these parsers do not read; the message quotes the text."""


def kernels(wrapper: str) -> list[Kernel]:
    """Every C++ kernel defined in a generated wrapper, in definition order.

    Raises `UnreadableCode` quoting the line when the wrapper compiles C++
    (`async_compile.cpp...`) in a form the kernel pattern does not read.
    """
    found = list(_KERNEL.finditer(wrapper))
    read = {_CPP_COMPILE.search(wrapper, match.start()).start() for match in found}
    for compile_call in _CPP_COMPILE.finditer(wrapper):
        if compile_call.start() not in read:  # outside every kernel read, or swallowed by one
            line = _line_at(wrapper, compile_call.start())
            raise UnreadableCode(f"a C++ kernel the wrapper parser does not read: {line!r}")
    return [Kernel(m["name"], m["source"]) for m in found]


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


def _line_at(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    return text[start : len(text) if end < 0 else end].strip()[:300]


def loops(cpp: str) -> list[Loop]:
    """Every `for` loop in a C++ source, with its numeric bounds.

    Under `dynamic=False` every bound is a number: a header these patterns do not read, or a
    bound that is not a number, raises `UnreadableCode` quoting the header (a skipped loop
    would silently undercount the passes).
    """
    found = []
    for match in _FOR.finditer(cpp):
        open_paren = match.end() - 1
        close_paren = _matching(cpp, open_paren, "(", ")")
        text = cpp[open_paren + 1 : close_paren]
        header = _HEADER.match(text)
        if header is None:
            raise UnreadableCode(f"a C++ loop header the loop parser does not read: {text!r}")
        start, end = _as_int(header["start"]), _as_int(header["end"])
        if start is None or end is None:
            raise UnreadableCode(f"a C++ loop whose bounds are not numbers: {text!r}")
        found.append(
            Loop(header["var"], start, end, match.start(), _body_end(cpp, close_paren + 1))
        )
    return found


def full_length_passes(cpp: str, n: int) -> int:
    """How many passes over [0, n) the kernel makes, however the generator spells a pass.

    A pass is a run of consecutive outermost loops over one index whose ranges join end to
    start, starting at 0: a vector loop plus its scalar tail (2.4-era code) is one pass, one
    loop with a masked tail (later code) is one pass, and a scalar tail loop nested inside the
    vector loop (some releases at small n) belongs to its parent. A pass over k*n elements
    counts k. Loops inside other loops (tiling over a second dimension) are not passes.
    """
    all_loops = loops(cpp)
    outermost = [
        loop
        for loop in all_loops
        if not any(o.header_at < loop.header_at < o.body_end for o in all_loops if o is not loop)
    ]
    passes = 0
    for start, end in _joined_ranges(outermost):
        extent = end - start
        if start == 0 and extent > 0 and extent % n == 0:
            passes += extent // n
    return passes


def full_length_loops(wrapper: str, n: int) -> int:
    """Full-length passes summed over every C++ kernel in the wrapper.

    A wrapper with no C++ kernel raises `UnreadableCode`: its passes are not in generated C++
    (extern or aten calls), so 0 would be a count of nothing.
    """
    found = kernels(wrapper)
    if not found:
        raise UnreadableCode(f"no C++ kernel in the generated wrapper: {call_body(wrapper)[:8]}")
    return sum(full_length_passes(kernel.source, n) for kernel in found)


def _joined_ranges(outermost: list[Loop]) -> list[tuple[int, int]]:
    ranges: list[tuple[str, int, int]] = []
    for loop in outermost:
        end = max(loop.start, loop.end)
        if ranges and ranges[-1][0] == loop.var and ranges[-1][2] == loop.start:
            ranges[-1] = (loop.var, ranges[-1][1], end)
        else:
            ranges.append((loop.var, loop.start, end))
    return [(start, end) for _, start, end in ranges]


def _matching(text: str, at: int, opening: str, closing: str) -> int:
    depth = 0
    for pos in range(at, len(text)):
        if text[pos] == opening:
            depth += 1
        elif text[pos] == closing:
            depth -= 1
            if depth == 0:
                return pos
    raise ValueError(f"unbalanced {opening}{closing} in generated code at offset {at}")


def _body_end(cpp: str, after_header: int) -> int:
    rest = cpp[after_header:]
    stripped = len(rest) - len(rest.lstrip())
    pos = after_header + stripped
    if pos < len(cpp) and cpp[pos] == "{":
        return _matching(cpp, pos, "{", "}")
    if cpp.startswith("for", pos):
        inner = _FOR.match(cpp, pos)
        if inner is not None:
            return _body_end(cpp, _matching(cpp, inner.end() - 1, "(", ")") + 1)
    semicolon = cpp.find(";", pos)
    return len(cpp) if semicolon < 0 else semicolon


def _as_int(expr: str) -> int | None:
    match = _INT.fullmatch(expr)
    return int(match["value"]) if match else None


# --- scratch allocated by the wrapper's call -------------------------------------------------

_ALLOC = re.compile(
    r"^\s*(?P<name>\w+)\s*=\s*(?:empty_strided_cpu|empty_strided)\(\s*"
    r"\((?P<size>[^)]*)\)\s*,\s*\((?P<stride>[^)]*)\)\s*,\s*"
    r"(?:device='cpu'\s*,\s*)?(?:dtype=)?torch\.(?P<dtype>\w+)"
)
_EMPTY = re.compile(
    r"^\s*(?P<name>\w+)\s*=\s*empty\(\s*\((?P<size>[^)]*)\)\s*,\s*"
    r"(?:device='cpu'\s*,\s*)?dtype=torch\.(?P<dtype>\w+)"
)
"""torch 2.2's wrapper allocates a contiguous buffer as `empty(size, device=, dtype=)`
(`from torch import empty`); 2.1 and 2.4 on spell it `empty_strided(size, stride, ...)`."""
_ALIAS = re.compile(r"^\s*(?P<name>\w+)\s*=\s*(?:reinterpret_tensor\(\s*)?(?P<base>buf\w+)\b")
_DEL = re.compile(r"^\s*del\s+(?P<names>[\w\s,]+)$")
_ASSIGN_CALL = re.compile(r"^\s*(?P<name>buf\w+)\s*=\s*(?P<callee>[\w.]+)\(")


@dataclass(frozen=True)
class StaticScratch:
    """Peak bytes live at once among the buffers `call` allocates (None when not derivable)."""

    peak_bytes: int | None
    allocations: int
    reason: str = ""


def call_body(wrapper: str) -> list[str]:
    """The lines of the wrapper's `call(args)` (module function or `Runner.call` method)."""
    lines = wrapper.splitlines()
    for index, line in enumerate(lines):
        match = re.match(r"^(?P<indent>\s*)def call\((?:self,\s*)?args\):", line)
        if match is None:
            continue
        indent = len(match["indent"])
        body = []
        for following in lines[index + 1 :]:
            if following.strip() and len(following) - len(following.lstrip()) <= indent:
                break
            body.append(following)
        return body
    raise ValueError("generated wrapper has no `def call(args)`: not Inductor wrapper code?")


def static_scratch(wrapper: str) -> StaticScratch:
    """Simulate the allocations and frees in `call` and return the peak live bytes.

    A storage stays alive while any name (the buffer or an alias of it) refers to it. A
    buffer made by a call this simulation does not know (an extern kernel, an aten fallback)
    makes the peak underivable: the result says which line.
    """
    storage_of: dict[str, int] = {}
    size_of: dict[int, int] = {}
    live = peak = allocations = 0
    for line in call_body(wrapper):
        code = line.split("#", 1)[0].rstrip()
        if alloc := _ALLOC.match(code) or _EMPTY.match(code):
            fields = alloc.groupdict()
            nbytes = _storage_bytes(fields["size"], fields.get("stride"), fields["dtype"])
            if nbytes is None:
                return StaticScratch(None, allocations, f"unknown size or dtype: {code.strip()}")
            storage = len(size_of)
            size_of[storage] = nbytes
            storage_of[alloc["name"]] = storage
            live += nbytes
            allocations += 1
            peak = max(peak, live)
        elif (alias := _ALIAS.match(code)) and alias["base"] in storage_of:
            storage_of[alias["name"]] = storage_of[alias["base"]]
        elif deleted := _DEL.match(code):
            for name in (part.strip() for part in deleted["names"].split(",")):
                storage = storage_of.pop(name, None)
                if storage is not None and storage not in storage_of.values():
                    live -= size_of[storage]
        elif other := _ASSIGN_CALL.match(code):
            return StaticScratch(
                None, allocations, f"buffer made by {other['callee']}: {code.strip()}"
            )
    return StaticScratch(peak, allocations)


def _storage_bytes(size: str, stride: str | None, dtype: str) -> int | None:
    """Bytes of the storage a buffer of `size` and `stride` spans (`stride` None: contiguous,
    torch 2.2's `empty`), both as the wrapper writes them (`3, 4`); None when a dimension or
    stride is not a number or the dtype is unknown."""
    sizes = _numbers(size)
    strides = None if stride is None else _numbers(stride)
    if dtype not in ITEMSIZE or sizes is None or (stride is not None and strides is None):
        return None
    if strides is not None and len(sizes) != len(strides):
        return None
    if any(s == 0 for s in sizes):
        return 0
    if strides is None:
        return math.prod(sizes) * ITEMSIZE[dtype]
    elements = 1 + sum((s - 1) * st for s, st in zip(sizes, strides))
    return elements * ITEMSIZE[dtype]


def _numbers(text: str) -> list[int] | None:
    """`3, 4` as [3, 4]; None when an entry is not a whole number (a symbol, say)."""
    parts = [s for s in text.replace(" ", "").split(",") if s]
    return [int(s) for s in parts] if all(re.fullmatch(r"-?\d+", s) for s in parts) else None
