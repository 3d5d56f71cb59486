"""ember's plugin hooks for the "cpu" device type (the ``ember.backends`` entry point).

Imported at ``import ember``: registration only.  The compiled kernels load at the first
use of the device (``ember_kernel_table``) and SciPy's BLAS at the first matmul.
"""

from ember.backends.hookspecs import DeviceSpec, hookimpl

DEVICE_TYPE = "cpu"


@hookimpl
def ember_devices():
    return [DeviceSpec(DEVICE_TYPE, "host CPU: OpenMP kernels, BLAS matmul")]


@hookimpl
def ember_device_module(device_type):
    if device_type != DEVICE_TYPE:
        return None
    from ember_cpu import runtime

    return runtime


@hookimpl
def ember_kernel_table(device_type):
    if device_type != DEVICE_TYPE:
        return None
    from ember_cpu import _kernels

    return _kernels.kernel_table()


@hookimpl
def ember_set_num_threads(num_threads):
    from ember_cpu import _threads

    _threads.set_num_threads(num_threads)


@hookimpl
def ember_get_num_threads():
    from ember_cpu import _threads

    return _threads.get_num_threads()


@hookimpl
def ember_build_info():
    from ember_cpu import _kernels

    return (f"OpenMP {'yes' if _kernels._openmp_enabled() else 'no'}, BLAS through "
            "scipy.linalg.cython_blas (loaded at the first matmul)")


@hookimpl
def ember_nondeterministic_kernels(device_type):
    if device_type != DEVICE_TYPE:
        return None
    # reductions combine fixed-size blocks in a fixed order; index kernels give each output
    # element to one thread: every kernel gives the same bits at any thread count
    return []


@hookimpl
def ember_kernel_codegen(device_type):
    if device_type != DEVICE_TYPE:
        return None
    from ember_cpu.codegen import CKernelCodegen

    return CKernelCodegen()
