"""Random ops inside vmap, by the vmap's ``randomness``: 'error' refuses them (PyTorch's
message), 'same' draws once for the whole batch, 'different' once per sample.

The VmapMode key reaches the random fills (uniform_, normal_: everything random is drawn
through them) and multinomial; the factories (rand, randn, rand_like, randn_like, and so
randint, normal, bernoulli, dropout) ask here what to draw.  A level's draw runs under the
thread state it started with, so an enclosing vmap decides for its own dim (nested
'different' levels get a draw per sample of each)."""
from ember.core import _tensor as _T
from ember.core._dispatch import DispatchKey
from ember.core.mode_keys import redispatch_below
from ember.func import _levels
from ember.func._batching import MODE_RULES
from ember.func._batching._util import materialize, unwrap, wrap

__all__ = ["install"]

_ERROR = ("vmap: called random operation while in randomness error mode. Please either use "
          "the 'same' or 'different' randomness flags on vmap or perform the randomness "
          "operation out of vmap")
_INPLACE = ("vmap: Cannot ask for different inplace randomness on an unbatched tensor. This "
            "will appear like same randomness. If this is necessary for your usage, please "
            "file an issue with functorch.")


class _RandomFill:
    """VmapMode kernel of uniform_ / normal_ (in place)."""

    __slots__ = ("op",)

    def __init__(self, op):
        self.op = op

    def __call__(self, t, p0, p1, generator=None):
        v = _levels.current()
        if v is None:
            return redispatch_below(self.op, DispatchKey.VmapMode, (t, p0, p1),
                                    {"generator": generator})
        if v.randomness == "error":
            raise RuntimeError(_ERROR)
        x, batched = unwrap(t, v.level)
        with _levels.switch(v):
            if v.randomness == "different":
                if not batched:
                    raise RuntimeError(_INPLACE)
                self.op.entry(x, p0, p1, generator=generator)
            elif batched:                       # one draw, the same in every sample
                sample = _T.empty(tuple(t.shape), dtype=t.dtype, device=t.device)
                self.op.entry(sample, p0, p1, generator=generator)
                x.copy_(sample)
            else:
                self.op.entry(t, p0, p1, generator=generator)
        return t


class _Multinomial:
    """VmapMode kernel of multinomial: rows of probabilities, per sample."""

    __slots__ = ("op",)

    def __init__(self, op):
        self.op = op

    def __call__(self, p, num_samples, replacement=False, generator=None, out=None):
        v = _levels.current()
        if v is None:
            return redispatch_below(self.op, DispatchKey.VmapMode,
                                    (p, num_samples, replacement),
                                    {"generator": generator, "out": out})
        if v.randomness == "error":
            raise RuntimeError(_ERROR)
        x, batched = unwrap(p, v.level)
        with _levels.switch(v):
            if v.randomness == "same" and not batched:
                return self.op.entry(p, num_samples, replacement, generator=generator)
            if v.randomness == "same":
                raise RuntimeError("vmap: multinomial with randomness='same' on batched "
                                   "probabilities is not supported")
            rows = materialize(x, batched, v.size)
            r = self.op.entry(rows.reshape(-1, rows.shape[-1]), num_samples, replacement,
                              generator=generator)
            r = wrap(r.reshape(tuple(rows.shape[:-1]) + (num_samples,)), v.level)
        if out is not None:
            out.copy_(r)
            return out
        return r


def _random_factory(fill, draw, generator):
    """What rand/randn/rand_like/randn_like return inside vmap: ``draw(lead)`` draws the
    factory's tensor with a leading dim of ``lead`` (None: without)."""
    v = _levels.current()
    if v.randomness == "error":
        raise RuntimeError(_ERROR)
    with _levels.switch(v):
        if v.randomness == "same":
            return draw(None)
        r = draw(v.size)
    return wrap(r, v.level)


for _name in ("uniform_", "normal_"):
    MODE_RULES[_name] = _RandomFill
MODE_RULES["multinomial"] = _Multinomial


def install():
    _T._set_vmap_random(_random_factory)
