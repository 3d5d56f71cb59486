"""``ember.futures``: PyTorch's ``torch.futures`` — a Future holds the result of an
asynchronous operation (``ember.distributed``'s ``Work.get_future()``, a DDP communication
hook) or one set by hand.

PyTorch completes a Work's future from its communication threads.  ember's collectives
progress inside MPI calls made by this thread, so a future tied to an operation completes
when something asks: ``wait()``, ``done()``, ``value()`` after a wait, or any of those on a
future chained from it (``then``, ``collect_all``) drive the operation and run the callbacks
in order.  A future set by hand runs its callbacks at once, as PyTorch's does."""
import sys
import traceback
from typing import Generic, TypeVar

__all__ = ["Future", "collect_all", "wait_all"]

T = TypeVar("T")
S = TypeVar("S")


class Future(Generic[T]):
    """A value (or an error) that becomes available later.

    Args:
        devices: accepted for PyTorch's signature (the devices whose streams the value's
            tensors use); ember's devices synchronise where they are read.
    """

    def __init__(self, *, devices=None):
        self._done = False
        self._value = None
        self._exception = None
        self._callbacks = []
        self._drive = None          # drive(block): try to complete (an operation, a parent)

    # completion
    def done(self):
        """Whether the value (or an error) is set; never blocks."""
        if not self._done and self._drive is not None:
            self._drive(False)
        return self._done

    def wait(self):
        """Block until the future completes; its value, or raise its error."""
        if not self._done and self._drive is not None:
            self._drive(True)
        if not self._done:
            raise RuntimeError("Future.wait(): this future is not tied to an operation and "
                               "has no value yet: nothing can complete it while waiting "
                               "(call set_result or set_exception first)")
        return self.value()

    def value(self):
        """The value of a completed future (raises its error); RuntimeError before that."""
        if not self._done:
            self.done()
        if not self._done:
            raise RuntimeError("Future.value(): the future has not completed yet: call "
                               "wait() first, or read it inside a then() callback")
        if self._exception is not None:
            raise self._exception
        return self._value

    def set_result(self, result):
        """Complete the future with ``result`` and run its callbacks."""
        self._complete(result, None)

    def set_exception(self, result):
        """Complete the future with the error ``result``: ``wait()`` and ``value()`` raise
        it; callbacks still run."""
        if not isinstance(result, BaseException):
            raise AssertionError(f"{result} is of type {type(result)}, not an Exception.")
        self._complete(None, result)

    def _complete(self, value, exception):
        if self._done:
            raise RuntimeError("Attempting to mark a completed Future as complete again. Note "
                               "that a Future can only be marked completed once.")
        self._value, self._exception, self._done = value, exception, True
        self._drive = None
        callbacks, self._callbacks = self._callbacks, []
        for fn in callbacks:
            fn(self)

    # chaining
    def then(self, callback):
        """A new future holding ``callback(self)``'s result once this future completes
        (``callback`` runs even if this one failed; an error it raises is the new future's
        error, a RuntimeError naming it, as PyTorch's)."""
        child = Future()

        def run(fut):
            try:
                result = callback(fut)
            except Exception as exc:
                child._complete(None, _callback_error(exc))
            else:
                child._complete(result, None)

        child._drive = self._drive_from_child
        self._add(run)
        return child

    def add_done_callback(self, callback):
        """Run ``callback(self)`` when the future completes (at once if it has); an error it
        raises is reported and ignored."""
        def run(fut):
            try:
                callback(fut)
            except Exception as exc:
                print(_callback_error(exc), file=sys.stderr)
        self._add(run)

    def _add(self, run):
        if self._done:
            run(self)
        else:
            self._callbacks.append(run)

    def _drive_from_child(self, block):
        if not self._done and self._drive is not None:
            self._drive(block)

    def __repr__(self):
        state = "done" if self._done else "pending"
        return f"<ember.futures.Future ({state})>"


def _callback_error(exc):
    where = "".join(traceback.format_tb(exc.__traceback__))
    err = RuntimeError(f"Got the following error when running the callback: "
                       f"{type(exc).__name__}: {exc}\n\nAt:\n{where}")
    err.__cause__ = exc
    return err


def _of_work(work):
    """The future of an ``ember.distributed`` Work: its output tensors once it completes."""
    fut = Future()

    def drive(block):
        if block:
            try:
                work._wait()
            except Exception:        # the future carries the error
                pass
        elif not work._poll():
            return
        if not fut._done:
            if work._exception is not None:
                fut._complete(None, work._exception)
            else:
                fut._complete(list(work._outputs), None)

    fut._drive = drive
    return fut


def collect_all(futures):
    """A future completed once every future of ``futures`` has; its value is that list."""
    if not isinstance(futures, (list, tuple)) or \
            not all(isinstance(f, Future) for f in futures):
        raise TypeError(f"collect_all(): expected a list of ember.futures.Future, got "
                        f"{futures!r}")
    futures = list(futures)
    out = Future()
    pending = [len(futures)]

    def one_done(_):
        pending[0] -= 1
        if pending[0] == 0:
            failed = next((f for f in futures if f._exception is not None), None)
            if failed is None:
                out._complete(futures, None)
            else:
                out._complete(None, failed._exception)

    def drive(block):
        for f in futures:
            if block:
                if not f._done and f._drive is not None:
                    f._drive(True)
            elif not f.done():
                return

    if futures:
        out._drive = drive
        for f in futures:
            f._add(one_done)
    else:
        out._complete([], None)
    return out


def wait_all(futures):
    """Wait for every future of ``futures``; their values (raises the first error)."""
    collect_all(futures).wait()
    return [f.value() for f in futures]
