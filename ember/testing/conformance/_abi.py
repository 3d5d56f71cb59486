"""The kernel ABI's op codes as the suite covers them: the families ``ember/abi.h`` defines
(read by ``ember.backends._abi``, the one parser of the header), plus the kernel-table
entries that take no op code, each a family of one op.  The suite's self-check fails when
a code here has no case (see ``test_selfcheck``), so a code added to the ABI cannot go
untested."""
import re

from ember.backends import _abi
from ember.backends._abi import parse

__all__ = ["FAMILIES", "UNCODED", "abi_path", "abi_version", "parse", "op_codes"]

FAMILIES = ("unary", "binary", "reduce", "scan", "softmax", "random", "index", "search",
            "norm", "nll", "conv", "pool", "rnn", "activation", "ternary")
# kernel-table entries without op codes: each is a family of one op
UNCODED = ("copy", "fill", "matmul", "where", "adam", "sort", "sgd")


def abi_path():
    """The header of the installed ember."""
    return _abi.header_path()


def op_codes(path=None):
    """{family: [op name, ...]} of the installed header (or ``path``), with the one-op
    families."""
    with open(path or abi_path(), encoding="utf-8") as f:
        families = {k: list(v) for k, v in parse(f.read()).items()}
    for name in UNCODED:
        families.setdefault(name, [name])
    return families


def abi_version(path=None):
    """EMBER_ABI_VERSION of the installed header (or ``path``)."""
    with open(path or abi_path(), encoding="utf-8") as f:
        m = re.search(r"#define\s+EMBER_ABI_VERSION\s+(\d+)", f.read())
    return int(m.group(1)) if m else None
