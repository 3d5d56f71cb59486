"""The shape and joining ops of core/shapes.py against PyTorch: cat/stack/h/vstack,
repeat, tile, roll, tril/triu, diag, diag_embed, diff, the broadcasting helpers,
meshgrid, atleast_*d, the splits, the NumPy-style stacks and layouts (ravel, unfold,
rot90, block_diag, ...), values and gradients."""
import pytest
import torch

import ember


@pytest.mark.parametrize("expr", [
    "F.cat([a, b], 0)", "F.cat([a, b, a], 1)", "F.cat((a, b.double()), -1)",
    "F.cat([a, F.zeros(0)])", "F.stack([a, b])", "F.stack([a, b], 2)",
    "F.stack([a[0], b[0]], -1)", "F.hstack([a, b])", "F.vstack([a[0], b[1]])",
    "F.concat([a.t(), b.t()])", "a.repeat(2, 3)", "a.repeat(2, 1, 2)", "a[0].repeat(3)",
    "F.tile(a, (2,))", "F.tile(a, (2, 1, 2))", "F.roll(a, 1, 0)", "F.roll(a, -2, 1)",
    "F.roll(a, (1, 2), (0, 1))", "F.roll(a, 5)", "F.tril(a)", "F.tril(a, -1)", "F.triu(a, 1)",
    "F.triu(a.view(2, 2, 3))", "F.diag(a)", "F.diag(a, 1)", "F.diag(a[0])", "F.diag(a[0], -2)",
])
def test_joining_and_shape_composites(expr, device, oracle):
    oracle.expr_matches(expr, device, rtol=1e-5, atol=1e-6)


def test_joining_errors(device):
    a = ember.ones(2, 3, device=device)
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 0"):
        ember.cat([a, ember.ones(2, 4, device=device)])
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        ember.stack([a, a.t()])
    with pytest.raises(ValueError, match="non-empty"):      # torch's type for cat
        ember.cat([])
    with pytest.raises(RuntimeError, match="zero-dimensional"):
        ember.cat([ember.tensor(1.0), ember.tensor(2.0)])
    with pytest.raises(RuntimeError, match="Number of dimensions of repeat dims"):
        a.repeat(2)


def test_split_with_sizes_is_public():
    x = ember.arange(5.)
    for pieces in (ember.split_with_sizes(x, [2, 3]), x.split_with_sizes([2, 3])):
        assert [p.tolist() for p in pieces] == [[0., 1.], [2., 3., 4.]]


@pytest.mark.parametrize("offset,dim1,dim2", [(0, -2, -1), (1, 0, 2), (-2, 2, 0), (0, 1, 0)])
def test_diag_embed(device, oracle, offset, dim1, dim2):
    a, ta = oracle.normal_pair((2, 3), ember.float32, device)
    oracle.assert_matches(ember.diag_embed(a, offset, dim1, dim2),
                          torch.diag_embed(ta, offset, dim1, dim2))
    oracle.assert_matches(a.t().diag_embed(offset), ta.t().diag_embed(offset))


def test_diag_embed_errors(device):
    with pytest.raises(RuntimeError, match="cannot be identical"):
        ember.diag_embed(ember.ones(2, 3, device=device), 0, 1, 1)
    with pytest.raises(IndexError, match="out of range"):
        ember.diag_embed(ember.ones(2, 3, device=device), 0, 0, 3)


# values and gradients over dtypes, broadcasting, non-contiguous and empty inputs, one
# row per case (conftest.py's check_table_case)
F, D, L, B = "float32", "float64", "int64", "bool"
CASES = [
    ("diff", lambda m, a: m.diff(a), [((3, 5), D, "n")], True),
    ("diff_n2_dim0", lambda m, a: m.diff(a, n=2, dim=0), [((4, 3), D, "n")], True),
    ("diff_pre_app", lambda m, a, b, c: m.diff(a, 1, -1, b, c),
     [((3, 4), D, "n"), ((3, 2), D, "n"), ((3, 1), D, "n")], True),
    ("diff_bool", lambda m, a: m.diff(a > 0), [((3, 5), D, "n")], False),
    ("diff_int", lambda m, a: m.diff(a, 3), [((6,), L, "int")], False),
    ("broadcast_to", lambda m, a: m.broadcast_to(a, (2, 3, 4)), [((3, 1), D, "n")], True),
    ("broadcast_tensors", lambda m, a, b: m.broadcast_tensors(a, b),
     [((3, 1), D, "n"), ((4,), D, "n")], True),
    ("meshgrid_ij", lambda m, a, b: m.meshgrid(a, b, indexing="ij"),
     [((3,), D, "n"), ((4,), D, "n")], True),
    ("meshgrid_xy", lambda m, a, b, c: m.meshgrid(a, b, c, indexing="xy"),
     [((3,), D, "n"), ((4,), D, "n"), ((2,), D, "n")], True),
    ("atleast_1d", lambda m, a: m.atleast_1d(a), [((), D, "n")], True),
    ("atleast_2d", lambda m, a, b: m.atleast_2d(a, b), [((), D, "n"), ((3,), D, "n")], True),
    ("atleast_3d", lambda m, a, b, c: m.atleast_3d([a, b, c]),
     [((), D, "n"), ((3,), D, "n"), ((2, 3), D, "n")], True),
    ("tensor_split_n", lambda m, a: m.tensor_split(a, 3, dim=1), [((2, 7), D, "n")], True),
    ("tensor_split_idx", lambda m, a: m.tensor_split(a, [1, 5, 9]), [((7, 2), D, "n")], True),
    ("hsplit", lambda m, a: m.hsplit(a, 2), [((3, 4), D, "n")], True),
    ("hsplit_1d", lambda m, a: m.hsplit(a, [2]), [((5,), D, "n")], True),
    ("vsplit", lambda m, a: m.vsplit(a, [1]), [((3, 4), D, "n")], True),
    ("dsplit", lambda m, a: m.dsplit(a, 2), [((2, 3, 4), D, "n")], True),
    ("dstack", lambda m, a, b: m.dstack([a, b]), [((3,), D, "n"), ((3,), D, "n")], True),
    ("column_stack", lambda m, a, b: m.column_stack([a, b]),
     [((3,), D, "n"), ((3, 2), D, "n")], True),
    ("row_stack", lambda m, a, b: m.row_stack([a, b]), [((3,), D, "n"), ((2, 3), D, "n")], True),
    ("ravel", lambda m, a: m.ravel(a), [((3, 4), D, "n")], True),
    ("unfold", lambda m, a: a.unfold(1, 3, 1), [((2, 6), D, "n")], True),
    ("unfold_step", lambda m, a: a.unfold(0, 2, 2), [((5, 3), D, "n")], True),
    ("rot90", lambda m, a: m.rot90(a), [((2, 3, 4), D, "n")], True),
    ("rot90_k3", lambda m, a: m.rot90(a, 3, [2, 0]), [((2, 3, 4), D, "n")], True),
    ("rot90_k2", lambda m, a: m.rot90(a, -2), [((2, 3), L, "int")], False),
    ("diagflat", lambda m, a: m.diagflat(a, -1), [((2, 2), D, "n")], True),
    ("block_diag", lambda m, a, b, c: m.block_diag(a, b, c),
     [((2, 3), D, "n"), ((), D, "n"), ((2,), D, "n")], True),
    ("block_diag_mixed", lambda m, a, b: m.block_diag(a, b), [((2, 2), L, "int"), ((1, 2), F, "n")],
     False),
    ("cartesian_prod", lambda m, a, b: m.cartesian_prod(a, b), [((3,), D, "n"), ((2,), D, "n")],
     True),
    ("combinations", lambda m, a: m.combinations(a), [((4,), D, "n")], True),
    ("combinations_r3", lambda m, a: m.combinations(a, 3, with_replacement=True),
     [((3,), L, "int")], False),
    # (torch's own vander backward trips over an in-place op: values only)
    ("vander", lambda m, a: m.vander(a), [((4,), D, "n")], False),
    ("vander_inc", lambda m, a: m.vander(a, 3, True), [((4,), L, "int")], False),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("transpose", [False, True], ids=["contig", "strided"])
def test_forward_and_grad(case, transpose, device, table_case):
    table_case(case, transpose, device)


@pytest.mark.parametrize("fn", [
    lambda L, x: L.tensor_split(x, indices=[2], dim=-1),
    lambda L, x: L.tensor_split(x, sections=2),
    lambda L, x: L.tensor_split(x, tensor_indices_or_sections=L.tensor([1, 3]), dim=1),
    lambda L, x: L.tensor_split(x, tensor_indices_or_sections=L.tensor(2), dim=1),
    lambda L, x: x.tensor_split(sections=2, dim=1),
    lambda L, x: L.tensor_split(input=x, indices=(1,), dim=1),
    lambda L, x: L.tensor_split(x, sections=L.tensor(2)),
])
def test_tensor_split_keyword_overloads(fn, oracle):
    def run(lib):
        return [p.tolist() for p in fn(lib, lib.arange(10).reshape(2, 5))]
    assert oracle.outcome(ember, run) == oracle.outcome(torch, run)


@pytest.mark.parametrize("fn", [
    lambda L, x: L.roll(x, L.tensor(1), 0), lambda L, x: L.roll(x, L.tensor(1)),
    lambda L, x: x.roll(L.tensor(-1), 1), lambda L, x: L.roll(x, shifts=L.tensor(2), dims=1),
    lambda L, x: L.roll(x, 1, L.tensor(0)), lambda L, x: L.roll(x, (1,), L.tensor(1)),
    # a bool or a tensor of several elements is not an int: TypeError
    lambda L, x: L.roll(x, (True,), 0), lambda L, x: L.roll(x, 1, True),
    lambda L, x: L.roll(x, L.tensor([1, 2]), (0, 1)),
])
def test_roll_takes_index_like_shifts_and_dims(fn, oracle):
    assert oracle.outcome(ember, lambda lib: fn(lib, lib.arange(6).reshape(2, 3))) == \
        oracle.outcome(torch, lambda lib: fn(lib, lib.arange(6).reshape(2, 3)))
