"""The kernel ABI's op codes, read from the header ember ships (``ember/abi.h`` under
``ember.get_include()``), so a code added to the ABI cannot go untested: the suite's
self-check fails when a code here has no case (see ``_catalogue``).

Each ``enum { ... EMBER_<FAMILY>_COUNT = n }`` block is one family; its members are
lowercased with the ``EMBER_<FAMILY>_`` prefix stripped when present, else ``EMBER_``
(``EMBER_LOG_SOFTMAX`` -> softmax ``log_softmax``); members at or after COUNT (flags such
as ``EMBER_INDEX_WRAP``) are not op codes.  Entries of the kernel table that take no op
code are families of one op.
"""
import os
import re

__all__ = ["FAMILIES", "UNCODED", "abi_path", "abi_version", "parse", "op_codes"]

FAMILIES = ("unary", "binary", "reduce", "scan", "softmax", "random", "index", "search",
            "norm", "nll", "conv", "pool")
# kernel-table entries without op codes: each is a family of one op
UNCODED = ("copy", "fill", "matmul", "where", "adam")

_ENUM = re.compile(r"enum\s*\{(.*?)\}", re.S)
_MEMBER = re.compile(r"\b(EMBER_\w+)\s*=\s*(0x[0-9A-Fa-f]+|\d+)")
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_VERSION = re.compile(r"#define\s+EMBER_ABI_VERSION\s+(\d+)")


def abi_path():
    """The header of the installed ember."""
    import ember
    return os.path.join(ember.get_include(), "ember", "abi.h")


def parse(text):
    """{family: [op name, ...] in code order} for every ``EMBER_<FAMILY>_COUNT`` block."""
    text = _COMMENT.sub(" ", text)
    families = {}
    for body in _ENUM.findall(text):
        members = [(name, int(value, 0)) for name, value in _MEMBER.findall(body)]
        counts = [(name, value) for name, value in members if name.endswith("_COUNT")]
        if len(counts) != 1:
            continue                    # dtype codes, error codes: not an op family
        count_name, count = counts[0]
        family = count_name[len("EMBER_"):-len("_COUNT")].lower()
        prefix = f"EMBER_{family.upper()}_"
        ops = []
        for name, value in sorted(members, key=lambda m: m[1]):
            if name == count_name or value >= count:
                continue
            stem = name[len(prefix):] if name.startswith(prefix) else name[len("EMBER_"):]
            ops.append(stem.lower())
        families[family] = ops
    return families


def op_codes(path=None):
    """The op families of the installed header, plus the one-op families."""
    with open(path or abi_path()) as f:
        families = parse(f.read())
    for name in UNCODED:
        families.setdefault(name, [name])
    return families


def abi_version(path=None):
    with open(path or abi_path()) as f:
        m = _VERSION.search(f.read())
    return int(m.group(1)) if m else None
