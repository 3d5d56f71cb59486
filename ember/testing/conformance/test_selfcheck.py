"""The suite checks itself: every op code of the installed abi.h has a case (so a new ABI
op cannot go untested), and every case names a code that exists."""
import pytest

from ember.testing.conformance import (  # noqa: F401  (register every case)
    _cases_convpool,
    _cases_determinism,
    _cases_devices,
    _cases_elementwise,
    _cases_errors,
    _cases_gradgrad,
    _cases_indexing,
    _cases_large,
    _cases_misc,
    _cases_nn,
    _cases_reduce_index,
    _cases_rnn,
    _cases_training,
)
from ember.testing.conformance._abi import FAMILIES, UNCODED, abi_path, op_codes
from ember.testing.conformance._case import CATALOGUE


@pytest.mark.ember_conformance(family="selfcheck")
def test_every_abi_op_code_has_a_case():
    codes = op_codes()
    assert set(FAMILIES) <= set(codes), f"{abi_path()}: families missing: " \
        f"{sorted(set(FAMILIES) - set(codes))}"
    missing = [f"{fam}.{op}" for fam, ops in codes.items() for op in ops
               if (fam, op) not in CATALOGUE]
    assert not missing, (f"op codes in {abi_path()} that the conformance suite does not "
                         f"test: {', '.join(missing)}; add a case for each")


@pytest.mark.ember_conformance(family="selfcheck")
def test_every_case_names_an_abi_op_code():
    codes = op_codes()
    stale = [f"{fam}.{op}" for fam, op in CATALOGUE
             if fam in FAMILIES + UNCODED and op not in codes.get(fam, ())]
    assert not stale, f"cases for op codes {abi_path()} does not have: {', '.join(stale)}"
