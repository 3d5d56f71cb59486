"""The MPI runtime underneath ember.distributed: mpi4py, imported on first use (never at
``import ember``), and the loop that waits on MPI requests against a deadline.

Every wait polls non-blocking requests instead of blocking in MPI, so that a peer that never
arrives costs this rank its timeout, not a hang.  MPICH progresses non-blocking operations only
inside MPI calls, so the loop keeps testing (a blocking MPI call spins the same way) and starts
yielding the core only once a wait has lasted a while."""
import importlib.util
import time

__all__ = []

_MPI = None
_YIELD_AFTER_S = 0.02       # a wait longer than this is mostly a late peer: share the core
_NAP_AFTER_S = 0.2          # ... and past this, nap between polls
_NAP_S = 0.0002


def available():
    """mpi4py can be imported (checked without importing it)."""
    return importlib.util.find_spec("mpi4py") is not None


def mpi():
    """mpi4py's MPI module, initialising MPI on the first call."""
    global _MPI
    if _MPI is None:
        if not available():
            raise RuntimeError(
                "ember.distributed runs on MPI through mpi4py, which is not installed: "
                "pip install mpi4py mpich (or pip install 'ember[distributed]')")
        from mpi4py import MPI
        _MPI = MPI
    return _MPI


def testall(requests):
    """True once every request in the list is complete (drives MPI's progress)."""
    if len(requests) == 1:
        return requests[0].Test()
    return _MPI.Request.Testall(requests)


def poll_until(done, deadline, on_timeout, idle=None):
    """Call ``done()`` until it answers True; past ``deadline`` (time.monotonic) call
    ``on_timeout()``, which raises.  ``idle()`` runs every few hundred polls (answering
    peers' liveness queries)."""
    if done():
        return
    start = time.monotonic()
    n = 0
    while not done():
        n += 1
        if n & 255:
            continue
        now = time.monotonic()
        if idle is not None:
            idle()
        if now > deadline:
            on_timeout()
        waited = now - start
        if waited > _NAP_AFTER_S:
            time.sleep(_NAP_S)
        elif waited > _YIELD_AFTER_S:
            time.sleep(0)
