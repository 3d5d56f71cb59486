"""NumPy's argument names PyTorch's parser accepts: ``axis`` for ``dim`` and ``keepdims``
for ``keepdim`` (``x.sum(axis=1)``, ``torch.mean(x, axis=0, keepdims=True)``)."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

CASES = [
    "{t}.sum(axis=1)", "{t}.sum(axis=(0, 1), keepdims=True)", "{m}.sum({t}, axis=1)",
    "{t}.mean(axis=0, keepdims=True)", "{m}.mean({t}, axis=-1)", "{t}.prod(axis=1)",
    "{t}.amax(axis=1)", "{t}.amin(axis=0, keepdims=True)", "{t}.argmax(axis=1)",
    "{m}.argmin({t}, axis=0, keepdims=True)", "{t}.max(axis=1).values",
    "{m}.max({t}, axis=0, keepdims=True).indices", "{t}.min(axis=1).values",
    "{t}.std(axis=1)", "{m}.var({t}, axis=0, keepdims=True)", "{m}.std_mean({t}, axis=1)[0]",
    "{m}.var_mean({t}, axis=0, keepdims=True)[1]", "{t}.all(axis=1)", "{m}.any({t}, axis=0)",
    "{m}.cat([{t}, {t}], axis=1)", "{m}.concatenate([{t}, {t}], axis=0)",
    "{m}.stack([{t}, {t}], axis=2)", "{t}.sort(axis=0).values", "{t}.argsort(axis=0)",
    "{t}.median(axis=1).values", "{m}.nansum({t}, axis=1)", "{t}.nanmean(axis=0)",
    "{t}.count_nonzero(axis=0)", "{t}[:1].squeeze(axis=0)", "{m}.squeeze({t}[:1], axis=0)",
    "{m}.logsumexp({t}, axis=1)", "{t}.logsumexp(1, keepdims=True)", "{m}.softmax({t}, axis=1)",
    "{t}.log_softmax(axis=0)", "{t}.softmax(axis=-1)", "{m}.cumsum({t}, axis=1)",
    "{t}.cumprod(axis=0)", "{t}.logcumsumexp(axis=1)", "{m}.special.logsumexp({t}, axis=0)",
    "{m}.special.softmax({t}, axis=1)", "{m}.special.log_softmax({t}, axis=1)",
    # the axis= and keepdims= the functions beyond the reductions take too
    "{t}.topk(2, axis=0).values", "{m}.topk({t}, 1, axis=1).indices",
    "{t}.kthvalue(2, axis=1, keepdims=True).values", "{m}.mode({t}, axis=0).values",
    "{t}.cummax(axis=1).values", "{m}.cummin({t}, axis=0).indices", "{t}.diff(axis=1)",
    "{m}.stack({t}.chunk(2, axis=1)[:1])", "{m}.chunk({t}, 3, axis=0)[1]",
    "{t}.unbind(axis=1)[2]", "{m}.unbind({t}, axis=0)[1]", "{t}.unsqueeze(axis=1)",
    "{m}.unsqueeze({t}, axis=0)", "{t}.select(axis=1, index=2)", "{m}.select({t}, axis=0, index=1)",
    "{m}.tensor_split({t}, 2, axis=1)[1]", "{t}.gather(axis=1, index={m}.tensor([[0], [3], [1]]))",
    "{m}.take_along_dim({t}, {m}.tensor([[0], [3], [1]]), axis=1)",
    "{t}.nanmedian(axis=1, keepdims=True).values", "{m}.quantile({t}, 0.25, axis=1)",
    "{t}.nanquantile(0.5, axis=0, keepdims=True)", "{m}.aminmax({t}, axis=1).max",
    "{m}.aminmax({t}, axis=0, keepdims=True).min", "{t}.repeat_interleave(2, axis=1)",
    "{m}.cross({t}[:, :3], {t}[:, 1:], axis=1)", "{m}.trapezoid({t}, axis=0)",
    "{m}.cumulative_trapezoid({t}, axis=1)",
]


@pytest.mark.parametrize("case", CASES)
def test_numpy_names_match_pytorch(case):
    data = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    env = {"ember": ember, "torch": torch, "data": data}
    got = eval(case.format(t="ember.tensor(data)", m="ember"), env)
    want = eval(case.format(t="torch.tensor(data)", m="torch"), env)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), want.double().numpy(),
                               rtol=1e-5, atol=1e-5)


def test_numpy_names_flow_through_autograd():
    x = ember.ones(2, 3, requires_grad=True)
    x.sum(axis=1, keepdims=True).sum().backward()
    assert x.grad.tolist() == [[1.0] * 3] * 2


def test_dim_given_twice_is_a_type_error():
    x = ember.ones(2, 3)
    with pytest.raises(TypeError, match=r"sum\(\) got multiple values for argument 'dim'"):
        x.sum(1, axis=1)
    with pytest.raises(TypeError, match="multiple values for argument 'dim'"):
        ember.cat([x, x], 1, axis=0)


@pytest.mark.parametrize("call", ["softmax({t})", "cumsum({t})", "logsumexp({t})",
                                  "softmax({t}, 1, axis=1)", "cummax({t})", "unsqueeze({t})",
                                  "topk({t}, 1, 0, axis=1)", "gather({t}, 1)"])
def test_a_missing_or_doubled_dim_is_a_type_error(call):
    for m in (ember, torch):
        with pytest.raises(TypeError):
            eval(f"m.{call}".format(t="m.ones(2, 3)"), {"m": m})
