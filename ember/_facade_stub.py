"""Writes ``ember/__init__.pyi``, the type stub of the façade, so that IDEs and type checkers
see every public name of ``ember`` with its signature: the functions (Cython ones included,
which a checker cannot read otherwise) with PyTorch's argument names, typed ``Any``, and
``Tensor`` as the return of the tensor-valued ones; the classes from the modules that define
them; dtypes, memory formats and constants typed; the submodules; a module ``__getattr__``
for anything else.  Tensor's own stub is ``core/tensor.pyi`` (core/tensor_stub.py), whose
parameter rendering this reuses.

    python -m ember._facade_stub            # rewrite ember/__init__.pyi
    python -m ember._facade_stub --check    # exit 1 if it is stale

tests/test_facade_stub.py fails when the stub is stale."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
STUB = os.path.join(HERE, "__init__.pyi")

# functions that return one tensor (PyTorch's signatures) beyond the op table's, the ops'
# schemas and Tensor's tensor-valued methods: factories, sampling, joins, products, the
# elementwise composites and aliases, the *_copy/*_scatter forms, the nn-style functions
_TENSOR_VALUED = frozenset("""
    arange as_tensor asarray atleast_1d atleast_2d atleast_3d
    block_diag cartesian_prod cdist column_stack combinations complex
    concat concatenate corrcoef cov cumulative_trapezoid diagflat dstack einsum
    empty empty_like empty_strided eye from_dlpack from_numpy frombuffer full full_like
    hstack kron linspace logspace normal ones ones_like poisson polar rand
    rand_like randint randint_like randn randn_like randperm row_stack scalar_tensor stack
    tensor tensordot tril_indices triu_indices vander vstack zeros zeros_like
    acosh arccos arccosh arcsin arcsinh arctan arctan2 arctanh asinh atanh angle copysign
    deg2rad divide fix float_power frac gcd greater greater_equal heaviside hypot i0 igamma
    igammac imag isclose isfinite isin isinf isnan isneginf isposinf isreal lcm ldexp less
    less_equal logaddexp logaddexp2 logcumsumexp logical_not logit multiply mvlgamma
    negative nextafter not_equal polygamma positive rad2deg real resolve_conj resolve_neg
    rsub sgn signbit sinc subtract true_divide xlogy conj conj_physical fill
    adjoint alias_copy argwhere as_strided_copy as_strided_scatter bincount bucketize
    chain_matmul count_nonzero det detach_copy diagonal_copy diagonal_scatter diff dist
    empty_permuted expand_copy fliplr flipud ger histc index_reduce inner inverse logdet
    matrix_exp matrix_power moveaxis msort nanmean nanquantile nansum narrow_copy
    nonzero_static permute_copy pinverse quantile range ravel renorm select_copy
    select_scatter slice_copy slice_scatter squeeze_copy t_copy take_along_dim
    transpose_copy trapezoid trapz unsqueeze_copy vdot vector_norm view_as_complex
    view_as_complex_copy view_as_real view_as_real_copy view_copy cholesky cholesky_inverse
    cholesky_solve lu_solve orgqr ormqr binomial bartlett_window blackman_window
    hamming_window hann_window kaiser_window stft istft
    adaptive_avg_pool1d affine_grid_generator alpha_dropout avg_pool1d batch_norm bilinear
    binary_cross_entropy_with_logits celu channel_shuffle constant_pad_nd conv1d conv2d
    conv3d conv_transpose1d conv_transpose2d conv_transpose3d cosine_embedding_loss
    cosine_similarity ctc_loss dropout embedding feature_alpha_dropout feature_dropout
    frobenius_norm grid_sampler grid_sampler_2d grid_sampler_3d group_norm gru_cell
    hardshrink hinge_embedding_loss instance_norm kl_div layer_norm margin_ranking_loss
    max_pool1d max_pool2d max_pool3d norm_except_dim nuclear_norm pairwise_distance pdist
    pixel_shuffle pixel_unshuffle poisson_nll_loss prelu rms_norm rnn_relu_cell
    rnn_tanh_cell rrelu selu threshold triplet_margin_loss""".split())
# functions that return nothing: the global switches
_NO_RESULT = frozenset("""
    clear_autocast_cache set_anomaly_enabled set_autocast_cache_enabled
    set_autocast_cpu_dtype set_autocast_cpu_enabled set_autocast_dtype set_autocast_enabled
    set_autocast_gpu_dtype set_autocast_ipu_dtype set_autocast_ipu_enabled
    set_autocast_xla_dtype set_autocast_xla_enabled set_default_device set_default_dtype
    set_default_tensor_type set_deterministic_debug_mode set_float32_matmul_precision
    set_num_interop_threads set_num_threads set_printoptions set_rng_state set_warn_always
    use_deterministic_algorithms""".split())
_RETURNS = {"is_tensor": "builtins.bool", "is_storage": "builtins.bool",
            "is_grad_enabled": "builtins.bool", "is_inference_mode_enabled": "builtins.bool",
            "equal": "builtins.bool", "allclose": "builtins.bool", "numel": "builtins.int",
            "get_num_threads": "builtins.int", "manual_seed": "Generator",
            "initial_seed": "builtins.int", "seed": "builtins.int", "typename": "builtins.str",
            "get_default_dtype": "dtype", "result_type": "dtype", "promote_types": "dtype",
            "get_default_device": "device", "are_deterministic_algorithms_enabled":
            "builtins.bool", "can_cast": "builtins.bool", "set_flush_denormal": "builtins.bool",
            "get_num_interop_threads": "builtins.int", "get_deterministic_debug_mode":
            "builtins.int", "get_float32_matmul_precision": "builtins.str",
            "get_include": "builtins.str", "get_rng_state": "Tensor"}
# how a value of these types is annotated (the stub's own names; ember.float is the dtype)
_VALUE_TYPES = {"dtype": "dtype", "memory_format": "memory_format", "layout": "layout",
                "Generator": "Generator", "float": "builtins.float", "bool": "builtins.bool",
                "NoneType": "None"}


def _returns(name, tensor_valued):
    if name in _RETURNS:
        return _RETURNS[name]
    if name in _NO_RESULT:
        return "None"
    if name in tensor_valued or (name.endswith("_") and not name.startswith("_")):
        return "Tensor"                  # an op, or a torch.name_ in-place form
    if name.startswith("is_"):
        return "builtins.bool"
    return "Any"


def _facade_imports():
    """{name: module} for the names ember/__init__.py imports from its own modules."""
    import ast
    with open(os.path.join(HERE, "__init__.py")) as f:
        tree = ast.parse(f.read())
    return {a.asname or a.name: n.module for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("ember.")
            for a in n.names}


def _home(obj, name, facade):
    """The module a class is imported from: the one the façade imports it from, else the
    defining one, else one that holds it under this name, a Python module (a checker reads
    it) before a compiled one, then the shortest path."""
    if name in facade and getattr(sys.modules.get(facade[name]), name, None) is obj:
        return facade[name]
    found = []
    for modname, mod in list(sys.modules.items()):
        if not modname.startswith("ember.") or getattr(mod, name, None) is not obj:
            continue
        source = (getattr(mod, "__file__", "") or "").endswith(".py")
        found.append((modname != obj.__module__, not source, len(modname), modname))
    return min(found)[3] if found else None


def render():
    """The stub's text, from the façade as it is now."""
    import ember
    from ember import _lazy
    from ember.core import _tensor as _T
    from ember.core import tensor_stub as _ts
    from ember.core._dispatch import all_ops
    # the op table's functions, the ops whose schema returns one tensor, the known others
    tensor_valued = set(_T.table_functions()) | _ts._TENSOR_VALUED | _TENSOR_VALUED | {
        name for name, op in all_ops().items()
        if (op.schema or "").rpartition("->")[2].strip() in ("Tensor", "Tensor(a)", "Tensor(a!)")}
    submodules = sorted(n for n in _lazy.SUBMODULES if not n.startswith("_"))
    facade, imports, body = _facade_imports(), {}, []
    for name in sorted(ember.__all__):
        value = getattr(ember, name)
        if isinstance(value, type):
            home = _home(value, name, facade)
            if home is None:
                body.append(f"{name}: Any")
            else:
                imports[name] = home
        elif callable(value) and type(value).__name__ not in _VALUE_TYPES:
            params = _ts._params(value, False)
            params = ["*args: Any", "**kwargs: Any"] if params is None else params
            body.append(f"def {name}({', '.join(params)}) -> "
                        f"{_returns(name, tensor_valued)}: ...")
        else:
            body.append(f"{name}: {_VALUE_TYPES.get(type(value).__name__, 'Any')}")
    lines = ["# Generated by `python -m ember._facade_stub` from the façade as it is at run",
             "# time; do not edit (tests/test_facade_stub.py checks it is current).",
             "import builtins",
             "from typing import Any", ""]
    for name, mod in sorted(imports.items(), key=lambda kv: (kv[1], kv[0])):
        line = f"from {mod} import {name} as {name}"
        lines.append(line if len(line) <= 100 else     # as ruff's isort wraps it
                     f"from {mod} import (\n    {name} as {name},\n)")
    lines += [""] + [f"from . import {m} as {m}" for m in submodules] + [""]
    lines += body
    lines += ["", "def __getattr__(name: builtins.str) -> Any: ..."]
    return "\n".join(lines) + "\n"


def main(argv):
    from ember.core.tensor_stub import write_or_check
    return write_or_check(STUB, render(), argv, "python -m ember._facade_stub")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
