"""ember's plugin hooks for the "cuda" device type (the ``ember.backends`` entry point).

Imported at ``import ember``: registration only.  The driver, PyCUDA and the compiled
kernel table load when a tensor is first made on "cuda"; without a GPU (or PyCUDA) that
first use raises a RuntimeError naming the reason and the fix."""

from ember.backends.hookspecs import DeviceSpec, hookimpl

DEVICE_TYPE = "cuda"


@hookimpl
def ember_devices():
    return [DeviceSpec(DEVICE_TYPE, "NVIDIA GPUs: CUDA C kernels through PyCUDA, cuBLAS matmul")]


@hookimpl
def ember_device_module(device_type):
    if device_type != DEVICE_TYPE:
        return None
    from ember_cuda import runtime

    return runtime


@hookimpl
def ember_kernel_table(device_type):
    if device_type != DEVICE_TYPE:
        return None
    from ember_cuda import runtime

    why = runtime.unavailable_reason()
    if why:
        raise RuntimeError(f"cannot run ops on 'cuda' tensors: {why}")
    from ember_cuda import _cuda

    return _cuda.kernel_table()


@hookimpl
def ember_nondeterministic_kernels(device_type):
    if device_type != DEVICE_TYPE:
        return None
    # scatter-add and friends add floats with atomics by default and switch to a fixed-order
    # kernel when ember_ctx.deterministic is set: nothing needs to be refused
    return []


@hookimpl
def ember_kernel_codegen(device_type):
    if device_type != DEVICE_TYPE:
        return None
    from ember_cuda.codegen import CudaKernelCodegen

    return CudaKernelCodegen()
