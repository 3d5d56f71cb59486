"""Small public types: ReduceOp and Backend, as PyTorch's ``torch.distributed`` names them."""
import enum

__all__ = ["Backend", "ReduceOp"]


class ReduceOp:
    """How a reduction combines the ranks' values: ``ReduceOp.SUM``, ``AVG``, ``PRODUCT``,
    ``MIN``, ``MAX``, ``BAND``, ``BOR``, ``BXOR`` (each a ``ReduceOp.RedOpType``)."""

    class RedOpType(enum.IntEnum):
        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8

    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM

    def __init__(self, op=RedOpType.SUM):
        self.op = ReduceOp.RedOpType(op)

    def __eq__(self, other):
        other = other.op if isinstance(other, ReduceOp) else other
        return self.op == other

    def __hash__(self):
        return hash(self.op)

    def __repr__(self):
        return f"ReduceOp({self.op.name})"


def _red_op_type(op, fn):
    """``op`` (a RedOpType, a ReduceOp or its int) as a RedOpType; a TypeError otherwise."""
    if type(op) is ReduceOp.RedOpType:
        return op
    if isinstance(op, ReduceOp):
        return op.op
    if isinstance(op, int) and not isinstance(op, bool):
        try:
            return ReduceOp.RedOpType(op)
        except ValueError:
            pass
    raise TypeError(f"{fn}(): argument 'op' must be a ReduceOp, not {type(op).__name__}")


class Backend(str):
    """A backend name (``Backend("GLOO") == "gloo"``).  Every backend runs on MPI in ember:
    ``"mpi"``, ``"gloo"`` and ``"nccl"`` are accepted so that unmodified scripts run."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    XCCL = "xccl"

    backend_list = [UNDEFINED, GLOO, NCCL, UCC, MPI, XCCL]
    default_device_backend_map = {"cpu": GLOO, "cuda": NCCL}

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError("Backend constructor parameter must be string-ish")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.UNDEFINED:
            value = name.lower()
        return super().__new__(cls, value)


_KNOWN_BACKENDS = {Backend.MPI, Backend.GLOO, Backend.NCCL, Backend.UCC, Backend.XCCL}


def _parse_backend(backend):
    """The backend string ``init_process_group`` was given, checked ("mpi" when None)."""
    if backend is None:
        return Backend.MPI
    if not isinstance(backend, str):
        raise ValueError("Backend constructor parameter must be string-ish")
    # "cpu:gloo,cuda:nccl": each device's backend
    names = [part.split(":")[-1] for part in backend.lower().split(",")]
    for n in names:
        if n not in _KNOWN_BACKENDS:
            raise ValueError(f"Invalid backend: '{backend}' (ember.distributed runs every "
                             f"backend on MPI; it accepts {sorted(_KNOWN_BACKENDS)})")
    return str(Backend(backend)) if len(names) == 1 else backend.lower()
