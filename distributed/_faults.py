"""What happens when a wait runs out of time, or a rank dies of an exception.

A rank whose wait expires asks the ranks it waits on, over a communicator of its own, what they
are doing; ranks answer while they poll in any wait.  The error then names the ranks that did
not answer (busy outside ember.distributed, hung or dead) and those waiting in another
operation.  An uncaught exception on a rank of a multi-rank job aborts the whole MPI job, so
the other ranks do not wait for it (and ``mpiexec`` returns non-zero)."""
import json
import os
import sys
import time
import traceback

from . import _mpi

__all__ = ["DistBackendError", "DistError", "DistNetworkError", "DistStoreError"]

_QUERY, _REPLY = 1, 2
_GRACE_S = 0.5


class DistError(RuntimeError):
    """An error of the distributed package."""


class DistBackendError(DistError):
    """A collective or point-to-point operation failed (a timeout, a mismatch, MPI)."""


class DistNetworkError(DistError):
    """A network error."""


class DistStoreError(DistError):
    """A store error."""


for _cls in (DistError, DistBackendError, DistNetworkError, DistStoreError):
    _cls.__module__ = "ember.distributed"        # where users name them


class Control:
    """The liveness channel: a world communicator on which ranks ask each other what they
    are doing.  ``doing`` describes the wait this rank is in (None outside waits)."""

    def __init__(self, comm):
        self.comm = comm
        self.rank = comm.Get_rank()
        self.doing = None            # a Work (its ``_doing`` describes it) or None
        self._in_flight = []
        self._asked = 0

    def answer(self):
        """Reply to every query that has arrived."""
        MPI = _mpi.mpi()
        status = MPI.Status()
        while self.comm.Iprobe(MPI.ANY_SOURCE, _QUERY, status):
            src = status.Get_source()
            query = self.comm.recv(source=src, tag=_QUERY)
            doing = None if self.doing is None else self.doing._doing
            self._in_flight.append(self.comm.isend((query, doing), dest=src, tag=_REPLY))
        self._in_flight = [r for r in self._in_flight if not r.Test()]

    def ask(self, ranks, grace=_GRACE_S):
        """{rank: what it is doing} for those of ``ranks`` (world ranks) that answer."""
        MPI = _mpi.mpi()
        self._asked += 1
        qid = (self.rank, self._asked)
        self._in_flight += [self.comm.isend(qid, dest=r, tag=_QUERY) for r in ranks]
        answers = {}
        status = MPI.Status()
        deadline = time.monotonic() + grace
        while len(answers) < len(ranks) and time.monotonic() < deadline:
            self.answer()
            while self.comm.Iprobe(MPI.ANY_SOURCE, _REPLY, status):
                src = status.Get_source()
                got, doing = self.comm.recv(source=src, tag=_REPLY)
                if got == qid:
                    answers[src] = doing
            time.sleep(0.001)
        return answers


def stall_error(control, doing, peers, waited_s):
    """The DistBackendError for a wait on ``doing`` (a description) that expired, naming the
    ``peers`` (world ranks) that hold it up."""
    answers = control.ask(peers)
    blame = []
    for r in peers:
        if r not in answers:
            blame.append(f"rank {r} did not answer (busy outside ember.distributed, hung or "
                         f"dead)")
        elif answers[r] is None:
            blame.append(f"rank {r} is not waiting in any operation")
        elif answers[r] != doing:
            blame.append(f"rank {r} is waiting in {answers[r]}")
    if not blame:
        blame = ["every rank answered and is waiting in it (MPI made no progress)"]
    return DistBackendError(f"{doing} timed out after {waited_s:.1f} s on rank {control.rank}: "
                            + "; ".join(blame))


_installed = False


def install_abort_on_uncaught_exception():
    """An uncaught exception prints its traceback, leaves an error record where the launcher
    asked for one (TORCHELASTIC_ERROR_FILE), and aborts the MPI job: the other ranks would
    otherwise wait for this one, and MPI's finalisation at exit would hang."""
    global _installed
    if _installed:
        return
    _installed = True
    previous = sys.excepthook
    rank_pid = os.getpid()          # a forked child (a DataLoader worker) must not abort

    def hook(exc_type, exc, tb):
        previous(exc_type, exc, tb)
        if os.getpid() != rank_pid:
            return
        _write_error_file(exc_type, exc, tb)
        MPI = _mpi.mpi()
        abort = MPI.Is_initialized() and not MPI.Is_finalized() and MPI.COMM_WORLD.Get_size() > 1
        if abort:
            # said here, flushed before the abort: MPI's own "MPI_Abort" line races the
            # launcher's teardown and is sometimes lost
            print(f"ember.distributed: rank {MPI.COMM_WORLD.Get_rank()} raised "
                  f"{exc_type.__name__}; aborting the job (MPI_Abort)", file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        if abort:
            MPI.COMM_WORLD.Abort(1)

    sys.excepthook = hook


def _write_error_file(exc_type, exc, tb):
    path = os.environ.get("TORCHELASTIC_ERROR_FILE")
    if not path:
        return
    record = {"message": {"message": f"{exc_type.__name__}: {exc}",
                          "extraInfo": {"py_callstack": "".join(
                              traceback.format_exception(exc_type, exc, tb)),
                              "timestamp": str(int(time.time()))}}}
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "w") as fh:
            json.dump(record, fh)
    except OSError:
        pass
