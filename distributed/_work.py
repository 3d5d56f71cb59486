"""Work: one operation in flight over MPI's non-blocking calls.

An operation is a list of phases.  A phase starts MPI requests and says what to do once they
complete: nothing, check something (raise on a mismatch), add phases (the description of a
mismatch is one more exchange), or write results back into tensors.  Collectives queue on
their group so that every rank starts their phases in the same order; point-to-point work
starts at once."""
import datetime
import time

from . import _mpi
from ._faults import DistBackendError, stall_error
from ._process_group import _world

__all__ = ["Work"]


class Phase:
    """``start()`` returns the MPI requests it started; ``then()``, once they completed, may
    return more phases to run next (or raise: the operation fails with that error)."""

    __slots__ = ("start", "then")

    def __init__(self, start, then=None):
        self.start = start
        self.then = then


class Work:
    """An operation started with ``async_op=True``: ``wait()`` blocks until it completes
    (raising its error, if any), ``is_completed()`` asks without blocking."""

    def __init__(self, pg, doing, phases, peers, outputs=(), queued=True):
        self._pg = pg
        self._what = doing                      # ("all_reduce", 3) or a description
        self._phases = list(phases)
        self._peers = peers                     # world ranks this op waits on (for blame)
        self._outputs = list(outputs)
        self._requests = None
        self._then = None
        self._done = False
        self._exception = None
        self._source_rank = -1
        self._start = time.monotonic()
        self._queued = queued
        self._in_queue = queued
        if queued:                  # else the caller starts it with _advance()
            pg._queue.append(self)
            pg._progress()

    @property
    def _doing(self):
        """What this operation is, for messages: ``all_reduce (#3 on the default group)``."""
        if isinstance(self._what, tuple):
            self._what = self._pg._describe(*self._what)
        return self._what

    # the phase machine
    def _advance(self):
        """Start phases as far as completed requests allow; True once the last phase has
        started (the group's next operation may then start its own)."""
        try:
            while True:
                if self._requests is not None:
                    if not _mpi.testall(self._requests):
                        return False
                    self._requests = None
                    then, self._then = self._then, None
                    more = then() if then is not None else None
                    if more:
                        self._phases[:0] = more
                if not self._phases:
                    self._done = True
                    return True
                phase = self._phases.pop(0)
                self._requests = list(phase.start())
                self._then = phase.then
                if not self._phases and self._queued:
                    return True
        except Exception as exc:
            self._fail(exc)
            return True

    def _adopt(self, requests, then):
        """Take over a phase already started (its ``requests``) and ``then``."""
        self._requests, self._then = requests, then

    def _fail(self, exc):
        self._exception = dist_error(exc, self)
        self._requests = None
        self._phases = []
        self._done = True

    def _poll(self):
        if self._done:
            return True
        if self._in_queue:
            self._pg._progress()
            if self._in_queue:
                return False
        self._advance()
        return self._done

    def _wait(self, timeout_s=None):
        control = _world.control
        limit = self._pg._timeout_s if timeout_s is None else timeout_s
        if not self._done:
            if self._pg._broken is not None:
                self._fail(DistBackendError(f"{self._doing}: the process group is unusable "
                                            f"after an earlier failure: {self._pg._broken}"))
            else:
                previous = control.doing
                control.doing = self
                try:
                    _mpi.poll_until(self._poll, self._start + limit, self._timed_out,
                                    control.answer)
                finally:
                    control.doing = previous
        if self._exception is not None:
            raise self._exception

    def _timed_out(self):
        exc = stall_error(_world.control, self._doing, self._peers,
                          time.monotonic() - self._start)
        self._pg._broken = str(exc)
        self._fail(exc)
        raise exc

    # PyTorch's Work
    def wait(self, timeout=datetime.timedelta(0)):
        """Block until the operation completes (``timeout``: a timedelta; 0 means the
        group's timeout); raises the operation's error.  Returns True."""
        seconds = timeout.total_seconds() if isinstance(timeout, datetime.timedelta) \
            else float(timeout)
        self._wait(None if seconds <= 0 else seconds)
        return True

    def is_completed(self):
        """Whether the operation has completed (without blocking)."""
        return self._poll()

    def is_success(self):
        """Whether it completed without an error."""
        return self._poll() and self._exception is None

    def exception(self):
        """The operation's error, or None."""
        self._poll()
        return self._exception

    def source_rank(self):
        """The rank a ``irecv`` without ``src`` received from."""
        if not self._poll():
            raise RuntimeError("source_rank(): the receive has not completed yet: call "
                               "wait() first")
        return self._source_rank

    def result(self):
        """The operation's output tensors."""
        self.wait()
        return list(self._outputs)

    def synchronize(self):
        self.wait()

    def get_future(self):
        """An ``ember.futures.Future`` completed with the operation's output tensors (a
        list) once it completes, or with its error.  MPI progresses inside calls made by
        this process, so the future completes when it (or one chained from it) is asked:
        ``wait()``, ``done()``, ``value()``."""
        from ember.futures import _of_work
        return _of_work(self)

    def __repr__(self):
        state = "completed" if self._done else "in flight"
        return f"<Work {self._doing}: {state}>"


def dist_error(exc, work):
    """``exc`` as the operation's error: MPI's errors become DistBackendError naming it."""
    if not isinstance(exc, (DistBackendError, ValueError, TypeError)) and \
            type(exc).__module__.startswith("mpi4py"):
        return DistBackendError(f"{work._doing} failed in MPI: {exc}")
    return exc


def run(work, async_op):
    """The Work itself for ``async_op``; else wait for it (None, as PyTorch's)."""
    if async_op:
        return work
    work._wait()
    return None
