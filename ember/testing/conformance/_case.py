"""One conformance case: an ABI op code (or a behaviour such as host copies) checked on a
device over dtypes and operand layouts ("variants").  Cases register themselves in
``CATALOGUE`` from the ``_cases_*`` modules; the test modules parametrise over it and tag
every test with its family, op and dtype (the ``ember_conformance`` marker) so the
coverage table and the host-fallback rule can read them."""
from dataclasses import dataclass, field
from typing import Callable

import pytest

__all__ = ["Case", "CATALOGUE", "case", "params", "key", "ANY"]

ANY = "-"          # the dtype column of cases that are not per dtype (training, errors)

CATALOGUE = {}     # (family, op) -> Case


def key(family, op, dtype):
    """The host-fallback key of one case: "family.op[dtype]"; a family of one op (copy,
    fill, matmul, where, adam) drops ".op"; copies name both dtypes."""
    head = family if op in ("", family) else f"{family}.{op}"
    return head if dtype == ANY else f"{head}[{dtype}]"


@dataclass(frozen=True)
class Case:
    family: str
    op: str
    dtypes: tuple
    variants: tuple
    run: Callable = field(compare=False)   # run(device, dtype, variant) asserts
    skip: Callable = field(default=None, compare=False)   # (dtype, variant) -> reason|None
    key: Callable = field(default=None, compare=False)    # (dtype, variant) -> key

    def key_for(self, dtype, variant):
        return self.key(dtype, variant) if self.key else key(self.family, self.op, dtype)


def case(family, op, dtypes, variants=("contiguous",), skip=None, key=None):
    """Register the decorated ``run(device, dtype, variant)`` as the case family.op."""
    def register(run):
        CATALOGUE[(family, op)] = Case(family, op, tuple(dtypes), tuple(variants), run,
                                       skip, key)
        return run
    return register


def params(*families):
    """pytest.param(case, dtype, variant) for every case of the families, each tagged
    with ``ember_conformance(family, op, dtype, key)``."""
    out = []
    for (family, op), c in CATALOGUE.items():
        if family not in families:
            continue
        for dtype in c.dtypes:
            for variant in c.variants:
                if c.skip and c.skip(dtype, variant):
                    continue
                mark = pytest.mark.ember_conformance(family=family, op=op, dtype=dtype,
                                                     key=c.key_for(dtype, variant))
                name = f"{op}-{dtype}-{variant}" if op != family else f"{dtype}-{variant}"
                out.append(pytest.param(c, dtype, variant, id=name, marks=mark))
    return out
