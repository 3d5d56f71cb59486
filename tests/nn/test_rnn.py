"""Recurrent layers, cells and nn.utils.rnn against PyTorch 2.13: with the same weights
(a copied state_dict) the outputs, final states and gradients w.r.t. input, initial state and
every parameter match; so do packing/padding, reprs, parameter names and errors."""
import warnings

import ember.nn as enn
import ember.nn.utils.rnn as ernn
import numpy as np
import pytest
import torch
import torch.nn.utils.rnn as trnn

import ember

RNG = np.random.default_rng(0)
DTYPES = {"float32": (np.float32, 2e-5), "float64": (np.float64, 1e-10)}

# (class name, constructor kwargs); the RNN variants cover both nonlinearities
MODES = [("RNN", {}), ("RNN", {"nonlinearity": "relu"}), ("LSTM", {}),
         ("LSTM", {"proj_size": 2}), ("GRU", {})]
MODE_IDS = ["rnn_tanh", "rnn_relu", "lstm", "lstm_proj", "gru"]


def pair(name, *args, dtype=np.float64, **kwargs):
    """A torch module and an ember module holding the same weights."""
    torch.manual_seed(0)
    tm = getattr(torch.nn, name)(*args, **kwargs)
    em = getattr(enn, name)(*args, **kwargs)
    if dtype == np.float64:
        tm, em = tm.double(), em.double()
    em.load_state_dict({k: ember.tensor(v.detach().numpy().copy())
                        for k, v in tm.state_dict().items()})
    return em, tm


def leaf(a):
    """The same array as a torch and an ember leaf that requires grad."""
    return (torch.tensor(a, requires_grad=True), ember.tensor(a.copy(), requires_grad=True))


def flat(out):
    """The tensors of a (nested) tuple result, in order."""
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flat(o)]
    return [out]


def close(e, t, tol):
    assert tuple(e.shape) == tuple(t.shape), (e.shape, t.shape)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


def check_outputs_and_grads(em, tm, out_e, out_t, leaves, tol):
    """Outputs equal; then the gradients of sum(out_i * w_i) w.r.t. the leaves and every
    parameter equal."""
    fe, ft = flat(out_e), flat(out_t)
    assert len(fe) == len(ft)
    loss_t, loss_e = 0, 0
    for e, t in zip(fe, ft):
        close(e, t, tol)
        w = RNG.standard_normal(tuple(t.shape)).astype(t.detach().numpy().dtype)
        loss_t = loss_t + (t * torch.tensor(w)).sum()
        loss_e = loss_e + (e * ember.tensor(w)).sum()
    loss_t.backward()
    loss_e.backward()
    for lt, le in leaves:
        close(le.grad, lt.grad, tol)
    pe, pt = dict(em.named_parameters()), dict(tm.named_parameters())
    assert list(pe) == list(pt)
    for k in pt:
        close(pe[k].grad, pt[k].grad, tol)


def initial_state(name, kwargs, layers, batch, hidden, dtype):
    """(torch, ember) leaves for h0 (and c0): one list of pairs."""
    real = kwargs.get("proj_size") or hidden
    shapes = [(layers,) + batch + (real,)]
    if name == "LSTM":
        shapes.append((layers,) + batch + (hidden,))
    return [leaf(RNG.standard_normal(s).astype(dtype)) for s in shapes]


def as_hx(name, pairs, i):
    hs = [p[i] for p in pairs]
    return tuple(hs) if name == "LSTM" else hs[0]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("num_layers", [1, 2])
@pytest.mark.parametrize("name,kwargs", MODES, ids=MODE_IDS)
def test_recurrent_layer_matches_torch(name, kwargs, num_layers, bidirectional, batch_first,
                                       dtype):
    npdt, tol = DTYPES[dtype]
    em, tm = pair(name, 3, 4, num_layers, dtype=npdt, bidirectional=bidirectional,
                  batch_first=batch_first, **kwargs)
    steps, batch = 4, 3
    shape = (batch, steps, 3) if batch_first else (steps, batch, 3)
    x = leaf(RNG.standard_normal(shape).astype(npdt))
    layers = num_layers * (2 if bidirectional else 1)
    hx = initial_state(name, kwargs, layers, (batch,), 4, npdt)
    out_t = tm(x[0], as_hx(name, hx, 0))
    out_e = em(x[1], as_hx(name, hx, 1))
    check_outputs_and_grads(em, tm, out_e, out_t, [x] + hx, tol)


@pytest.mark.parametrize("name,kwargs", MODES, ids=MODE_IDS)
def test_recurrent_layer_without_hx_and_without_bias(name, kwargs):
    em, tm = pair(name, 3, 5, 2, bias=False, bidirectional=True, **kwargs)
    assert list(em.state_dict()) == list(tm.state_dict())
    x = leaf(RNG.standard_normal((6, 2, 3)))
    check_outputs_and_grads(em, tm, em(x[1]), tm(x[0]), [x], 1e-10)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("name,kwargs", MODES, ids=MODE_IDS)
def test_unbatched_input(name, kwargs, batch_first):
    em, tm = pair(name, 3, 4, 2, bidirectional=True, batch_first=batch_first, **kwargs)
    x = leaf(RNG.standard_normal((5, 3)))
    hx = initial_state(name, kwargs, 4, (), 4, np.float64)
    out_e, out_t = em(x[1], as_hx(name, hx, 1)), tm(x[0], as_hx(name, hx, 0))
    check_outputs_and_grads(em, tm, out_e, out_t, [x] + hx, 1e-10)
    # and without an initial state
    close(em(x[1])[0], tm(x[0])[0], 1e-10)


@pytest.mark.parametrize("name,kwargs", MODES, ids=MODE_IDS)
def test_parameters_repr_and_default_init(name, kwargs):
    args = (3, 8, 2)
    opts = dict(bidirectional=True, batch_first=True, dropout=0.25, **kwargs)
    tm = getattr(torch.nn, name)(*args, **opts)
    em = getattr(enn, name)(*args, **opts)
    assert repr(em) == repr(tm)
    te, tt = em.state_dict(), tm.state_dict()
    assert list(te) == list(tt)
    for k in tt:
        assert tuple(te[k].shape) == tuple(tt[k].shape), k
        assert te[k].dtype == ember.float32
    assert em._flat_weights_names == tm._flat_weights_names
    assert [[tuple(p.shape) for p in ws] for ws in em.all_weights] == \
        [[tuple(p.shape) for p in ws] for ws in tm.all_weights]
    bound = 1 / np.sqrt(8)                 # U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))
    values = np.concatenate([p.detach().numpy().ravel() for p in em.parameters()])
    assert np.abs(values).max() <= bound and np.abs(values).max() > 0.9 * bound
    assert abs(values.std() - bound / np.sqrt(3)) < 0.1 * bound
    em.flatten_parameters()                # accepted, changes nothing
    assert list(em.state_dict()) == list(tt)


def test_repr_defaults_and_options():
    for args, kwargs in [((3, 4), {}), ((3, 4, 1), {"bias": False}),
                         ((3, 4), {"nonlinearity": "relu"})]:
        assert repr(enn.RNN(*args, **kwargs)) == repr(torch.nn.RNN(*args, **kwargs))
    assert repr(enn.GRU(2, 3, 3)) == repr(torch.nn.GRU(2, 3, 3))


def test_dropout_between_layers():
    x = RNG.standard_normal((5, 2, 3))
    # p = 1 zeroes every layer output but the last: deterministic, comparable with torch
    em, tm = pair("LSTM", 3, 4, 3, dropout=1.0)
    xt, xe = torch.tensor(x), ember.tensor(x)
    for e, t in zip(flat(em(xe)), flat(tm(xt))):
        close(e, t, 1e-10)
    # evaluation mode ignores dropout
    em, tm = pair("GRU", 3, 4, 2, dropout=0.5)
    em.eval()
    tm.eval()
    close(em(xe)[0], tm(xt)[0], 1e-10)
    em.train()
    ember.manual_seed(0)
    a, _ = em(xe)
    ember.manual_seed(1)
    b, _ = em(xe)
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())      # training mode drops
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        enn.RNN(3, 4, dropout=0.5)


def test_float32_module_with_float32_input_keeps_dtype():
    em, tm = pair("GRU", 3, 4, dtype=np.float32)
    out, h = em(ember.tensor(RNG.standard_normal((4, 2, 3)).astype(np.float32)))
    assert out.dtype == ember.float32 and h.dtype == ember.float32


def test_empty_batch():
    em, tm = pair("LSTM", 3, 4)
    out, (h, c) = em(ember.zeros(5, 0, 3, dtype=ember.float64))
    assert tuple(out.shape) == (5, 0, 4) and tuple(h.shape) == (1, 0, 4)


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("name,kwargs", MODES, ids=MODE_IDS)
def test_double_backward(name, kwargs, packed):
    """Gradients of a gradient (create_graph=True) match torch's."""
    em, tm = pair(name, 2, 3, 2, bidirectional=True, **kwargs)
    xt, xe = leaf(RNG.standard_normal((4, 3, 2)))

    def run(mod, lib, x):
        if packed:
            x = lib.nn.utils.rnn.pack_padded_sequence(x, [2, 4, 3], enforce_sorted=False)
            return mod(x)[0].data
        return mod(x)[0]
    gt, = torch.autograd.grad(run(tm, torch, xt).pow(2).sum(), xt, create_graph=True)
    ge, = ember.autograd.grad(run(em, ember, xe).pow(2).sum(), xe, create_graph=True)
    close(ge, gt, 1e-10)
    gt.pow(2).sum().backward()
    ge.pow(2).sum().backward()
    close(xe.grad, xt.grad, 1e-10)
    pt = dict(tm.named_parameters())
    for k, p in em.named_parameters():
        close(p.grad, pt[k].grad, 1e-10)


def test_steps_are_split_and_joined_by_one_node_each():
    """The projected input is split into steps, and the step outputs joined, by one graph
    node each, not by a narrow or an in-place copy per step (the core's split/cat, whose
    backward builds a full-size gradient per step: quadratic in the sequence length)."""
    em = enn.GRU(2, 3)
    out, _ = em(ember.randn(50, 1, 2))
    names, stack, seen = [], [out.grad_fn], set()
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        names.append(n.name())
        stack.extend(f for f, _ in n.next_functions)
    assert names.count("_SplitBackward") == 1 and names.count("_JoinBackward") == 1
    assert "CopySlices" not in names


# ---------------------------------------------------------------------------------------
# cells

CELLS = [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}), ("LSTMCell", {}),
         ("GRUCell", {}), ("GRUCell", {"bias": False}), ("LSTMCell", {"bias": False})]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("name,kwargs", CELLS,
                         ids=["rnn_tanh", "rnn_relu", "lstm", "gru", "gru_nobias",
                              "lstm_nobias"])
def test_cells_match_torch(name, kwargs, batched, dtype):
    npdt, tol = DTYPES[dtype]
    em, tm = pair(name, 3, 5, dtype=npdt, **kwargs)
    batch = (4,) if batched else ()
    x = leaf(RNG.standard_normal(batch + (3,)).astype(npdt))
    hs = [leaf(RNG.standard_normal(batch + (5,)).astype(npdt))
          for _ in range(2 if name == "LSTMCell" else 1)]

    def hx(i):
        return tuple(h[i] for h in hs) if name == "LSTMCell" else hs[0][i]
    check_outputs_and_grads(em, tm, em(x[1], hx(1)), tm(x[0], hx(0)), [x] + hs, tol)
    # without a state: zeros
    for e, t in zip(flat(em(x[1])), flat(tm(x[0]))):
        close(e, t, tol)


def test_cell_repr_and_parameters():
    for name, kwargs in CELLS + [("RNNCell", {"bias": False, "nonlinearity": "relu"})]:
        tm = getattr(torch.nn, name)(3, 5, **kwargs)
        em = getattr(enn, name)(3, 5, **kwargs)
        assert repr(em) == repr(tm)
        assert {k: tuple(v.shape) for k, v in em.state_dict().items()} == \
            {k: tuple(v.shape) for k, v in tm.state_dict().items()}


def test_cell_used_over_a_sequence_matches_layer():
    """An LSTMCell stepped by hand gives the LSTM layer's result with the same weights."""
    layer = enn.LSTM(3, 4)
    cell = enn.LSTMCell(3, 4)
    cell.load_state_dict({k[:-3]: v for k, v in layer.state_dict().items()})
    x = ember.randn(5, 2, 3)
    h = c = ember.zeros(2, 4)
    outs = []
    for t in range(5):
        h, c = cell(x[t], (h, c))
        outs.append(h)
    out, (hn, cn) = layer(x)
    np.testing.assert_allclose(ember.stack(outs).detach().numpy(), out.detach().numpy(), atol=1e-6)
    np.testing.assert_allclose(cn[0].detach().numpy(), c.detach().numpy(), atol=1e-6)


# ---------------------------------------------------------------------------------------
# padding and packing

def seqs(lengths, feat=(2,), dtype=np.float64):
    return [RNG.standard_normal((n,) + feat).astype(dtype) for n in lengths]


def both_seqs(arrays, grad=False):
    return ([torch.tensor(a, requires_grad=grad) for a in arrays],
            [ember.tensor(a.copy(), requires_grad=grad) for a in arrays])


@pytest.mark.parametrize("padding_side", ["right", "left"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pad_sequence(batch_first, padding_side):
    ts, es = both_seqs(seqs([3, 5, 1]), grad=True)
    kw = dict(batch_first=batch_first, padding_value=-2.5, padding_side=padding_side)
    pt, pe = trnn.pad_sequence(ts, **kw), ernn.pad_sequence(es, **kw)
    close(pe, pt, 0)
    w = RNG.standard_normal(tuple(pt.shape))
    (pt * torch.tensor(w)).sum().backward()
    (pe * ember.tensor(w)).sum().backward()
    for t, e in zip(ts, es):
        close(e.grad, t.grad, 1e-12)
    # a tensor counts as a sequence of its rows
    a = RNG.standard_normal((2, 3))
    close(ernn.pad_sequence(ember.tensor(a)), trnn.pad_sequence(torch.tensor(a)), 0)


@pytest.mark.parametrize("enforce_sorted,lengths", [(True, [4, 3, 3, 1]),
                                                    (False, [2, 4, 1, 3])])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_and_pad_packed_sequence(batch_first, enforce_sorted, lengths):
    padded = RNG.standard_normal((4, 5, 2) if batch_first else (5, 4, 2))
    xt, xe = leaf(padded)
    pt = trnn.pack_padded_sequence(xt, lengths, batch_first=batch_first,
                                   enforce_sorted=enforce_sorted)
    pe = ernn.pack_padded_sequence(xe, ember.tensor(lengths), batch_first=batch_first,
                                   enforce_sorted=enforce_sorted)
    assert isinstance(pe, ernn.PackedSequence) and isinstance(pe, tuple)
    close(pe.data, pt.data, 0)
    assert pe.batch_sizes.tolist() == pt.batch_sizes.tolist()
    assert pe.batch_sizes.dtype == ember.int64
    for a, b in [(pe.sorted_indices, pt.sorted_indices),
                 (pe.unsorted_indices, pt.unsorted_indices)]:
        assert (a is None) == (b is None)
        if a is not None:
            assert a.tolist() == b.tolist()
    for total in [None, 6]:
        kw = dict(batch_first=batch_first, padding_value=7.0, total_length=total)
        (ut, lt), (ue, le) = trnn.pad_packed_sequence(pt, **kw), ernn.pad_packed_sequence(pe, **kw)
        close(ue, ut, 0)
        assert le.tolist() == lt.tolist() and le.dtype == ember.int64
    w = RNG.standard_normal(tuple(ut.shape))
    (ut * torch.tensor(w)).sum().backward()
    (ue * ember.tensor(w)).sum().backward()
    close(xe.grad, xt.grad, 1e-12)
    # unpad / unpack give the sequences back
    for e, t in zip(ernn.unpack_sequence(pe), trnn.unpack_sequence(pt)):
        close(e, t, 0)
    for e, t in zip(ernn.unpad_sequence(ue, le, batch_first=batch_first),
                    trnn.unpad_sequence(ut, lt, batch_first=batch_first)):
        close(e, t, 0)


@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_sequence(enforce_sorted):
    arrays = seqs([4, 2, 1] if enforce_sorted else [2, 4, 1], feat=())
    ts, es = both_seqs(arrays)
    pt = trnn.pack_sequence(ts, enforce_sorted=enforce_sorted)
    pe = ernn.pack_sequence(es, enforce_sorted=enforce_sorted)
    close(pe.data, pt.data, 0)
    assert pe.batch_sizes.tolist() == pt.batch_sizes.tolist()
    assert ernn.invert_permutation(None) is None
    p = ember.tensor([2, 0, 3, 1])
    assert ernn.invert_permutation(p).tolist() == trnn.invert_permutation(torch.tensor([2, 0, 3, 1])).tolist()
    moved = pe.double()
    assert moved.data.dtype == ember.float64 and moved.batch_sizes is pe.batch_sizes
    assert pe.to(ember.float64).data.dtype == ember.float64 and not pe.is_cuda


@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("name,kwargs", MODES, ids=MODE_IDS)
def test_packed_input_matches_torch(name, kwargs, bidirectional):
    """Unsorted lengths, two layers, a given initial state: the packed output, the final
    states (original batch order) and all gradients match."""
    lengths = [3, 5, 1, 5]
    em, tm = pair(name, 2, 4, 2, bidirectional=bidirectional, **kwargs)
    x = leaf(RNG.standard_normal((4, 5, 2)))
    hx = initial_state(name, kwargs, 2 * (2 if bidirectional else 1), (4,), 4, np.float64)
    pt = trnn.pack_padded_sequence(x[0], lengths, batch_first=True, enforce_sorted=False)
    pe = ernn.pack_padded_sequence(x[1], lengths, batch_first=True, enforce_sorted=False)
    out_t, st_t = tm(pt, as_hx(name, hx, 0))
    out_e, st_e = em(pe, as_hx(name, hx, 1))
    assert isinstance(out_e, ernn.PackedSequence)
    assert out_e.batch_sizes is pe.batch_sizes
    assert out_e.sorted_indices.tolist() == out_t.sorted_indices.tolist()
    padded_t = trnn.pad_packed_sequence(out_t, batch_first=True)[0]
    padded_e = ernn.pad_packed_sequence(out_e, batch_first=True)[0]
    close(out_e.data, out_t.data, 1e-10)
    check_outputs_and_grads(em, tm, (padded_e, st_e), (padded_t, st_t), [x] + hx, 1e-10)


def test_packed_sorted_input_without_hx():
    em, tm = pair("GRU", 2, 3, bidirectional=True)
    ts, es = both_seqs(seqs([4, 4, 2]))
    out_t, h_t = tm(trnn.pack_sequence(ts))
    out_e, h_e = em(ernn.pack_sequence(es))
    close(out_e.data, out_t.data, 1e-10)
    close(h_e, h_t, 1e-10)
    assert out_e.sorted_indices is None


# ---------------------------------------------------------------------------------------
# errors: PyTorch's exception types and messages

def same_error(fe, ft, match=True):
    with pytest.raises(Exception) as et:
        ft()
    with pytest.raises(Exception) as ee:
        fe()
    assert type(ee.value) is type(et.value), (ee.value, et.value)
    if match:
        assert str(ee.value).replace("ember.", "torch.") == str(et.value)


@pytest.mark.parametrize("case", [
    ("RNN", (3, 4), {"nonlinearity": "gelu"}), ("RNN", (3, 0), {}), ("GRU", (3, 4, 0), {}),
    ("LSTM", (3, 4), {"dropout": 2}), ("LSTM", (3, 4), {"dropout": True}),
    ("RNN", (3, 4), {"proj_size": 2}), ("GRU", (3, 4), {"proj_size": 2}),
    ("LSTM", (3, 4), {"proj_size": 4}), ("LSTM", (3, 4), {"proj_size": -1}),
    ("RNN", (3, 4.0), {}),
])
def test_constructor_errors(case):
    name, args, kwargs = case
    same_error(lambda: getattr(enn, name)(*args, **kwargs),
               lambda: getattr(torch.nn, name)(*args, **kwargs))


def _forward_cases():
    r = lambda *s: RNG.standard_normal(s)                               # noqa: E731
    return [
        ("RNN", (r(2, 2, 2, 3),)), ("LSTM", (r(2, 2, 2, 3),)), ("GRU", (r(2, 2, 2, 3),)),
        ("RNN", (r(5, 2, 5),)), ("LSTM", (r(5, 2, 5),)),
        ("RNN", (r(5, 2, 3), r(2, 3, 4))), ("GRU", (r(5, 2, 3), r(2, 4))),
        ("RNN", (r(5, 3), r(2, 1, 4))),
        ("LSTM", (r(5, 2, 3), (r(2, 2, 4), r(2, 3, 4)))),
        ("LSTM", (r(5, 2, 3), (r(2, 2, 4), r(2, 4)))),
        ("LSTM", (r(5, 3), (r(2, 4), r(2, 1, 4)))),
        ("LSTM", (r(5, 2, 3), (r(2, 3, 4), r(2, 2, 4)))),
        ("RNN", (r(0, 2, 3),)), ("GRU", (r(0, 3),)),
    ]


@pytest.mark.parametrize("i", range(len(_forward_cases())))
def test_forward_errors(i):
    name, args = _forward_cases()[i]
    em, tm = pair(name, 3, 4, 2, dtype=np.float64)

    def conv(a, lib):
        if isinstance(a, tuple):
            return tuple(conv(b, lib) for b in a)
        return lib.tensor(a)
    same_error(lambda: em(*conv(args, ember)), lambda: tm(*conv(args, torch)))


def test_dtype_errors():
    em, tm = pair("LSTM", 3, 4, dtype=np.float32)
    x = RNG.standard_normal((5, 2, 3))                # float64 into a float32 module
    same_error(lambda: em(ember.tensor(x)), lambda: tm(torch.tensor(x)))
    em64, _ = pair("RNN", 3, 4)
    with pytest.raises(RuntimeError):                   # a hidden state of another dtype
        em64(ember.tensor(x), ember.zeros(1, 2, 4, dtype=ember.float32))


@pytest.mark.parametrize("name", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cell_errors(name):
    em, tm = pair(name, 3, 4)
    lstm = name == "LSTMCell"

    def call(mod, lib, x, *h):
        hx = None if not h else (tuple(lib.tensor(a) for a in h) if lstm else lib.tensor(h[0]))
        return mod(lib.tensor(x), hx)
    r = RNG.standard_normal
    cases = [(r((2, 2, 3)),), (r((2, 5)),), (r((2, 3)), r((3, 4))), (r((2, 3)), r((2, 5))),
             (r((3,)), r((1, 4)))]
    for case in cases:
        if lstm and len(case) == 2:
            case = case + (case[1],)
        same_error(lambda: call(em, ember, *case), lambda: call(tm, torch, *case))
    if not lstm:
        same_error(lambda: call(em, ember, r((2, 3)), r((4,))),
                   lambda: call(tm, torch, r((2, 3)), r((4,))))


def test_rnn_cell_unknown_nonlinearity_raises_at_forward():
    em = enn.RNNCell(3, 4, nonlinearity="gelu")
    tm = torch.nn.RNNCell(3, 4, nonlinearity="gelu")
    same_error(lambda: em(ember.randn(2, 3)), lambda: tm(torch.randn(2, 3)))


def test_packing_errors():
    x = RNG.standard_normal((4, 3, 2))
    for lengths, kw in [([2, 3, 1], {}), ([3, 2, 0], {}), ([3, 2], {})]:
        same_error(lambda: ernn.pack_padded_sequence(ember.tensor(x), lengths, **kw),
                   lambda: trnn.pack_padded_sequence(torch.tensor(x), lengths, **kw))
    with pytest.raises(RuntimeError, match="exceeds"):         # torch reads past the end
        ernn.pack_padded_sequence(ember.tensor(x), [5, 2, 1])
    pe = ernn.pack_padded_sequence(ember.tensor(x), [2, 3, 1], enforce_sorted=False)
    pt = trnn.pack_padded_sequence(torch.tensor(x), [2, 3, 1], enforce_sorted=False)
    same_error(lambda: ernn.pad_packed_sequence(pe, total_length=2),
               lambda: trnn.pad_packed_sequence(pt, total_length=2))
    one = [np.ones(2), np.ones(3)]
    same_error(lambda: ernn.pad_sequence([ember.tensor(a) for a in one], padding_side="mid"),
               lambda: trnn.pad_sequence([torch.tensor(a) for a in one], padding_side="mid"))
    same_error(lambda: ernn.pad_sequence([]), lambda: trnn.pad_sequence([]))
    same_error(lambda: ernn.pack_sequence([ember.tensor(a) for a in one]),
               lambda: trnn.pack_sequence([torch.tensor(a) for a in one]))


def test_no_warning_for_default_dropout():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enn.LSTM(3, 4)
        enn.GRU(3, 4, 2, dropout=0.1)


def _node_names(node, seen=None):
    """The names of the graph nodes reachable from ``node`` (each node visited once)."""
    seen = set() if seen is None else seen
    seen.add(node)
    for m, _ in node.next_functions:
        if m is not None and m not in seen:
            _node_names(m, seen)
    return {n.name() for n in seen}


def _per_step(monkeypatch):
    """Make nn.LSTM take its per-step ops instead of the backend's fused `rnn` entry."""
    from ember.nn.modules import rnn as ernn_mod
    monkeypatch.setattr(ernn_mod, "_fusable", lambda *a: False)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kwargs", [{}, {"bidirectional": True, "num_layers": 2},
                                    {"batch_first": True, "num_layers": 2, "dropout": 0.0}])
def test_fused_lstm_matches_the_per_step_ops(dtype, kwargs, monkeypatch):
    """On the cpu, LSTM layers run through the fused `rnn` entry (one node per layer and
    direction); outputs, states and every gradient equal the per-step ops' path."""
    np_dtype, tol = DTYPES[dtype]
    m = enn.LSTM(3, 5, dtype=getattr(ember, dtype), **kwargs)
    x0 = RNG.standard_normal((4, 6, 3)).astype(np_dtype)
    states = [RNG.standard_normal(m._hidden_shapes(4 if kwargs.get("batch_first") else 6)[k])
              .astype(np_dtype) for k in range(2)]

    def run():
        x = ember.tensor(x0, requires_grad=True)
        h, c = (ember.tensor(s, requires_grad=True) for s in states)
        out, (hn, cn) = m(x, (h, c))
        names = _node_names(out.grad_fn)
        ((out * out).sum() + hn.sum() * 2 + (cn * cn).sum()).backward()
        grads = [t.grad.numpy().copy() for t in (x, h, c)] + \
            [p.grad.numpy().copy() for p in m.parameters()]
        m.zero_grad()
        return [out.detach().numpy(), hn.detach().numpy(), cn.detach().numpy()] + grads, names

    fused, names = run()
    assert "_LSTMLayerBackward" in names
    _per_step(monkeypatch)
    ops, names = run()
    assert "_LSTMLayerBackward" not in names
    for a, b in zip(fused, ops):
        np.testing.assert_allclose(a, b, rtol=tol * 10, atol=tol * 10)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_lstm_packed_steps_match_the_per_step_ops(dtype, monkeypatch):
    """Enough steps and rows run the per-step products in ember-cpu's packed kernel: several
    column panels, a last panel part-filled, a row tile part-filled (7 rows), both
    directions, threads sharing the panels; the same bits at 1 and 2 threads (but for the
    weight gradients BLAS computes)."""
    np_dtype, tol = DTYPES[dtype]
    m = enn.LSTM(3, 100, bidirectional=True, dtype=getattr(ember, dtype))
    x0 = RNG.standard_normal((5, 7, 3)).astype(np_dtype)

    def run():
        x = ember.tensor(x0, requires_grad=True)
        out, (hn, cn) = m(x)
        ((out * out).sum() + (cn * hn).sum()).backward()
        res = [out.detach().numpy(), hn.detach().numpy(), cn.detach().numpy(),
               x.grad.numpy()] + [p.grad.numpy().copy() for p in m.parameters()]
        m.zero_grad()
        return res

    saved = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        one = run()
        ember.set_num_threads(2)
        two = run()
        with ember.no_grad():           # no saved gates: the steps share scratch buffers
            inference = [t.numpy() for t in m(ember.tensor(x0))[1]]
    finally:
        ember.set_num_threads(saved)
    # the weight gradients are BLAS products over every step, which OpenBLAS splits among
    # its own threads: its Zen kernels (AMD EPYC) move their last bits with the split
    blas = {id(p) for p in (m.weight_hh_l0, m.weight_hh_l0_reverse)}
    for a, b, p in zip(one, two, [None] * 4 + list(m.parameters())):
        if id(p) in blas:
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
        else:
            assert a.tobytes() == b.tobytes()
    for a, b in zip(one[1:3], inference):
        assert a.tobytes() == b.tobytes()
    _per_step(monkeypatch)
    for a, b in zip(one, run()):
        np.testing.assert_allclose(a, b, rtol=tol * 10, atol=tol * 10)


def test_fused_lstm_declines_half_precision_and_inference_needs_no_saved_gates():
    """bfloat16 is not a dtype the cpu kernel takes: the per-step ops run; under no_grad
    the kernel keeps no gates (same results)."""
    m = enn.LSTM(3, 4)
    x = ember.randn(5, 2, 3)
    with ember.no_grad():
        out, _ = m(x)
    ref, _ = m(x)
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), rtol=1e-6, atol=1e-6)
    mb = enn.LSTM(3, 4).to(ember.bfloat16)
    mb.load_state_dict({k: v.to(ember.bfloat16) for k, v in m.state_dict().items()})
    outb, _ = mb(x.to(ember.bfloat16))
    np.testing.assert_allclose(outb.float().detach().numpy(), ref.detach().numpy(), atol=3e-2)


def test_fused_lstm_shows_in_a_profile():
    """The fused kernel runs outside the dispatcher; a profile still names it (forward once
    per layer and direction, backward likewise) instead of counting it as Python time."""
    m = enn.LSTM(3, 4, 2, bidirectional=True)
    x = ember.randn(5, 2, 3, requires_grad=True)
    with ember.profiler.profile() as prof:
        m(x)[0].sum().backward()
    counts = {e.key: e.count for e in prof.key_averages()}
    assert counts.get("ember::lstm_layer") == 4
    assert counts.get("ember::lstm_layer_backward") == 4


def test_lstm_under_autocast_matches_the_per_step_ops(monkeypatch):
    """Under autocast the input projection is bfloat16 while the weights stay float32: the
    fused entry declines the mixed dtypes and the per-step ops give autocast's result."""
    m = enn.LSTM(3, 4, 2)
    x = ember.randn(5, 2, 3)
    with ember.autocast("cpu"):
        out, (hn, cn) = m(x)
    _per_step(monkeypatch)
    with ember.autocast("cpu"):
        ref, (hr, cr) = m(x)
    assert out.dtype == ref.dtype
    for a, b in ((out, ref), (hn, hr), (cn, cr)):
        np.testing.assert_array_equal(a.float().detach().numpy(), b.float().detach().numpy())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_low_precision_input_under_autocast_is_accepted_as_torch(dtype):
    """Under autocast a float16/bfloat16 input meets float32 weights without the dtype
    error (autocast casts them), and the outputs come back in the autocast dtype."""
    for lib in (ember, torch):
        m = lib.nn.LSTM(3, 4, 2)
        x = lib.randn(5, 2, 3).to(getattr(lib, dtype))
        with lib.autocast("cpu", dtype=getattr(lib, dtype)):
            out, (h, c) = m(x)
        assert str(out.dtype).split(".")[-1] == str(h.dtype).split(".")[-1] == dtype
        with pytest.raises(ValueError, match="RNN input dtype"):
            m(x)


@pytest.mark.parametrize("name,kwargs", [("LSTM", {"num_layers": 2, "bidirectional": True}),
                                         ("LSTM", {"proj_size": 2}), ("GRU", {})])
def test_recurrent_layers_under_vmap_and_forward_ad(name, kwargs):
    """vmap over a recurrent layer equals the loop over samples (the fused LSTM kernel must
    never read a vmap wrapper's memory), and jvp through it equals finite differences."""
    from ember.func import jvp, vmap
    m = getattr(enn, name)(3, 4, **kwargs).double()
    x = ember.randn(5, 6, 2, 3, dtype=ember.float64)
    out = vmap(lambda xi: m(xi)[0])(x.transpose(0, 1))
    ref = ember.stack([m(x[:, i])[0] for i in range(6)])
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), atol=1e-12)
    xx, t = ember.randn(5, 2, 3, dtype=ember.float64), ember.randn(5, 2, 3, dtype=ember.float64)
    _, tangent = jvp(lambda a: m(a)[0], (xx,), (t,))
    fd = (m(xx + 1e-6 * t)[0] - m(xx - 1e-6 * t)[0]) / 2e-6
    np.testing.assert_allclose(tangent.detach().numpy(), fd.detach().numpy(), atol=1e-8)
