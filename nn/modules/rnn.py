"""Recurrent layers (``torch.nn.modules.rnn``): RNN, LSTM, GRU and their cells.

Parameter names, shapes, gate order (LSTM i, f, g, o; GRU r, z, n) and initialisation are
PyTorch's, so a torch state_dict loads as is.  Each layer and direction projects the whole
input with one matmul; the time loop then does one matmul with the hidden state per step.
Every input runs in the packed layout (time steps one after another, each holding the
sequences still running, longest first): a plain batch is the case where every step holds
all of them, so PackedSequence input needs no second code path."""
import math
import numbers
import warnings

from ember.core import _tensor as _T
from ember.core.grad_mode import is_grad_enabled
from ember.core.mode_keys import autocast_active
from ember.core.shapes import cat
from ember.core.tensor import Tensor
from ember.nn import init
from ember.nn._functional.dropout import dropout as _dropout
from ember.nn._functional.linear import linear
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter
from ember.nn.utils.rnn import PackedSequence

from ember.autograd.function import Function

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]


def apply_permutation(tensor, permutation, dim=1):
    """``tensor.index_select(dim, permutation)`` (PyTorch deprecates this spelling)."""
    import warnings
    warnings.warn("`apply_permutation` is deprecated, please use "
                  "`tensor.index_select(dim, permutation)` instead", FutureWarning, stacklevel=2)
    return tensor.index_select(dim, permutation)

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}
_NONLINEARITY_MODE = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}


# ---------------------------------------------------------------------------------------
# one time step of each kind of cell: (projected input, state tuple, weights) -> (output,
# new state).  ``gi`` already holds x W_ih^T and every bias that does not depend on h.

def _simple_step(activation):
    def step(gi, state, w_hh_t, b_hh, w_hr_t):
        h = activation(gi + _T.matmul(state[0], w_hh_t))
        return h, (h,)
    return step


def _lstm_step(gi, state, w_hh_t, b_hh, w_hr_t):
    h, c = state
    i, f, g, o = (gi + _T.matmul(h, w_hh_t)).chunk(4, 1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    if w_hr_t is not None:                    # LSTM with projections: h = W_hr h
        h = _T.matmul(h, w_hr_t)
    return h, (h, c)


def _gru_step(gi, state, w_hh_t, b_hh, w_hr_t):
    h = state[0]
    gh = _T.matmul(h, w_hh_t)
    if b_hh is not None:
        gh = gh + b_hh
    i_r, i_z, i_n = gi.chunk(3, 1)
    h_r, h_z, h_n = gh.chunk(3, 1)
    r = (i_r + h_r).sigmoid()
    z = (i_z + h_z).sigmoid()
    n = (i_n + r * h_n).tanh()
    h = n + z * (h - n)                       # (1 - z) * n + z * h
    return h, (h,)


_STEPS = {"RNN_TANH": _simple_step(Tensor.tanh), "RNN_RELU": _simple_step(Tensor.relu),
          "LSTM": _lstm_step, "GRU": _gru_step}


def _input_projection(mode, x, w_ih, b_ih, b_hh):
    """x W_ih^T plus the biases that do not depend on h: both, except for GRU, whose b_hn
    sits inside r * (W_hn h + b_hn)."""
    if b_ih is None:
        return linear(x, w_ih)
    return linear(x, w_ih, b_ih if mode == "GRU" else b_ih + b_hh)


class _Split(Function):
    """``x.split(sizes, dim)`` whose backward is one _Join of the pieces' gradients.  The
    core's split and cat each build a full-size gradient per piece (quadratic in the number
    of time steps), and cat's in-place copies cannot be differentiated twice."""

    @staticmethod
    def forward(ctx, x, sizes, dim):
        ctx.sizes, ctx.dim = sizes, dim
        return tuple(x.split(sizes, dim))

    @staticmethod
    def backward(ctx, *grads):
        return _Join.apply(ctx.dim, *grads), None, None

    @staticmethod
    def jvp(ctx, t, *_):                   # linear: the tangent splits as the input does
        return tuple(t.split(ctx.sizes, ctx.dim))


class _Join(Function):
    """``cat(tensors, dim)`` whose backward is one _Split of the gradient."""

    @staticmethod
    def forward(ctx, dim, *tensors):
        ctx.sizes, ctx.dim = [t.shape[dim] for t in tensors], dim
        return cat(tensors, dim)

    @staticmethod
    def backward(ctx, grad):
        return (None,) + _Split.apply(grad, ctx.sizes, ctx.dim)

    @staticmethod
    def jvp(ctx, _, *tangents):            # linear: the tangents join as the inputs do
        return cat(tangents, ctx.dim)


def _join(tensors, dim=0):
    return tensors[0] if len(tensors) == 1 else _Join.apply(dim, *tensors)


def _run_direction(step, gis, batch_sizes, state0, weights, reverse):
    """One layer in one direction over the per-step inputs ``gis``; returns the per-step
    outputs and the final state (rows in packed batch order)."""
    outs = [None] * len(gis)
    if not reverse:
        state, done = state0, []
        for t, gi in enumerate(gis):
            n, have = batch_sizes[t], state[0].shape[0]
            if n < have:                      # the shortest sequences ended: keep their state
                done.append(tuple(s.narrow(0, n, have - n) for s in state))
                state = tuple(s.narrow(0, 0, n) for s in state)
            outs[t], state = step(gi, state, *weights)
        if done:                              # rows 0.. are the longest sequences
            done.append(state)
            state = tuple(_join([d[k] for d in reversed(done)]) for k in range(len(state)))
        return outs, state
    state = None                              # backwards: sequences join as t decreases
    for t in range(len(gis) - 1, -1, -1):
        n = batch_sizes[t]
        if state is None:
            state = tuple(s if s.shape[0] == n else s.narrow(0, 0, n) for s in state0)
        elif n > state[0].shape[0]:
            have = state[0].shape[0]
            state = tuple(_join([s, s0.narrow(0, have, n - have)])
                          for s, s0 in zip(state, state0))
        outs[t], state = step(gis[t], state, *weights)
    return outs, state


class _NotFused(Exception):
    """The backend's `rnn` kernel declined this call (a dtype it does not take, or operands
    of mixed dtypes): the per-step ops run instead."""


def _profiled(name):
    """The fused kernel is one call outside the dispatcher: a profile shows it as ``name``.
    (ember.profiler loads at the first call, not with ember.nn.)"""
    from ember.profiler import record_function
    return record_function(name)


class _LSTMLayer(Function):
    """One LSTM layer in one direction through the backend's fused `rnn` entry (abi.h
    EMBER_RNN_LSTM): ``gi`` (T, B, 4H) is the input projection with both biases, the time
    loop runs in the kernel.  Its backward is the kernel's, except when the backward is
    itself recorded (create_graph): the per-step ops then recompute the layer so the
    gradients are differentiable again."""

    @staticmethod
    def forward(ctx, gi, h0, c0, w_hh, reverse):
        if not gi.dtype == h0.dtype == c0.dtype == w_hh.dtype:    # autocast's mixed types
            raise _NotFused
        T, B, G = gi.shape
        H = G // 4
        gi, h0, c0, w_hh = gi.contiguous(), h0.contiguous(), c0.contiguous(), w_hh.contiguous()
        opts = {"dtype": gi.dtype, "device": gi.device}
        y, hn, cn = _T.empty((T, B, H), **opts), _T.empty((B, H), **opts), _T.empty((B, H), **opts)
        keep = any(ctx.needs_input_grad)
        gates = _T.empty((T, B, G), **opts) if keep else None
        cs = _T.empty((T, B, H), **opts) if keep else None
        with _profiled("ember::lstm_layer"):
            fused = _T._fused_rnn(_T.RNN_LSTM, [y, hn, cn, gates, cs, gi, h0, c0, w_hh],
                                  reverse)
        if not fused:
            raise _NotFused
        ctx.reverse = reverse
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(gi, h0, c0, w_hh, gates, cs, y)
        return y, hn, cn

    @staticmethod
    def backward(ctx, dy, dhn, dcn):
        gi, h0, c0, w_hh, gates, cs, y = ctx.saved_tensors
        zeros = [_T.empty_like(t) for t in (gi, h0, c0, w_hh)]     # the kernel writes all
        if is_grad_enabled():
            return _lstm_layer_double_backward(ctx, (gi, h0, c0, w_hh), (dy, dhn, dcn)) \
                + (None,)
        grads = [g if g is None else g.contiguous() for g in (dy, dhn, dcn)]
        with _profiled("ember::lstm_layer_backward"):
            _T._fused_rnn(_T.RNN_LSTM_BACKWARD, zeros + grads + [gates, cs, y, h0, c0, w_hh],
                          ctx.reverse)
        return tuple(g if need else None for g, need in zip(zeros, ctx.needs_input_grad)) \
            + (None,)


def _lstm_layer_ops(gi, h0, c0, w_hh, reverse):
    """The layer of ``_LSTMLayer`` in per-step ops: (y, hn, cn)."""
    steps = gi.shape[0]
    outs, (hn, cn) = _run_direction(_lstm_step, list(gi.unbind(0)), [gi.shape[1]] * steps,
                                    (h0, c0), (w_hh.t(), None, None), reverse)
    return _join([o.unsqueeze(0) for o in outs]), hn, cn


def _lstm_layer_double_backward(ctx, inputs, grads):
    """Gradients of the layer's inputs as differentiable functions of them (create_graph)."""
    from ember.core.gradients import grad
    wanted = [t for t, need in zip(inputs, ctx.needs_input_grad) if need]
    outs = _lstm_layer_ops(*inputs, ctx.reverse)
    pairs = [(o, g) for o, g in zip(outs, grads) if g is not None]
    got = iter(grad([o for o, _ in pairs], wanted, [g for _, g in pairs], create_graph=True,
                    allow_unused=True))
    res = []
    for t, need in zip(inputs, ctx.needs_input_grad):
        g = next(got) if need else None
        res.append(_T.zeros_like(t) if need and g is None else g)
    return tuple(res)


def _fusable(module, x, batch_sizes, hx):
    """Whether the layers can run through the backend's fused `rnn` entry: an LSTM without
    projections over sequences of one length, on a backend that has the entry, with plain
    operands (not under vmap or forward AD)."""
    return (module.mode == "LSTM" and module.proj_size == 0 and x.numel() > 0
            and all(n == batch_sizes[0] for n in batch_sizes)
            and _T._has_fused_rnn(x, *hx, *module._flat_weights))


def _run_fused(module, x, steps, hx):
    """``_run_layers`` for an LSTM through ``_LSTMLayer``: x is (steps * B, input_size)."""
    directions = 2 if module.bidirectional else 1
    batch = x.shape[0] // steps
    finals = ([], [])
    layer_in = x
    for layer in range(module.num_layers):
        outs = []
        for d in range(directions):
            w_ih, w_hh, b_ih, b_hh, _ = module._layer_weights(layer, d)
            gi = _input_projection("LSTM", layer_in, w_ih, b_ih, b_hh)
            k = layer * directions + d
            y, hn, cn = _LSTMLayer.apply(gi.view(steps, batch, gi.shape[-1]), hx[0][k],
                                         hx[1][k], w_hh, d == 1)
            outs.append(y.view(steps * batch, y.shape[-1]))
            finals[0].append(hn)
            finals[1].append(cn)
        layer_in = _join(outs, 1)
        if module.dropout and module.training and layer < module.num_layers - 1:
            layer_in = _dropout(layer_in, module.dropout, True)
    return layer_in, tuple(_join([s.unsqueeze(0) for s in f]) for f in finals)


def _run_layers(module, x, batch_sizes, hx):
    """Every layer and direction over packed data ``x`` (N, input_size); ``hx`` is the tuple
    of initial states, each (num_layers * num_directions, B, *).  Returns the last layer's
    packed output and the tuple of final states."""
    if _fusable(module, x, batch_sizes, hx):
        try:
            return _run_fused(module, x, len(batch_sizes), hx)
        except _NotFused:
            pass
    step = _STEPS[module.mode]
    directions = 2 if module.bidirectional else 1
    initial = [h.unbind(0) for h in hx]
    finals = [[] for _ in hx]
    layer_in = x
    for layer in range(module.num_layers):
        outs = []
        for d in range(directions):
            w_ih, w_hh, b_ih, b_hh, w_hr = module._layer_weights(layer, d)
            gi = _input_projection(module.mode, layer_in, w_ih, b_ih, b_hh)
            gis = _Split.apply(gi, batch_sizes, 0)
            k = layer * directions + d
            weights = (w_hh.t(), b_hh, None if w_hr is None else w_hr.t())
            o, state = _run_direction(step, gis, batch_sizes, tuple(h[k] for h in initial),
                                      weights, reverse=d == 1)
            outs.append(_join(o))
            for final, s in zip(finals, state):
                final.append(s)
        layer_in = _join(outs, 1)
        if module.dropout and module.training and layer < module.num_layers - 1:
            layer_in = _dropout(layer_in, module.dropout, True)
    return layer_in, tuple(_join([s.unsqueeze(0) for s in f]) for f in finals)


def _new_param(shape, device, dtype):
    return Parameter(_T.empty(shape, device=device, dtype=dtype))


def _reset_uniform(module):
    """U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) for every weight and bias."""
    stdv = 1.0 / math.sqrt(module.hidden_size) if module.hidden_size > 0 else 0
    for weight in module.parameters():
        init.uniform_(weight, -stdv, stdv)


def _check_dtype(data, weight, what="input"):
    if data.dtype != weight.dtype and not autocast_active():   # autocast casts them later
        if what == "input":
            raise ValueError(f"RNN input dtype ({data.dtype}) does not match weight dtype "
                             f"({weight.dtype}). Convert input: input.to({weight.dtype}), or "
                             f"convert model: model.to({data.dtype})")
        raise RuntimeError(f"RNN {what} dtype ({data.dtype}) does not match weight dtype "
                           f"({weight.dtype})")


# ---------------------------------------------------------------------------------------
# multi-layer recurrent modules

class RNNBase(Module):
    """The shared machinery of RNN, LSTM and GRU: parameters ``weight_ih_l{k}``,
    ``weight_hh_l{k}``, ``bias_ih_l{k}``, ``bias_hh_l{k}`` (``weight_hr_l{k}`` with
    projections; ``_reverse`` for the backward direction), shape checks and the layer loop."""

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first",
                     "dropout", "bidirectional", "proj_size"]

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        super().__init__()
        if (isinstance(dropout, bool) or not isinstance(dropout, numbers.Number)
                or not 0 <= dropout <= 1):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn(f"dropout option adds dropout after all but last recurrent layer, "
                          f"so non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        for name, value in (("hidden_size", hidden_size), ("num_layers", num_layers)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError(f"Unrecognized RNN mode: {mode}")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        directions = 2 if bidirectional else 1
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else real_hidden * directions
            for d in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if d == 1 else "")
                shapes = [("weight_ih", (gate_size, layer_input)),
                          ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                names = [name + suffix for name, _ in shapes]
                for name, (_, shape) in zip(names, shapes):
                    setattr(self, name, _new_param(shape, device, dtype))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self):
        """U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) for every parameter."""
        _reset_uniform(self)

    def flatten_parameters(self):
        """Accepted for compatibility: ember keeps no fused weight buffer to compact."""

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def _layer_weights(self, layer, direction):
        """(weight_ih, weight_hh, bias_ih, bias_hh, weight_hr) of one layer and direction
        (None for what the module does not have)."""
        suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
        names = ["weight_ih", "weight_hh"] + (["bias_ih", "bias_hh"] if self.bias else [])
        weights = {name: getattr(self, name + suffix) for name in names}
        if self.proj_size > 0:
            weights["weight_hr"] = getattr(self, "weight_hr" + suffix)
        return tuple(weights.get(name) for name in ("weight_ih", "weight_hh", "bias_ih",
                                                    "bias_hh", "weight_hr"))

    def _hidden_shapes(self, batch):
        layers = self.num_layers * (2 if self.bidirectional else 1)
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        shapes = [(layers, batch, real_hidden)]
        if self.mode == "LSTM":
            shapes.append((layers, batch, self.hidden_size))
        return shapes

    def _initial_state(self, hx, batch, batched, like, packed, sorted_indices):
        """The initial states as a tuple of (num_layers * num_directions, B, *) tensors
        (zeros like ``like`` when ``hx`` is None), checked and, for packed input, put in
        packed batch order."""
        shapes = self._hidden_shapes(batch)
        lstm = self.mode == "LSTM"
        if hx is None:
            return tuple(_T.zeros(s, dtype=like.dtype, device=like.device) for s in shapes)
        if lstm:
            if not (isinstance(hx, (tuple, list)) and len(hx) == 2):
                raise RuntimeError("LSTM: expected hx to be a tuple (h_0, c_0) of two tensors")
            hs = tuple(hx)
        else:
            if not isinstance(hx, Tensor):
                raise TypeError(f"{type(self).__name__}: expected hx to be a Tensor, got "
                                f"{type(hx).__name__}")
            hs = (hx,)
        if not packed:
            want = 3 if batched else 2
            if any(h.dim() != want for h in hs):
                kind = "batched 3-D" if batched else "unbatched 2-D"
                if lstm:
                    got = ", ".join(f"{h.dim()}-D" for h in hs)
                    raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D "
                                       f"but got ({got}) tensors")
                raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got "
                                   f"{hs[0].dim()}-D tensor")
            if not batched:
                hs = tuple(h.unsqueeze(1) for h in hs)
        elif sorted_indices is not None:
            hs = tuple(h.index_select(1, sorted_indices) for h in hs)
        for k, (h, shape) in enumerate(zip(hs, shapes)):
            if tuple(h.shape) != shape:
                which = f"hidden[{k}]" if lstm else "hidden"
                raise RuntimeError(f"Expected {which} size {shape}, got {list(h.shape)}")
            _check_dtype(h, self.weight_ih_l0, "hidden")
        return hs

    def forward(self, input, hx=None):
        name = type(self).__name__
        packed = isinstance(input, PackedSequence)
        sorted_indices = unsorted_indices = None
        if packed:
            data, batch_sizes_t, sorted_indices, unsorted_indices = input
            batch_sizes = batch_sizes_t.tolist()
            batch, batched = batch_sizes[0], True
        else:
            if input.dim() not in (2, 3):
                tail = "tensor instead" if name == "RNN" else "instead"
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D "
                                 f"{tail}")
            batched = input.dim() == 3
            batch_dim = 0 if self.batch_first else 1
            if not batched:
                input = input.unsqueeze(batch_dim)
            if self.batch_first:
                input = input.transpose(0, 1)
            steps, batch = input.shape[0], input.shape[1]
            data = input
        _check_dtype(data, self.weight_ih_l0)
        if data.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {data.shape[-1]}")
        hs = self._initial_state(hx, batch, batched, data, packed, sorted_indices)
        if not packed:
            if steps == 0:
                raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
            data = input.reshape(steps * batch, self.input_size)
            batch_sizes = [batch] * steps
        out, finals = _run_layers(self, data, batch_sizes, hs)
        if packed:
            output = PackedSequence(out, batch_sizes_t, sorted_indices, unsorted_indices)
            if unsorted_indices is not None:
                finals = tuple(f.index_select(1, unsorted_indices) for f in finals)
        else:
            output = out.reshape(steps, batch, out.shape[-1])
            if self.batch_first:
                output = output.transpose(0, 1)
            if not batched:
                output = output.squeeze(batch_dim)
                finals = tuple(f.squeeze(1) for f in finals)
        return output, (finals if self.mode == "LSTM" else finals[0])

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu).

    ``forward(input, hx=None)`` takes input (L, N, H_in) ((N, L, H_in) with
    ``batch_first``), (L, H_in) unbatched, or a PackedSequence; returns (output, h_n)."""

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, device=None,
                 dtype=None, *, proj_size=None):
        if proj_size is not None:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if nonlinearity not in _NONLINEARITY_MODE:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             f"'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__(_NONLINEARITY_MODE[nonlinearity], input_size, hidden_size,
                         num_layers, bias, batch_first, dropout, bidirectional, 0, device,
                         dtype)


class LSTM(RNNBase):
    """Long short-term memory, gates i, f, g, o; with ``proj_size`` > 0 the hidden state
    is projected by ``weight_hr_l{k}`` (proj_size, hidden_size).

    ``forward(input, hx=None)`` with hx = (h_0, c_0); returns (output, (h_n, c_n))."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, proj_size, device, dtype)


class GRU(RNNBase):
    """Gated recurrent unit, gates r, z, n:
    n = tanh(W_in x + b_in + r * (W_hn h + b_hn)), h' = (1 - z) * n + z * h.

    ``forward(input, hx=None)``; returns (output, h_n)."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None, *,
                 proj_size=None):
        if proj_size is not None:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, 0, device, dtype)


# ---------------------------------------------------------------------------------------
# single-step cells

class RNNCellBase(Module):
    """Parameters ``weight_ih`` (chunks * hidden_size, input_size), ``weight_hh``
    (chunks * hidden_size, hidden_size), ``bias_ih`` and ``bias_hh``, and one step."""

    __constants__ = ["input_size", "hidden_size", "bias"]
    _mode = None

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = _new_param((num_chunks * hidden_size, input_size), device, dtype)
        self.weight_hh = _new_param((num_chunks * hidden_size, hidden_size), device, dtype)
        if bias:
            self.bias_ih = _new_param((num_chunks * hidden_size,), device, dtype)
            self.bias_hh = _new_param((num_chunks * hidden_size,), device, dtype)
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        """U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) for every parameter."""
        _reset_uniform(self)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        if nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity}"
        return s

    def _step(self, mode, input, hx, n_states):
        """One step on (N, H_in) or unbatched (H_in) input; ``hx`` a tensor, a tuple of
        ``n_states`` tensors or None.  Returns the state tuple."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D "
                             f"instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        batch = input.shape[0]
        if hx is None:
            hs = tuple(_T.zeros((batch, self.hidden_size), dtype=input.dtype,
                                device=input.device) for _ in range(n_states))
        else:
            hs = tuple(hx) if n_states > 1 else (hx,)
            if not batched:
                hs = tuple(h.unsqueeze(0) for h in hs)
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} "
                               f"expected {self.input_size}")
        for k, h in enumerate(hs):
            if h.shape[0] != batch:
                raise RuntimeError(f"Input batch size {batch} doesn't match hidden{k} batch "
                                   f"size {h.shape[0]}")
            if h.dim() != 2 or h.shape[1] != self.hidden_size:
                got = h.shape[1] if h.dim() > 1 else list(h.shape)
                raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got {got}, "
                                   f"expected {self.hidden_size}")
        gi = _input_projection(mode, input, self.weight_ih, self.bias_ih, self.bias_hh)
        _, state = _STEPS[mode](gi, hs, self.weight_hh.t(), self.bias_hh, None)
        return state if batched else tuple(s.squeeze(0) for s in state)


class RNNCell(RNNCellBase):
    """One Elman RNN step: h' = tanh(W_ih x + b_ih + W_hh h + b_hh) (or relu)."""

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if self.nonlinearity not in _NONLINEARITY_MODE:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return self._step(_NONLINEARITY_MODE[self.nonlinearity], input, hx, 1)[0]


class LSTMCell(RNNCellBase):
    """One LSTM step; ``forward(input, hx=None)`` with hx = (h, c) returns (h', c')."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        return self._step("LSTM", input, hx, 2)


class GRUCell(RNNCellBase):
    """One GRU step; ``forward(input, hx=None)`` returns h'."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        return self._step("GRU", input, hx, 1)[0]
