"""The façade's names that load on first use (``ember/__init__.py``'s ``__getattr__`` is
``resolve``): submodules, functions and classes by the module that holds them, the legacy
tensor types and storages, the device runtime modules, and deprecated spellings.  Keeping
them out of ``import ember`` keeps it fast."""
import importlib

__all__ = ["DEPRECATED", "FUNCTIONS", "LEGACY_STORAGE_NAMES", "LEGACY_TYPE_NAMES", "PREFIXES",
           "SUBMODULES", "resolve"]

SUBMODULES = {"backends", "nn", "optim", "distributed", "linalg", "fft", "autograd",
              "utils", "random", "__config__", "testing", "fx", "serialization", "func"}
FUNCTIONS = {"save": "serialization", "load": "serialization",   # NumPy-heavy: on use
             "vmap": "func"}
# conv3d/transposed convs, 3-d max pooling, pixel shuffles: nn composites, loaded on use
FUNCTIONS.update({"conv3d": "nn._functional.conv",
                  "conv_transpose1d": "nn._functional.conv",
                  "conv_transpose2d": "nn._functional.conv",
                  "conv_transpose3d": "nn._functional.conv",
                  "max_pool3d": "nn._functional.pooling",
                  "pixel_shuffle": "nn._functional.pixel_shuffle",
                  "pixel_unshuffle": "nn._functional.pixel_shuffle"})

# torch.* spellings of nn ops (ATen's argument orders): nn-heavy, loaded on first use
FUNCTIONS.update({_n: "_nn_forms" for _n in (
    "affine_grid_generator", "alpha_dropout", "alpha_dropout_", "bilinear",
    "binary_cross_entropy_with_logits", "celu", "celu_", "channel_shuffle",
    "constant_pad_nd", "convolution", "cosine_embedding_loss", "cosine_similarity",
    "ctc_loss", "dropout", "dropout_", "embedding", "embedding_bag",
    "embedding_renorm_", "feature_alpha_dropout", "feature_alpha_dropout_",
    "feature_dropout", "feature_dropout_", "frobenius_norm", "grid_sampler",
    "grid_sampler_2d", "grid_sampler_3d", "group_norm", "hardshrink",
    "hinge_embedding_loss", "instance_norm", "kl_div", "margin_ranking_loss",
    "max_pool1d_with_indices", "native_channel_shuffle", "native_dropout",
    "native_group_norm", "native_norm", "norm_except_dim", "nuclear_norm",
    "pairwise_distance", "pdist", "poisson_nll_loss", "prelu", "rms_norm", "rrelu",
    "rrelu_", "selu", "selu_", "threshold", "threshold_", "triplet_margin_loss")})
FUNCTIONS.update({_n: "_rnn_forms" for _n in (
    "gru", "gru_cell", "lstm", "lstm_cell", "rnn_relu", "rnn_relu_cell", "rnn_tanh",
    "rnn_tanh_cell")})
FUNCTIONS.update({_n: "_batch_norm_forms" for _n in (
    "batch_norm_backward_elemt", "batch_norm_backward_reduce", "batch_norm_elemt",
    "batch_norm_gather_stats", "batch_norm_gather_stats_with_counts",
    "batch_norm_stats", "batch_norm_update_stats")})

# the smaller torch.* functions, window functions, STFT, histograms, buffers: on first use
FUNCTIONS.update({_n: "_torch_misc" for _n in (
    "binomial", "empty_permuted", "get_num_interop_threads", "gradient", "has_lapack",
    "has_mkl", "has_openmp", "has_spectral", "init_num_threads",
    "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "pca_lowrank", "poisson",
    "segment_reduce", "set_anomaly_enabled", "set_default_tensor_type", "set_flush_denormal",
    "set_num_interop_threads", "svd_lowrank", "sym_constrain_range",
    "sym_constrain_range_for_size", "sym_sqrt", "thread_safe_generator", "to_dlpack",
    "unravel_index")})
FUNCTIONS.update({_n: "amp.legacy" for _n in (
    "autocast_decrement_nesting", "autocast_increment_nesting", "get_autocast_cpu_dtype",
    "get_autocast_gpu_dtype", "get_autocast_ipu_dtype", "get_autocast_xla_dtype",
    "is_autocast_cpu_enabled", "is_autocast_ipu_enabled", "is_autocast_xla_enabled",
    "set_autocast_cpu_dtype", "set_autocast_cpu_enabled", "set_autocast_gpu_dtype",
    "set_autocast_ipu_dtype", "set_autocast_ipu_enabled", "set_autocast_xla_dtype",
    "set_autocast_xla_enabled")})
FUNCTIONS.update({_n: "core.windows" for _n in (
    "bartlett_window", "blackman_window", "hamming_window", "hann_window", "kaiser_window")})
FUNCTIONS.update({"stft": "_stft", "istft": "_stft",
                  "histogram": "core.histograms", "histogramdd": "core.histograms",
                  "asarray": "core.buffers", "frombuffer": "core.buffers",
                  "from_file": "core.buffers"})
SUBMODULES |= {"signal", "functional", "return_types", "types", "torch_version",
               "version", "multiprocessing", "storage", "futures"}
FUNCTIONS.update({"UntypedStorage": "core.storages", "TypedStorage": "core.storages",
                  "StorageBase": "core.storages", "hash_tensor": "core.hash_tensor",
                  "lobpcg": "_lobpcg",
                  "is_storage": "core.storages"})

# the legacy tensor types and typed storages (ember.FloatTensor, ember.FloatStorage, ...)
LEGACY_TYPE_NAMES = {"FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor",
                      "ByteTensor", "CharTensor", "ShortTensor", "IntTensor", "LongTensor",
                      "BoolTensor"}
LEGACY_STORAGE_NAMES = {n.replace("Tensor", "Storage") for n in LEGACY_TYPE_NAMES} | {
    "ComplexFloatStorage", "ComplexDoubleStorage"}

# torch.GradScaler is amp's; torch.Event/Stream the device-generic ones (ember.cuda's
# for CUDA), AcceleratorError/FatalError the runtime's exceptions
FUNCTIONS.update({"GradScaler": "amp.grad_scaler", "Event": "_streams",
                  "Stream": "_streams", "AcceleratorError": "_streams",
                  "FatalError": "_streams", "default_generator": "_streams"})

# old names that still work, with a warning naming the new one
DEPRECATED = {"set_deterministic": "use_deterministic_algorithms",
              "is_deterministic": "are_deterministic_algorithms_enabled"}

# mixed precision, device runtimes and tooling (all loaded on first use)
SUBMODULES |= {"amp", "cuda", "onnx", "profiler", "accelerator"}
# torch.special and torch.distributions; i0/igamma/igammac are also top-level in PyTorch
SUBMODULES |= {"special", "distributions"}
FUNCTIONS.update({"i0": "special", "igamma": "core.incomplete_gamma",
                  "igammac": "core.incomplete_gamma"})
# samplers behind the distributions (gamma with its reparameterised gradient, ...)
FUNCTIONS.update({_n: "core.random_samplers" for _n in (
    "poisson", "binomial", "_standard_gamma", "_standard_gamma_grad", "_sample_dirichlet")})
# ember.compile: capture (ember._dynamo), code generation (ember._inductor), ember.ops
SUBMODULES |= {"compiler"}
# PyTorch's private packages scripts reach as attributes (torch._dynamo.config,
# torch._inductor.config, ...): importable on first use, as PyTorch's lazy modules
PRIVATE_SUBMODULES = {"_dynamo", "_inductor", "_subclasses", "_higher_order_ops", "_logging"}
FUNCTIONS.update({"compile": "compiler._compile", "CompileMode": "compiler._compile",
                  "ops": "_ops"})
# control flow that capture keeps whole (torch.cond, torch.while_loop) and torch.export
FUNCTIONS.update({"cond": "_higher_order_ops", "while_loop": "_higher_order_ops"})
SUBMODULES |= {"export"}
# torch.jit's names without TorchScript: script/trace return their argument (ember/jit.py)
SUBMODULES |= {"jit"}
# PyTorch's archive classes (torch._C's, exposed as torch.PyTorchFileReader, ...)
FUNCTIONS.update({_n: "serialization._file_classes" for _n in (
    "PyTorchFileReader", "PyTorchFileWriter", "SerializationStorageContext",
    "DeserializationStorageContext")})
FUNCTIONS.update({_n: "amp.autocast_mode" for _n in (
    "autocast", "is_autocast_enabled", "get_autocast_dtype", "set_autocast_enabled",
    "set_autocast_dtype", "is_autocast_cache_enabled", "set_autocast_cache_enabled",
    "clear_autocast_cache")})


# torch._foreach_* (multi-tensor ops): one table in ember/_foreach.py, found by prefix
PREFIXES = {"_foreach_": "_foreach"}


def resolve(name):
    """``ember.<name>`` for a name not defined at import (AttributeError if none)."""
    import ember
    if name in SUBMODULES or name in PRIVATE_SUBMODULES:
        return importlib.import_module(f"ember.{name}")
    if name in DEPRECATED:
        import warnings
        warnings.warn(f"ember.{name} is deprecated; use ember.{DEPRECATED[name]} instead",
                      FutureWarning, stacklevel=3)
        return getattr(ember, DEPRECATED[name])
    if name in FUNCTIONS:
        value = getattr(importlib.import_module(f"ember.{FUNCTIONS[name]}"), name)
        setattr(ember, name, value)     # later reads (a graph's ember.ops...) skip this hook
        return value
    for prefix, module in PREFIXES.items():
        if name.startswith(prefix):
            found = getattr(importlib.import_module(f"ember.{module}"), name, None)
            if found is not None:
                return found
    if name.endswith("Tensor") and name in LEGACY_TYPE_NAMES:
        from ember.core import legacy_types
        return legacy_types.legacy_class(name)
    if name == "Storage":                       # PyTorch's alias of FloatStorage
        name = "FloatStorage"
    if name.endswith("Storage") and name in LEGACY_STORAGE_NAMES:
        from ember.core import storages
        return storages.legacy_storage(name)
    from ember.core._device import _backend_for_type
    if _backend_for_type(name) is not None and name != "meta":
        return ember.get_device_module(name)    # ember.cuda, ember.mps, ember.cpu, ...
    raise AttributeError(f"module 'ember' has no attribute '{name}'")
