"""torch.lstm / gru / rnn_tanh / rnn_relu and their ``*_cell`` forms: ATen's functional
recurrent layers over a flat parameter list (w_ih, w_hh[, b_ih, b_hh][, w_hr] per layer and
direction), composed of ember ops so they differentiate.  Loaded on first use."""
import ember
from ember.nn import functional as F

__all__ = ["gru", "gru_cell", "lstm", "lstm_cell", "rnn_relu", "rnn_relu_cell", "rnn_tanh",
           "rnn_tanh_cell"]


def _linear(x, w, b):
    return F.linear(x, w, b)


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)."""
    return ember.tanh(_linear(input, w_ih, b_ih) + _linear(hx, w_hh, b_hh))


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """relu(x W_ih^T + b_ih + h W_hh^T + b_hh)."""
    return ember.relu(_linear(input, w_ih, b_ih) + _linear(hx, w_hh, b_hh))


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None, w_hr=None):
    """(h', c') of one LSTM step; ``hx`` is (h, c)."""
    h, c = hx
    gates = _linear(input, w_ih, b_ih) + _linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, -1)
    c = ember.sigmoid(f) * c + ember.sigmoid(i) * ember.tanh(g)
    h = ember.sigmoid(o) * ember.tanh(c)
    if w_hr is not None:
        h = _linear(h, w_hr, None)
    return h, c


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """h' of one GRU step: n + z (h - n) with r, z the gates and n = tanh(x_n + r h_n)."""
    gi = _linear(input, w_ih, b_ih)
    gh = _linear(hx, w_hh, b_hh)
    i_r, i_z, i_n = gi.chunk(3, -1)
    h_r, h_z, h_n = gh.chunk(3, -1)
    r = ember.sigmoid(i_r + h_r)
    z = ember.sigmoid(i_z + h_z)
    n = ember.tanh(i_n + r * h_n)
    return n + z * (hx - n)


def _unpack(params, has_biases, count):
    """The parameters of each (layer, direction), in ATen's flat order."""
    per = len(params) // count
    groups = [params[k * per:(k + 1) * per] for k in range(count)]
    out = []
    for g in groups:
        w_ih, w_hh = g[0], g[1]
        b_ih, b_hh = (g[2], g[3]) if has_biases else (None, None)
        w_hr = g[-1] if per in (3, 5) else None
        out.append((w_ih, w_hh, b_ih, b_hh, w_hr))
    return out


def _run(kind, input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
         batch_first):
    if not isinstance(params, (list, tuple)):
        raise NotImplementedError(f"ember: torch.{kind} over packed sequences (data, "
                                  f"batch_sizes) is not implemented; pass padded input")
    dirs = 2 if bidirectional else 1
    weights = _unpack(list(params), has_biases, num_layers * dirs)
    x = input.transpose(0, 1) if batch_first else input          # (T, B, F)
    unbatched = x.dim() == 2
    if unbatched:
        x = x.unsqueeze(1)
    lstm = kind == "lstm"
    h0 = hx[0] if lstm else hx
    c0 = hx[1] if lstm else None
    if unbatched:
        h0 = h0.unsqueeze(1)
        c0 = c0.unsqueeze(1) if c0 is not None else None
    cell = {"lstm": lstm_cell, "gru": gru_cell, "rnn_tanh": rnn_tanh_cell,
            "rnn_relu": rnn_relu_cell}[kind]
    final_h, final_c = [], []
    for layer in range(num_layers):
        outputs = []
        for d in range(dirs):
            k = layer * dirs + d
            w_ih, w_hh, b_ih, b_hh, w_hr = weights[k]
            h = h0[k]
            c = c0[k] if lstm else None
            steps = range(x.shape[0] - 1, -1, -1) if d else range(x.shape[0])
            seq = [None] * x.shape[0]
            for t in steps:
                if lstm:
                    h, c = cell(x[t], (h, c), w_ih, w_hh, b_ih, b_hh, w_hr)
                else:
                    h = cell(x[t], h, w_ih, w_hh, b_ih, b_hh)
                seq[t] = h
            outputs.append(ember.stack(seq))
            final_h.append(h)
            final_c.append(c)
        x = outputs[0] if dirs == 1 else ember.cat(outputs, -1)
        if dropout and train and layer < num_layers - 1:
            x = F.dropout(x, dropout, True)
    out = x.squeeze(1) if unbatched else x
    out = out.transpose(0, 1) if batch_first and not unbatched else out
    h_n = ember.stack(final_h)
    h_n = h_n.squeeze(1) if unbatched else h_n
    if lstm:
        c_n = ember.stack(final_c)
        return out, h_n, c_n.squeeze(1) if unbatched else c_n
    return out, h_n


def lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
         batch_first):
    """(output, h_n, c_n) of a multi-layer LSTM; ``hx`` is (h_0, c_0)."""
    return _run("lstm", input, hx, params, has_biases, num_layers, dropout, train,
                bidirectional, batch_first)


def gru(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
        batch_first):
    """(output, h_n) of a multi-layer GRU."""
    return _run("gru", input, hx, params, has_biases, num_layers, dropout, train,
                bidirectional, batch_first)


def rnn_tanh(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
             batch_first):
    """(output, h_n) of a multi-layer tanh RNN."""
    return _run("rnn_tanh", input, hx, params, has_biases, num_layers, dropout, train,
                bidirectional, batch_first)


def rnn_relu(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
             batch_first):
    """(output, h_n) of a multi-layer ReLU RNN."""
    return _run("rnn_relu", input, hx, params, has_biases, num_layers, dropout, train,
                bidirectional, batch_first)
