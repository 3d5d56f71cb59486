"""The PyTorch names ember leaves out on purpose: one category per reason, reviewed as a list.

A name matches a category when one of its glob patterns matches the name's qualified path
(``torch.Tensor.to_sparse``, ``torch.nn.quantized``).  Everything else the walk finds
missing is "not yet" — either a gap to fill, or a module another piece of work owns
(``PENDING``), which the table shows apart.
"""
import fnmatch

__all__ = ["OMITTED", "PENDING", "category", "pending", "ignored_keywords"]

# category: (reason, patterns)
OMITTED = {
    "torchscript": (
        "TorchScript and the JIT: its IR (Graph, Node, Value, Block), type objects, script "
        "modules/functions/containers, IR parsers, FileCheck and the legacy fork/wait RPC "
        "futures (torch.Future; torch.futures is ember.futures). ember captures programs "
        "with ember.fx and ember.compile instead (ember.jit keeps torch.jit's decorators; its "
        "script and trace return their argument).",
        ["torch.*Type", "torch.AliasDb", "torch.Argument", "torch.ArgumentSpec",
         "torch.BufferDict", "torch.CallStack", "torch.Capsule", "torch.Code",
         "torch.CompilationUnit", "torch.CompleteArgumentSpec", "torch.ConcreteModuleType*",
         "torch.DeepCopyMemoTable", "torch.ErrorReport", "torch.ExecutionPlan",
         "torch.FileCheck", "torch.FunctionSchema", "torch.Future", "torch.Gradient",
         "torch.Graph", "torch.GraphExecutorState", "torch.IODescriptor", "torch.JITException",
         "torch.LiteScriptModule", "torch.ModuleDict", "torch.Node", "torch.OperatorInfo",
         "torch.ParameterDict", "torch.Script*", "torch.StaticModule", "torch.TracingState",
         "torch.Use", "torch.Value", "torch.Block", "torch.import_ir_module*", "torch.parse_ir",
         "torch.parse_schema", "torch.parse_type_comment", "torch.merge_type_from_type_comment",
         "torch.unify_type_list", "torch.fork", "torch.wait", "torch.classes",
         "torch.testing.FileCheck", "torch.Benchmark*",
         "torch.ThroughputBenchmark", "torch.AggregationType", "torch.AVG", "torch.SUM",
         "torch.LoggerBase", "torch.LockingLogger", "torch.NoopLogger",
         "torch.autograd.NestedIOFunction", "torch.Tensor.module_load"]),
    "vendor-libraries": (
        "entry points of vendor libraries ember does not link: cuDNN, MIOpen, oneDNN "
        "(mkldnn), FBGEMM, Vulkan. ember's CPU plugin has its own kernels for these ops.",
        ["torch.cudnn_*", "torch.miopen_*", "torch.mkldnn_*", "torch.fbgemm_*",
         "torch.is_vulkan_available", "torch.Tensor.to_mkldnn", "torch.Tensor.is_mkldnn",
         "torch.Tensor.is_vulkan", "torch.conv_tbc", "torch.nn.functional.conv_tbc"]),
    "quantization": (
        "quantized tensors and their dtypes, schemes and kernels (torch.ao): ember has no "
        "quantized layout.",
        ["torch.q*int*", "torch.qscheme", "torch.per_tensor_*", "torch.per_channel_*",
         "torch.quantize_*", "torch.dequantize", "torch.q_*", "torch.int_repr",
         "torch.fake_quantize_*", "torch.fused_moving_avg_obs_fake_quant",
         "torch.choose_qparams_optimized", "torch.quantized_*", "torch.empty_quantized",
         "torch.Q*Storage", "torch.ao", "torch.quantization", "torch.nn.quantized",
         "torch.nn.qat", "torch.nn.intrinsic", "torch.nn.quantizable",
         "torch.Tensor.q_*", "torch.Tensor.qscheme", "torch.Tensor.int_repr",
         "torch.Tensor.dequantize"]),
    "sparse-layouts": (
        "sparse COO/CSR/CSC/BSR/BSC tensors and their kernels: ember tensors are strided "
        "(dense) only.",
        ["torch.sparse*", "torch.smm", "torch.hsmm", "torch.dsmm", "torch.spmm", "torch.saddmm",
         "torch.sspaddmm", "torch.hspmm", "torch.*indices_copy", "torch.values_copy",
         "torch.resize_as_sparse_", "torch.Tensor.coalesce", "torch.Tensor.is_coalesced",
         "torch.Tensor.indices", "torch.Tensor.values", "torch.Tensor.*_indices",
         "torch.Tensor.sparse_*", "torch.Tensor.to_sparse*", "torch.Tensor.resize_as_sparse_",
         "torch.Tensor.smm", "torch.Tensor.sspaddmm", "torch.cuda.sparse",
         "torch.Tensor.dense_dim"]),
    "nested-tensors": (
        "nested (jagged) tensors: ember has no ragged layout.",
        ["torch.nested", "torch.jagged", "torch.Tensor.to_padded_tensor"]),
    "sub-byte-and-fp8-dtypes": (
        "bit-packed, sub-byte, 8-bit float and complex32 dtypes: no NumPy storage type holds "
        "them, and PyTorch itself gives them casts and little else.",
        ["torch.uint[1-7]", "torch.int[1-7]", "torch.bits*", "torch.bit", "torch.float8_*",
         "torch.float4_*", "torch.complex32", "torch.chalf", "torch.Tensor.chalf",
         "torch.nn.functional.scaled_mm", "torch.nn.functional.scaled_grouped_mm",
         "torch.nn.functional.ScalingType", "torch.nn.functional.SwizzleType"]),
    "torch-function-protocol": (
        "the __torch_function__ override protocol (torch.overrides and the has_/handle_"
        "torch_function helpers PyTorch's own Python functions call) and the TorchScript "
        "type hints of nn.functional; ember's tensor subclasses dispatch through the Python "
        "dispatch key instead.",
        ["torch.overrides", "*.has_torch_function*", "*.handle_torch_function",
         "torch.DisableTorchFunction*", "torch.nn.functional.BroadcastingList*",
         "torch.nn.functional.assert_int_or_pair", "torch.nn.functional.boolean_dispatch"]),
    "custom-op-registration": (
        "PyTorch's dispatcher registration API (torch.library, op Tags, dispatch key sets "
        "and guards): ember's operators are defined in its core op table and devices "
        "register kernels through the plugin contract (ember.ops names the ops captured "
        "graphs call).",
        ["torch.library", "torch.Tag", "torch.DispatchKeySet",
         "torch.ExcludeDispatchKeyGuard"]),
    "prototypes": (
        "PyTorch's prototype features (its docs mark them unstable): MaskedTensor and the "
        "masked reductions of torch.masked.",
        ["torch.masked"]),
    "first-class-dims": (
        "functorch's first-class dimensions (Tensor.index binding dims to Dim objects).",
        ["torch.Tensor.index"]),
    "other-devices": (
        "device families ember has no plugin for (IPU, MTIA, MAIA, XLA, HPU).",
        ["torch.mtia", "torch.Tensor.ipu", "torch.Tensor.mtia"]),
    "build-internals": (
        "how PyTorch's own binary is built and loaded (RTLD flags, the C++ ABI, "
        "multiprocessing setup of its C++ runtime, C++ extension helpers).",
        ["torch.USE_GLOBAL_DEPS", "torch.USE_RTLD_GLOBAL_WITH_LIBTORCH",
         "torch.prepare_multiprocessing_environment", "torch.get_file_path",
         "torch.profiler_allow_cudagraph_cupti_lazy_reinit_cuda12", "torch.classproperty",
         "torch.compiled_with_cxx11_abi", "torch.cpp", "torch.cuda.classproperty",
         "torch.cuda.PYTORCH_RELEASES_CODE_CC", "torch.cuda.DEVICE_REQUIREMENT"]),
    "datapipes": (
        "torchdata's DataPipes (deprecated upstream and removed from torchdata): "
        "IterDataPipe/MapDataPipe and their registry and validation decorators.",
        ["torch.utils.data.*DataPipe", "torch.utils.data.DataChunk",
         "torch.utils.data.datapipes", "torch.utils.data.functional_datapipe",
         "torch.utils.data.guaranteed_datapipes_determinism", "torch.utils.data.non_deterministic",
         "torch.utils.data.runtime_validation*", "torch.utils.data.argument_validation",
         "torch.utils.data.graph", "torch.utils.data.graph_settings"]),
    "kineto-profiler": (
        "the legacy autograd profiler's Kineto bindings; ember.profiler is the profiler.",
        ["torch.autograd.DeviceType", "torch.autograd.Profiler*", "torch.autograd.kineto_available",
         "torch.autograd.profiler_legacy", "torch.autograd.profiler_util"]),
    "network-and-packaging": (
        "torch.hub (downloads code and weights from the network), torch.package (hermetic "
        "code archives) and torch.monitor (C++ stat aggregation).",
        ["torch.hub", "torch.package", "torch.monitor"]),
    "cuda-toolkit-features": (
        "features of NVIDIA's toolkit that ember-cuda (PyCUDA kernels, its own allocator) "
        "does not have: CUDA graphs, pluggable allocators and memory pools, green "
        "contexts, cuBLAS/cuSOLVER handles, jiterator, TunableOp, GPUDirect Storage, NCCL "
        "bindings, NVTX ranges and the raw cudart module.",
        ["torch.cuda.CUDAGraph", "torch.cuda.graph*", "torch.cuda.make_graphed_callables",
         "torch.cuda.is_current_stream_capturing", "torch.cuda.CUDAPluggableAllocator",
         "torch.cuda.change_current_allocator", "torch.cuda.MemPool", "torch.cuda.use_mem_pool",
         "torch.cuda.GreenContext", "torch.cuda.green_contexts", "torch.cuda.current_blas_handle",
         "torch.cuda.current_solver_handle", "torch.cuda.jiterator", "torch.cuda.tunable",
         "torch.cuda.gds", "torch.cuda.nccl", "torch.cuda.nvtx", "torch.cuda.cudart",
         "torch.cuda.cudaStatus", "torch.cuda.caching_allocator_*", "torch.cuda.get_gencode_flags",
         "torch.cuda.get_allocator_backend", "torch.cuda.profiler", "torch.cuda.CudaError",
         "torch.cuda.check_error"]),
}

# modules other pieces of work fill (they are "not yet", shown apart in the table)
PENDING: dict = {}

# PyTorch keywords that are not part of its API contract (private spellings)
KEYWORDS = {
    "torch.save": {"_use_new_zipfile_serialization", "_disable_byteorder_record"},
    "torch.serialization.save": {"_use_new_zipfile_serialization", "_disable_byteorder_record"},
}


def _first(table, qualified):
    for key, patterns in table.items():
        if any(fnmatch.fnmatchcase(qualified, p) for p in patterns):
            return key
    return None


# names a broad omission pattern would catch that are not what it omits
# (torch.serialization.StorageType is no TorchScript type)
NOT_OMITTED = {"torch.serialization.StorageType"}


def category(qualified):
    """The omission category of a qualified PyTorch name, or None."""
    if qualified in NOT_OMITTED:
        return None
    return _first({cat: pats for cat, (_, pats) in OMITTED.items()}, qualified)


def pending(qualified):
    """The piece of work that owns a missing name, or None."""
    return _first(PENDING, qualified)


def ignored_keywords(qualified):
    return KEYWORDS.get(qualified, set())
