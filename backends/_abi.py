"""The kernel ABI's entries and op codes, read from ``ember/abi.h``, the one place they are
defined: fallback messages, ``python -m ember.backends`` and the conformance suite name ops
from here, so a new op code needs no second table."""
import functools
import os
import re

# primitives a plugin may leave out: the core runs them on the host through the CPU plugin
HOST_FALLBACK = ("copy", "fill", "unary", "binary", "reduce", "matmul", "random", "where",
                 "scan", "index", "search")
# fused kernels a plugin may add: left out, the core runs its composite on the device
FUSED = ("softmax", "norm", "nll", "conv", "pool", "adam")
# entries of later minor versions: left out, the core runs its own path (sort: on the host;
# rnn: the per-step ops; activation, ternary: the composites)
OPTIONAL = ("sort", "rnn", "activation", "ternary")


def header_path():
    """``ember/abi.h`` as installed with ember (``ember.get_include()``)."""
    from ember.core import _dtype
    return os.path.join(os.path.dirname(_dtype.__file__), "include", "ember", "abi.h")


def table_entries(text):
    """The names of ``ember_kernel_table``'s function pointers, in table order."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    body = re.search(r"typedef struct \{(.*?)\} ember_kernel_table;", text, flags=re.S)
    return tuple(re.findall(r"\(\*(\w+)\)\s*\(", body.group(1)))


with open(header_path(), encoding="utf-8") as _f:
    # the table's entries in order (the first six are the memory core every plugin has)
    ENTRIES = table_entries(_f.read())


@functools.cache
def abi_ops():
    """{family: (op name for code 0, code 1, ...)} for every op-coded entry of abi.h."""
    with open(header_path(), encoding="utf-8") as f:
        return parse(f.read())


def parse(text):
    """The op families of a header's text.  Each ``enum { ... EMBER_<FAMILY>_COUNT = n }``
    block is one family; a member's name is its enum name without ``EMBER_<FAMILY>_`` when
    every member has that prefix (else without ``EMBER_``), lowercased: ``binary: add``,
    ``softmax: softmax_backward``, ``conv: backward_input``.  Flags past the count are
    skipped."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    ops = {}
    for body in re.findall(r"enum\s*\{(.*?)\}", text, flags=re.S):
        members = [(n, int(v, 0)) for n, v in
                   re.findall(r"EMBER_(\w+)\s*=\s*(0x[0-9a-fA-F]+|\d+)", body)]
        counts = [(n, v) for n, v in members if n.endswith("_COUNT")]
        if not counts:
            continue                        # dtype codes, return codes, flags
        family, count = counts[0][0][:-len("_COUNT")].lower(), counts[0][1]
        names = [None] * count
        prefix = family.upper() + "_"
        cut = len(prefix) if all(n.startswith(prefix) for n, _ in members) else 0
        for n, v in members:
            if v < count and not n.endswith("_COUNT"):
                names[v] = n[cut:].lower()
        ops[family] = tuple(names)
    return ops


@functools.cache
def dtype_names():
    """{dtype code: ember dtype name} (abi.h numbers dtypes as PyTorch's ScalarType)."""
    from ember.core import _dtype
    return {d.code: d.name for d in _dtype.all_dtypes}


def op_key(entry, op, dtypes):
    """The name of one kernel call, as fallbacks are counted and declared:
    ``"binary.pow[float16]"``, ``"matmul[float32]"``, ``"copy[float32->int64]"``."""
    names = dtype_names()
    dt = "->".join(names.get(d, str(d)) for d in dtypes)
    family = abi_ops().get(entry)
    if family is None:
        return f"{entry}[{dt}]"
    name = family[op] if 0 <= op < len(family) else f"op{op}"
    return f"{entry}.{name}[{dt}]"


def matches(key, pattern):
    """Whether kernel call ``key`` matches a declared ``pattern``: ``*`` and ``?`` are
    wildcards, brackets are literal (``"binary.pow[float16]"`` names one dtype)."""
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, key) is not None
