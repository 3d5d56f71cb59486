"""Tensors as host memory MPI can read and write, and reductions over every ember dtype.

A contiguous CPU tensor is handed to MPI as its own memory (a NumPy view of its address).  Anything
else — a strided view, a tensor on another device — is staged through a contiguous host copy
that ``commit()`` writes back.  Payloads that only move travel as bytes, so every dtype moves
the same way; reductions need a typed buffer: float16 and bfloat16 are reduced in float32 (MPI
has no half types) and rounded back once, bool is reduced as 0/1 bytes."""
import numpy as np

import ember

from . import _mpi
from ._types import ReduceOp

__all__ = []

_R = ReduceOp.RedOpType
_HALF = ("float16", "bfloat16")
_MPI_TYPE = {"float32": "FLOAT", "float64": "DOUBLE", "int8": "INT8_T", "int16": "INT16_T",
             "int32": "INT32_T", "int64": "INT64_T", "uint8": "UINT8_T", "bool": "UINT8_T",
             "complex64": "C_FLOAT_COMPLEX", "complex128": "C_DOUBLE_COMPLEX",
             "float16": "FLOAT", "bfloat16": "FLOAT"}      # halves: reduced in float32
_MPI_OP = {_R.SUM: "SUM", _R.AVG: "SUM", _R.PRODUCT: "PROD", _R.MIN: "MIN", _R.MAX: "MAX",
           _R.BAND: "BAND", _R.BOR: "BOR", _R.BXOR: "BXOR"}
# bool as 0/1 bytes: a sum is an "or", a product an "and" (PyTorch's results for bool)
_BOOL_OP = {_R.SUM: "MAX", _R.PRODUCT: "MIN", _R.MIN: "MIN", _R.MAX: "MAX", _R.BAND: "BAND",
            _R.BOR: "BOR", _R.BXOR: "BXOR"}


def host_dtype(dtype):
    """The NumPy dtype that holds ``dtype``'s bits on the host (bfloat16: int16)."""
    return np.dtype(np.int16) if dtype == ember.bfloat16 else dtype.np_dtype


class Host:
    """``tensor``'s values as a contiguous host array (``array``); ``reduce_dtype``: stage
    them converted (float32 for halves); ``load``: copy the values in (False for outputs)."""

    __slots__ = ("tensor", "array", "_staged")

    def __init__(self, tensor, reduce=False, load=True):
        t = tensor.detach()
        self.tensor = t
        self._staged = None
        if reduce and t.dtype.name in _HALF:
            src = t.to(device="cpu", dtype=ember.float32) if load else \
                ember.empty(t.shape, dtype=ember.float32)
            self._staged = src.contiguous()
            self.array = self._staged.numpy().reshape(-1)
            return
        if t.is_cpu and t.is_contiguous() and t.numel():
            # a view of the tensor's own memory (``.numpy()`` costs ~2 us a call, this 0.3)
            nbytes = t.numel() * t.element_size()
            self.array = np.frombuffer(_mpi.mpi().buffer.fromaddress(t.data_ptr(), nbytes),
                                       host_dtype(t.dtype))
            return
        if load:
            staged = t.to("cpu").contiguous()
        else:
            staged = ember.empty(t.shape, dtype=t.dtype)
        self._staged = staged
        view = staged.view(ember.int16) if staged.dtype == ember.bfloat16 else staged
        self.array = view.numpy().reshape(-1)

    def commit(self):
        """Write staged results back into the tensor (nothing to do when MPI wrote it)."""
        if self._staged is not None:
            with ember.no_grad():
                self.tensor.copy_(self._staged)

    def raw(self):
        """[bytes, MPI.BYTE]: the payload as bytes, for operations that only move data."""
        return [self.array.view(np.uint8), _mpi.mpi().BYTE]


def as_tensor(array, like):
    """A CPU tensor sharing ``array``'s memory, with ``like``'s dtype and shape."""
    t = ember.from_numpy(array)
    if like.dtype == ember.bfloat16:
        t = t.view(ember.bfloat16)
    return t.view(like.shape)


def write_into(tensor, array):
    """Copy host ``array`` (``tensor``'s dtype, any shape of its size) into ``tensor``."""
    with ember.no_grad():
        tensor.detach().copy_(as_tensor(array, tensor))


def check_reduce(dtype, op, fn):
    """Raise for a reduction MPI or PyTorch cannot do on ``dtype``."""
    name = dtype.name
    if op == _R.PREMUL_SUM:
        raise ValueError(f"{fn}(): ReduceOp.{op.name} is not supported by ember.distributed")
    if op in (_R.BAND, _R.BOR, _R.BXOR) and (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"{fn}(): ReduceOp.{op.name} needs an integer or bool tensor, got "
                         f"{dtype}")
    if dtype.is_complex and op in (_R.MIN, _R.MAX):
        raise ValueError(f"{fn}(): ReduceOp.{op.name} is not defined for complex tensors "
                         f"({dtype})")
    if name == "bool" and op == _R.AVG:
        raise ValueError(f"{fn}(): ReduceOp.AVG is not defined for bool tensors")


def reduce_buffer(host, dtype, op):
    """[array, MPI datatype] and the MPI.Op reducing ``host``'s values with ``op``."""
    return reduce_array(host.array, dtype, op)


def reduce_array(array, dtype, op):
    """``reduce_buffer`` of a host array of ``dtype``'s values."""
    MPI = _mpi.mpi()
    name = dtype.name
    mpi_op = _BOOL_OP[op] if name == "bool" else _MPI_OP[op]
    array = array.view(np.uint8) if name == "bool" else array
    return [array, getattr(MPI, _MPI_TYPE[name])], getattr(MPI, mpi_op)


_LOCAL = {_R.SUM: np.add, _R.AVG: np.add, _R.PRODUCT: np.multiply, _R.MIN: np.minimum,
          _R.MAX: np.maximum, _R.BAND: np.bitwise_and, _R.BOR: np.bitwise_or,
          _R.BXOR: np.bitwise_xor}
_LOCAL_BOOL = {**_LOCAL, _R.SUM: np.maximum, _R.PRODUCT: np.minimum}


def reduce_rows(host, dtype, op, rows):
    """Reduce ``rows`` (one row of bytes per rank, each ``host``'s values) with ``op`` into
    ``host.array``, in rank order (every rank computes the same bits)."""
    out = host.array
    combine_rows(local_ufunc(dtype, op), rows.view(out.dtype), out)


def local_ufunc(dtype, op):
    """The NumPy ufunc that combines two ranks' values of ``dtype`` with ``op``."""
    return (_LOCAL_BOOL if dtype.name == "bool" else _LOCAL)[op]


def combine_rows(ufunc, table, out):
    """``out`` = the rows of ``table`` (one per rank) combined with ``ufunc`` in rank order."""
    if len(table) == 2:
        ufunc(table[0], table[1], out=out)
    else:
        ufunc.reduce(table, axis=0, out=out)


def average(array, n):
    """Divide the summed ``array`` in place by the group size (integers truncate, as
    PyTorch's AVG does)."""
    if array.dtype.kind in "fc":
        array /= n
    else:
        np.copyto(array, np.sign(array) * (np.abs(array) // n), casting="unsafe")
