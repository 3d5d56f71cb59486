# cython: language_level=3
"""The toy device's compiled kernels: the C in toy_kernels.h, handed to ember as a capsule."""
from cpython.pycapsule cimport PyCapsule_New
from libc.stdint cimport int64_t


cdef extern from "toy_kernels.h":
    ctypedef struct ember_kernel_table:
        pass
    const char* EMBER_KERNEL_TABLE_CAPSULE
    ember_kernel_table toy_table
    int64_t toy_allocations()


# one capsule for the life of the process; the table it points to is a static C global
_capsule = PyCapsule_New(&toy_table, EMBER_KERNEL_TABLE_CAPSULE, NULL)


def kernel_table():
    """The PyCapsule ("ember.kernel_table") holding this plugin's ember_kernel_table."""
    return _capsule


def allocations():
    """How many times ember called this plugin's `alloc`."""
    return toy_allocations()
