"""ember: a deep learning framework with PyTorch's programming model.

This façade re-exports the public names of the core and wires in device plugins (loaded
from the entry-point group ``ember.backends`` unless EMBER_DEVICE_BACKEND_AUTOLOAD=0).
"""
from ember import version as _version
from ember._sym import (
    SymBool,
    SymFloat,
    SymInt,
    sym_float,
    sym_fresh_size,
    sym_int,
    sym_ite,
    sym_max,
    sym_min,
    sym_not,
    sym_sum,
)
from ember.autograd.grad_mode import enable_grad as enable_grad  # noqa: E402
from ember.autograd.grad_mode import inference_mode as inference_mode
from ember.autograd.grad_mode import is_grad_enabled as is_grad_enabled
from ember.autograd.grad_mode import is_inference_mode_enabled as is_inference_mode_enabled
from ember.autograd.grad_mode import no_grad as no_grad
from ember.autograd.grad_mode import set_grad_enabled as set_grad_enabled
from ember.core._device import device as device
from ember.core._dispatch import DispatchKey as DispatchKey
from ember.core._dtype import dtype as dtype
from ember.core._dtype import promote_types as promote_types
from ember.core._errors import _check as _check
from ember.core._errors import _check_index as _check_index
from ember.core._errors import _check_not_implemented as _check_not_implemented
from ember.core._errors import _check_type as _check_type
from ember.core._errors import _check_value as _check_value
from ember.core._errors import _check_with as _check_with
from ember.core._errors import _is_all_true as _is_all_true
from ember.core._errors import _is_any_true as _is_any_true
from ember.core._formatting import set_printoptions as set_printoptions
from ember.core._size import Size as Size
from ember.core._state import get_default_dtype as get_default_dtype
from ember.core._state import set_default_dtype as set_default_dtype
from ember.core._tensor import Generator as Generator
from ember.core._tensor import OutOfMemoryError as OutOfMemoryError
from ember.core._tensor import _abs as abs  # noqa: F401  (named _abs in Cython: no builtin shadowing)
from ember.core._tensor import _all as all  # noqa: F401
from ember.core._tensor import _any as any  # noqa: F401
from ember.core._tensor import _log_softmax_backward_data as _log_softmax_backward_data
from ember.core._tensor import _pow as pow  # noqa: F401
from ember.core._tensor import _round as round  # noqa: F401
from ember.core._tensor import _softmax_backward_data as _softmax_backward_data
from ember.core._tensor import add as add
from ember.core._tensor import amax as amax
from ember.core._tensor import amin as amin
from ember.core._tensor import arange as arange
from ember.core._tensor import argmax as argmax
from ember.core._tensor import argmin as argmin
from ember.core._tensor import as_strided as as_strided

# norms (explicit ops, fused on the CPU)
from ember.core._tensor import batch_norm as batch_norm
from ember.core._tensor import chunk as chunk
from ember.core._tensor import clone as clone
from ember.core._tensor import cos as cos
from ember.core._tensor import cummax as cummax
from ember.core._tensor import cummin as cummin
from ember.core._tensor import cumprod as cumprod
from ember.core._tensor import cumsum as cumsum
from ember.core._tensor import diagonal as diagonal
from ember.core._tensor import div as div
from ember.core._tensor import empty as empty
from ember.core._tensor import empty_like as empty_like
from ember.core._tensor import eq as eq
from ember.core._tensor import equal as equal
from ember.core._tensor import exp as exp
from ember.core._tensor import flatten as flatten
from ember.core._tensor import frac as frac
from ember.core._tensor import from_dlpack as from_dlpack
from ember.core._tensor import from_numpy as from_numpy
from ember.core._tensor import full as full
from ember.core._tensor import full_like as full_like
from ember.core._tensor import gather as gather
from ember.core._tensor import ge as ge
from ember.core._tensor import gt as gt
from ember.core._tensor import index_add as index_add
from ember.core._tensor import index_copy as index_copy
from ember.core._tensor import index_fill as index_fill
from ember.core._tensor import index_put as index_put
from ember.core._tensor import index_select as index_select
from ember.core._tensor import initial_seed as initial_seed
from ember.core._tensor import is_floating_point as is_floating_point
from ember.core._tensor import is_tensor as is_tensor
from ember.core._tensor import le as le
from ember.core._tensor import log as log
from ember.core._tensor import log_softmax as log_softmax
from ember.core._tensor import logical_and as logical_and
from ember.core._tensor import logical_not as logical_not
from ember.core._tensor import logical_or as logical_or
from ember.core._tensor import logical_xor as logical_xor
from ember.core._tensor import lt as lt
from ember.core._tensor import manual_seed as manual_seed
from ember.core._tensor import masked_fill as masked_fill
from ember.core._tensor import matmul as matmul
from ember.core._tensor import maximum as maximum
from ember.core._tensor import mean as mean
from ember.core._tensor import minimum as minimum
from ember.core._tensor import movedim as movedim
from ember.core._tensor import mul as mul
from ember.core._tensor import multinomial as multinomial
from ember.core._tensor import narrow as narrow
from ember.core._tensor import native_batch_norm as native_batch_norm
from ember.core._tensor import native_layer_norm as native_layer_norm
from ember.core._tensor import ne as ne
from ember.core._tensor import neg as neg
from ember.core._tensor import negative as negative
from ember.core._tensor import nonzero as nonzero
from ember.core._tensor import numel as numel
from ember.core._tensor import ones as ones
from ember.core._tensor import ones_like as ones_like
from ember.core._tensor import permute as permute
from ember.core._tensor import prod as prod
from ember.core._tensor import put as put
from ember.core._tensor import rand as rand
from ember.core._tensor import rand_like as rand_like
from ember.core._tensor import randn as randn
from ember.core._tensor import randn_like as randn_like
from ember.core._tensor import reciprocal as reciprocal
from ember.core._tensor import relu as relu
from ember.core._tensor import reshape as reshape
from ember.core._tensor import result_type as result_type
from ember.core._tensor import scatter as scatter
from ember.core._tensor import scatter_add as scatter_add
from ember.core._tensor import scatter_reduce as scatter_reduce
from ember.core._tensor import searchsorted as searchsorted
from ember.core._tensor import seed as seed
from ember.core._tensor import select as select
from ember.core._tensor import sigmoid as sigmoid
from ember.core._tensor import sin as sin
from ember.core._tensor import softmax as softmax
from ember.core._tensor import split as split
from ember.core._tensor import split_with_sizes as split_with_sizes
from ember.core._tensor import sqrt as sqrt
from ember.core._tensor import square as square
from ember.core._tensor import squeeze as squeeze
from ember.core._tensor import sub as sub
from ember.core._tensor import sum as sum
from ember.core._tensor import swapaxes as swapaxes
from ember.core._tensor import swapdims as swapdims
from ember.core._tensor import t as t
from ember.core._tensor import table_functions as _table_functions
from ember.core._tensor import take as take
from ember.core._tensor import tanh as tanh
from ember.core._tensor import tensor as tensor
from ember.core._tensor import transpose as transpose
from ember.core._tensor import true_divide as true_divide
from ember.core._tensor import unbind as unbind
from ember.core._tensor import unflatten as unflatten
from ember.core._tensor import unsqueeze as unsqueeze
from ember.core._tensor import where as where
from ember.core._tensor import zeros as zeros
from ember.core._tensor import zeros_like as zeros_like
from ember.core.activations import logit as logit
from ember.core.conv import (
    conv1d,
    conv2d,
)
from ember.core.conversions import as_tensor as as_tensor
from ember.core.determinism import (
    are_deterministic_algorithms_enabled,
    get_deterministic_debug_mode,
    is_deterministic_algorithms_warn_only_enabled,
    set_deterministic_debug_mode,
    use_deterministic_algorithms,
)
from ember.core.linalg.legacy import (  # torch.lu, matrix_exp, geqrf, ...
    chain_matmul,
    cholesky,
    cholesky_inverse,
    cholesky_solve,
    det,
    eig,
    geqrf,
    inverse,
    logdet,
    lstsq,
    lu,
    lu_solve,
    lu_unpack,
    matrix_exp,
    matrix_power,
    orgqr,
    ormqr,
    pinverse,
    qr,
    slogdet,
    solve,
    svd,
    symeig,
    triangular_solve,
)
from ember.core.minmax import max as max  # noqa: F401
from ember.core.minmax import min as min  # noqa: F401
from ember.core.pooling import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool2d,
)
from ember.core.pooling import adaptive_max_pool1d_pair as adaptive_max_pool1d
from ember.core.random_ops import (
    bernoulli,
    normal,
    randint,
    randint_like,
)
from ember.core.switches import (
    get_float32_matmul_precision,
    is_warn_always_enabled,
    set_float32_matmul_precision,
    set_warn_always,
)
from ember.core.tensor import ABOVE_CORE as _ABOVE_CORE
from ember.core.tensor import Tensor as Tensor
from ember.core.typeinfo import finfo as finfo
from ember.core.typeinfo import iinfo as iinfo

__version__ = _version.__version__      # a TorchVersion, as torch.__version__ is

# complex numbers; the Python composites by kind (core/elementwise.py, factories.py,
# index_ops.py, norms.py, products.py, shapes.py, sorting.py, statistics.py); in-place
# function forms; layouts and memory formats; function forms and aliases of Tensor
# methods; special functions; the *_copy/*_scatter view forms
from ember.core._tensor import layer_norm as layer_norm
from ember.core.complex_functions import (
    angle,
    complex,
    conj,
    conj_physical,
    imag,
    is_complex,
    is_conj,
    is_neg,
    polar,
    real,
    resolve_conj,
    resolve_neg,
    view_as_complex,
    view_as_real,
)
from ember.core.elementwise import (
    absolute,
    acosh,
    allclose,
    arctan2,
    asinh,
    atanh,
    clamp,
    clamp_max,
    clamp_min,
    clip,
    copysign,
    deg2rad,
    float_power,
    frexp,
    gcd,
    heaviside,
    hypot,
    isclose,
    isfinite,
    isin,
    isinf,
    isnan,
    isneginf,
    isposinf,
    isreal,
    lcm,
    ldexp,
    logaddexp,
    logaddexp2,
    multiply,
    nan_to_num,
    nextafter,
    positive,
    rad2deg,
    rsub,
    sgn,
    sign,
    signbit,
    sinc,
    subtract,
    xlogy,
)
from ember.core.factories import (
    empty_strided,
    eye,
    linspace,
    logspace,
    range,
    scalar_tensor,
    tril_indices,
    triu_indices,
)
from ember.core.index_ops import (
    argwhere,
    bincount,
    bucketize,
    flip,
    fliplr,
    flipud,
    histc,
    masked_scatter,
    masked_select,
    repeat_interleave,
    take_along_dim,
)
from ember.core.inplace_ops import (
    clamp_,
    clamp_max_,
    clamp_min_,
    clip_,
    deg2rad_,
    nan_to_num_,
    rad2deg_,
    sinc_,
    xlogy_,
)
from ember.core.layout import (
    layout,
    strided,
)
from ember.core.memory_format import (
    channels_last,
    channels_last_3d,
    contiguous_format,
    legacy_contiguous_format,
    memory_format,
    preserve_format,
)
from ember.core.method_forms import (
    abs_,
    acos_,
    acosh_,
    addmv_,
    adjoint,
    arccos,
    arccos_,
    arccosh,
    arccosh_,
    arcsin,
    arcsin_,
    arcsinh,
    arcsinh_,
    arctan,
    arctan_,
    arctanh,
    arctanh_,
    as_strided_,
    asin_,
    asinh_,
    atan_,
    atanh_,
    ceil_,
    conj_physical_,
    cos_,
    cosh_,
    detach,
    detach_,
    divide,
    erf_,
    erfc_,
    exp2_,
    exp_,
    expm1_,
    fill,
    fill_,
    fix,
    fix_,
    floor_,
    frac_,
    gcd_,
    get_device,
    greater,
    greater_equal,
    index_put_,
    index_reduce,
    is_inference,
    is_nonzero,
    is_same_size,
    is_signed,
    lcm_,
    ldexp_,
    less,
    less_equal,
    log1p_,
    log2_,
    log10_,
    log_,
    logit_,
    moveaxis,
    neg_,
    negative_,
    nonzero_static,
    not_equal,
    reciprocal_,
    relu_,
    resize_as_,
    round_,
    rsqrt_,
    sigmoid_,
    sin_,
    sinh_,
    sqrt_,
    square_,
    tan_,
    tanh_,
    trunc_,
    zero_,
)
from ember.core.norms import (
    cdist,
    dist,
    norm,
    renorm,
    vector_norm,
)
from ember.core.products import (
    addbmm,
    addmm,
    addmv,
    addr,
    baddbmm,
    bmm,
    cross,
    dot,
    einsum,
    ger,
    inner,
    kron,
    mm,
    mv,
    outer,
    tensordot,
    trace,
    vdot,
)
from ember.core.shapes import (
    atleast_1d,
    atleast_2d,
    atleast_3d,
    block_diag,
    broadcast_shapes,
    broadcast_tensors,
    broadcast_to,
    cartesian_prod,
    cat,
    column_stack,
    combinations,
    concat,
    concatenate,
    diag,
    diag_embed,
    diagflat,
    diff,
    dsplit,
    dstack,
    hsplit,
    hstack,
    meshgrid,
    ravel,
    roll,
    rot90,
    row_stack,
    stack,
    tensor_split,
    tile,
    tril,
    triu,
    vander,
    vsplit,
    vstack,
)
from ember.core.sorting import (
    argsort,
    kthvalue,
    median,
    mode,
    msort,
    randperm,
    sort,
    topk,
    unique,
    unique_consecutive,
)
from ember.core.special import digamma as digamma  # noqa: E402  (the rest: ember.special)
from ember.core.special import erfinv as erfinv  # noqa: E402
from ember.core.special import lgamma as lgamma  # noqa: E402
from ember.core.special import mvlgamma as mvlgamma  # noqa: E402
from ember.core.special import polygamma as polygamma  # noqa: E402
from ember.core.statistics import (
    aminmax,
    corrcoef,
    count_nonzero,
    cov,
    cumulative_trapezoid,
    logcumsumexp,
    logsumexp,
    nanmean,
    nanmedian,
    nanquantile,
    nansum,
    quantile,
    std,
    std_mean,
    trapezoid,
    trapz,
    var,
    var_mean,
)
from ember.core.ternary import addcdiv, addcmul, lerp
from ember.core.typeinfo import can_cast as can_cast
from ember.core.view_copies import (
    alias_copy,
    as_strided_copy,
    as_strided_scatter,
    detach_copy,
    diagonal_copy,
    diagonal_scatter,
    expand_copy,
    narrow_copy,
    permute_copy,
    select_copy,
    select_scatter,
    slice_copy,
    slice_inverse,
    slice_scatter,
    split_copy,
    split_with_sizes_copy,
    squeeze_copy,
    t_copy,
    transpose_copy,
    unbind_copy,
    unfold_copy,
    unsafe_chunk,
    unsafe_split,
    unsafe_split_with_sizes,
    unsqueeze_copy,
    view_as_complex_copy,
    view_as_real_copy,
    view_copy,
)

# floor, ceil, trunc, exp2, ..., atan2, fmod, remainder, floor_divide, bitwise_*: one table
_table = _table_functions()
acos = _table["acos"]
asin = _table["asin"]
atan = _table["atan"]
atan2 = _table["atan2"]
bitwise_and = _table["bitwise_and"]
bitwise_left_shift = _table["bitwise_left_shift"]
bitwise_not = _table["bitwise_not"]
bitwise_or = _table["bitwise_or"]
bitwise_right_shift = _table["bitwise_right_shift"]
bitwise_xor = _table["bitwise_xor"]
ceil = _table["ceil"]
cosh = _table["cosh"]
erf = _table["erf"]
erfc = _table["erfc"]
exp2 = _table["exp2"]
expm1 = _table["expm1"]
floor = _table["floor"]
floor_divide = _table["floor_divide"]
fmax = _table["fmax"]
fmin = _table["fmin"]
fmod = _table["fmod"]
log10 = _table["log10"]
log1p = _table["log1p"]
log2 = _table["log2"]
remainder = _table["remainder"]
rsqrt = _table["rsqrt"]
sinh = _table["sinh"]
tan = _table["tan"]
trunc = _table["trunc"]
del _table

from ember import _lazy  # noqa: E402  (what loads on first use)

# dtypes: ember.float32, ember.long, ...  (ember.bool/int/float shadow the builtins here
# exactly as torch.bool/int/float do)
from ember.core._dtype import (  # noqa: E402
    bfloat16,
    bool,
    cdouble,
    cfloat,
    complex64,
    complex128,
    double,
    float,
    float16,
    float32,
    float64,
    half,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    short,
    uint8,
    uint16,
    uint32,
    uint64,
)

DispatchKey.__module__ = "ember"        # PyTorch's public path (torch.DispatchKey)


# Tensor.stft and .istft call the façade's STFT (written in nn.functional's pad and fold)
from ember._toplevel import _istft, _stft  # noqa: E402

_ABOVE_CORE.update(stft=_stft, istft=_istft)

# RNG state, the default device, device modules, threads, typename, get_include
from ember._toplevel import (  # noqa: E402
    _assert as _assert,
)
from ember._toplevel import (  # noqa: E402
    _register_device_module as _register_device_module,
)
from ember._toplevel import (  # noqa: E402
    get_default_device,
    get_device_module,
    get_include,
    get_num_threads,
    get_rng_state,
    i0_,
    is_distributed,
    set_default_device,
    set_num_threads,
    set_rng_state,
    typename,
)

# constants (``float`` is ember.float, the dtype, in this namespace)
e = 2.718281828459045
pi = 3.141592653589793
inf = 1e309
nan = inf - inf
newaxis = None


def __getattr__(name):
    return _lazy.resolve(name)


# the public names: those defined above and those loaded on first use (_lazy.FUNCTIONS);
# tests/test_public_names.py checks the list against both
__all__ = [
    "AcceleratorError", "CompileMode", "DeserializationStorageContext", "DispatchKey", "Event",
    "FatalError", "Generator", "GradScaler", "OutOfMemoryError", "PyTorchFileReader",
    "PyTorchFileWriter", "SerializationStorageContext", "Size", "StorageBase", "Stream",
    "SymBool", "SymFloat", "SymInt", "Tensor", "TypedStorage", "UntypedStorage", "abs", "abs_",
    "absolute", "acos", "acos_", "acosh", "acosh_", "adaptive_avg_pool1d",
    "adaptive_avg_pool2d", "adaptive_max_pool1d", "add", "addbmm", "addcdiv", "addcmul",
    "addmm", "addmv", "addmv_", "addr", "adjoint", "affine_grid_generator", "alias_copy",
    "all", "allclose", "alpha_dropout", "alpha_dropout_", "amax", "amin", "aminmax", "angle",
    "any", "arange", "arccos", "arccos_", "arccosh", "arccosh_", "arcsin", "arcsin_",
    "arcsinh", "arcsinh_", "arctan", "arctan2", "arctan_", "arctanh", "arctanh_",
    "are_deterministic_algorithms_enabled", "argmax", "argmin", "argsort", "argwhere",
    "as_strided", "as_strided_", "as_strided_copy", "as_strided_scatter", "as_tensor",
    "asarray", "asin", "asin_", "asinh", "asinh_", "atan", "atan2", "atan_", "atanh", "atanh_",
    "atleast_1d", "atleast_2d", "atleast_3d", "autocast", "autocast_decrement_nesting",
    "autocast_increment_nesting", "avg_pool1d", "avg_pool2d", "baddbmm", "bartlett_window",
    "batch_norm", "batch_norm_backward_elemt", "batch_norm_backward_reduce",
    "batch_norm_elemt", "batch_norm_gather_stats", "batch_norm_gather_stats_with_counts",
    "batch_norm_stats", "batch_norm_update_stats", "bernoulli", "bfloat16", "bilinear",
    "binary_cross_entropy_with_logits", "bincount", "binomial", "bitwise_and",
    "bitwise_left_shift", "bitwise_not", "bitwise_or", "bitwise_right_shift", "bitwise_xor",
    "blackman_window", "block_diag", "bmm", "bool", "broadcast_shapes", "broadcast_tensors",
    "broadcast_to", "bucketize", "can_cast", "cartesian_prod", "cat", "cdist", "cdouble",
    "ceil", "ceil_", "celu", "celu_", "cfloat", "chain_matmul", "channel_shuffle",
    "channels_last", "channels_last_3d", "cholesky", "cholesky_inverse", "cholesky_solve",
    "chunk", "clamp", "clamp_", "clamp_max", "clamp_max_", "clamp_min", "clamp_min_",
    "clear_autocast_cache", "clip", "clip_", "clone", "column_stack", "combinations",
    "compile", "complex", "complex128", "complex64", "concat", "concatenate", "cond", "conj",
    "conj_physical", "conj_physical_", "constant_pad_nd", "contiguous_format", "conv1d",
    "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "convolution", "copysign", "corrcoef", "cos", "cos_", "cosh", "cosh_",
    "cosine_embedding_loss", "cosine_similarity", "count_nonzero", "cov", "cross", "ctc_loss",
    "cummax", "cummin", "cumprod", "cumsum", "cumulative_trapezoid", "default_generator",
    "deg2rad", "deg2rad_", "det", "detach", "detach_", "detach_copy", "device", "diag",
    "diag_embed", "diagflat", "diagonal", "diagonal_copy", "diagonal_scatter", "diff",
    "digamma", "dist", "div", "divide", "dot", "double", "dropout", "dropout_", "dsplit",
    "dstack", "dtype", "e", "eig", "einsum", "embedding", "embedding_bag", "embedding_renorm_",
    "empty", "empty_like", "empty_permuted", "empty_strided", "enable_grad", "eq", "equal",
    "erf", "erf_", "erfc", "erfc_", "erfinv", "exp", "exp2", "exp2_", "exp_", "expand_copy",
    "expm1", "expm1_", "eye", "feature_alpha_dropout", "feature_alpha_dropout_",
    "feature_dropout", "feature_dropout_", "fill", "fill_", "finfo", "fix", "fix_", "flatten",
    "flip", "fliplr", "flipud", "float", "float16", "float32", "float64", "float_power",
    "floor", "floor_", "floor_divide", "fmax", "fmin", "fmod", "frac", "frac_", "frexp",
    "frobenius_norm", "from_dlpack", "from_file", "from_numpy", "frombuffer", "full",
    "full_like", "gather", "gcd", "gcd_", "ge", "geqrf", "ger", "get_autocast_cpu_dtype",
    "get_autocast_dtype", "get_autocast_gpu_dtype", "get_autocast_ipu_dtype",
    "get_autocast_xla_dtype", "get_default_device", "get_default_dtype",
    "get_deterministic_debug_mode", "get_device", "get_device_module",
    "get_float32_matmul_precision", "get_include", "get_num_interop_threads",
    "get_num_threads", "get_rng_state", "gradient", "greater", "greater_equal", "grid_sampler",
    "grid_sampler_2d", "grid_sampler_3d", "group_norm", "gru", "gru_cell", "gt", "half",
    "hamming_window", "hann_window", "hardshrink", "has_lapack", "has_mkl", "has_openmp",
    "has_spectral", "hash_tensor", "heaviside", "hinge_embedding_loss", "histc", "histogram",
    "histogramdd", "hsplit", "hstack", "hypot", "i0", "i0_", "igamma", "igammac", "iinfo",
    "imag", "index_add", "index_copy", "index_fill", "index_put", "index_put_", "index_reduce",
    "index_select", "inf", "inference_mode", "init_num_threads", "initial_seed", "inner",
    "instance_norm", "int", "int16", "int32", "int64", "int8", "inverse",
    "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "is_autocast_cache_enabled",
    "is_autocast_cpu_enabled", "is_autocast_enabled", "is_autocast_ipu_enabled",
    "is_autocast_xla_enabled", "is_complex", "is_conj",
    "is_deterministic_algorithms_warn_only_enabled", "is_distributed", "is_floating_point",
    "is_grad_enabled", "is_inference", "is_inference_mode_enabled", "is_neg", "is_nonzero",
    "is_same_size", "is_signed", "is_storage", "is_tensor", "is_warn_always_enabled",
    "isclose", "isfinite", "isin", "isinf", "isnan", "isneginf", "isposinf", "isreal", "istft",
    "kaiser_window", "kl_div", "kron", "kthvalue", "layer_norm", "layout", "lcm", "lcm_",
    "ldexp", "ldexp_", "le", "legacy_contiguous_format", "lerp", "less", "less_equal",
    "lgamma", "linspace", "load", "lobpcg", "log", "log10", "log10_", "log1p", "log1p_",
    "log2", "log2_", "log_", "log_softmax", "logaddexp", "logaddexp2", "logcumsumexp",
    "logdet", "logical_and", "logical_not", "logical_or", "logical_xor", "logit", "logit_",
    "logspace", "logsumexp", "long", "lstm", "lstm_cell", "lstsq", "lt", "lu", "lu_solve",
    "lu_unpack", "manual_seed", "margin_ranking_loss", "masked_fill", "masked_scatter",
    "masked_select", "matmul", "matrix_exp", "matrix_power", "max", "max_pool1d",
    "max_pool1d_with_indices", "max_pool2d", "max_pool3d", "maximum", "mean", "median",
    "memory_format", "meshgrid", "min", "minimum", "mm", "mode", "moveaxis", "movedim",
    "msort", "mul", "multinomial", "multiply", "mv", "mvlgamma", "nan", "nan_to_num",
    "nan_to_num_", "nanmean", "nanmedian", "nanquantile", "nansum", "narrow", "narrow_copy",
    "native_batch_norm", "native_channel_shuffle", "native_dropout", "native_group_norm",
    "native_layer_norm", "native_norm", "ne", "neg", "neg_", "negative", "negative_",
    "newaxis", "nextafter", "no_grad", "nonzero", "nonzero_static", "norm", "norm_except_dim",
    "normal", "not_equal", "nuclear_norm", "numel", "ones", "ones_like", "ops", "orgqr",
    "ormqr", "outer", "pairwise_distance", "pca_lowrank", "pdist", "permute", "permute_copy",
    "pi", "pinverse", "pixel_shuffle", "pixel_unshuffle", "poisson", "poisson_nll_loss",
    "polar", "polygamma", "positive", "pow", "prelu", "preserve_format", "prod",
    "promote_types", "put", "qr", "quantile", "rad2deg", "rad2deg_", "rand", "rand_like",
    "randint", "randint_like", "randn", "randn_like", "randperm", "range", "ravel", "real",
    "reciprocal", "reciprocal_", "relu", "relu_", "remainder", "renorm", "repeat_interleave",
    "reshape", "resize_as_", "resolve_conj", "resolve_neg", "result_type", "rms_norm",
    "rnn_relu", "rnn_relu_cell", "rnn_tanh", "rnn_tanh_cell", "roll", "rot90", "round",
    "round_", "row_stack", "rrelu", "rrelu_", "rsqrt", "rsqrt_", "rsub", "save",
    "scalar_tensor", "scatter", "scatter_add", "scatter_reduce", "searchsorted", "seed",
    "segment_reduce", "select", "select_copy", "select_scatter", "selu", "selu_",
    "set_anomaly_enabled", "set_autocast_cache_enabled", "set_autocast_cpu_dtype",
    "set_autocast_cpu_enabled", "set_autocast_dtype", "set_autocast_enabled",
    "set_autocast_gpu_dtype", "set_autocast_ipu_dtype", "set_autocast_ipu_enabled",
    "set_autocast_xla_dtype", "set_autocast_xla_enabled", "set_default_device",
    "set_default_dtype", "set_default_tensor_type", "set_deterministic_debug_mode",
    "set_float32_matmul_precision", "set_flush_denormal", "set_grad_enabled",
    "set_num_interop_threads", "set_num_threads", "set_printoptions", "set_rng_state",
    "set_warn_always", "sgn", "short", "sigmoid", "sigmoid_", "sign", "signbit", "sin", "sin_",
    "sinc", "sinc_", "sinh", "sinh_", "slice_copy", "slice_inverse", "slice_scatter",
    "slogdet", "softmax", "solve", "sort", "split", "split_copy", "split_with_sizes",
    "split_with_sizes_copy", "sqrt", "sqrt_", "square", "square_", "squeeze", "squeeze_copy",
    "stack", "std", "std_mean", "stft", "strided", "sub", "subtract", "sum", "svd",
    "svd_lowrank", "swapaxes", "swapdims", "sym_constrain_range",
    "sym_constrain_range_for_size", "sym_float", "sym_fresh_size", "sym_int", "sym_ite",
    "sym_max", "sym_min", "sym_not", "sym_sqrt", "sym_sum", "symeig", "t", "t_copy", "take",
    "take_along_dim", "tan", "tan_", "tanh", "tanh_", "tensor", "tensor_split", "tensordot",
    "thread_safe_generator", "threshold", "threshold_", "tile", "to_dlpack", "topk", "trace",
    "transpose", "transpose_copy", "trapezoid", "trapz", "triangular_solve", "tril",
    "tril_indices", "triplet_margin_loss", "triu", "triu_indices", "true_divide", "trunc",
    "trunc_", "typename", "uint16", "uint32", "uint64", "uint8", "unbind", "unbind_copy",
    "unflatten", "unfold_copy", "unique", "unique_consecutive", "unravel_index",
    "unsafe_chunk", "unsafe_split", "unsafe_split_with_sizes", "unsqueeze", "unsqueeze_copy",
    "use_deterministic_algorithms", "vander", "var", "var_mean", "vdot", "vector_norm",
    "view_as_complex", "view_as_complex_copy", "view_as_real", "view_as_real_copy",
    "view_copy", "vmap", "vsplit", "vstack", "where", "while_loop", "xlogy", "xlogy_", "zero_",
    "zeros", "zeros_like"
]


def _autoload():
    import sys

    from ember import backends
    if backends._autoload_enabled():
        # `python -m ember.backends` lists broken plugins instead of dying on them
        listing = sys.orig_argv[-2:] == ["-m", "ember.backends"]
        backends.autoload(strict=not listing)


_autoload()

# torch.backends' namespaces for libraries ember does not link (mps, mkldnn, mkl, openmp,
# opt_einsum), registered as submodules of ember.backends
from ember import _backend_flags  # noqa: E402

_backend_flags.install()
