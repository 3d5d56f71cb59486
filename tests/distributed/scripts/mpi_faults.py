"""Faults, one per mode (``mpiexec -n 2 python mpi_faults.py MODE [ARG]``):

- timeouts: the ranks wait in different operations (each fails naming the other's), then a
  rank sleeps past the timeout (rank 0 fails naming rank 1 and the collective; the job is aborted);
- exit: rank 1 dies (os._exit(3)) while rank 0 waits in a collective;
- raise: rank 1 raises while rank 0 waits in a collective;
- checkpoint PATH: rank 0 saves checkpoints behind barriers while rank 1 dies.
"""
import datetime
import os
import sys
import time

import ember.distributed as dist
from _harness import RESULTS, check, report

import ember

MODE = sys.argv[1]
LONG = datetime.timedelta(seconds=60)     # the job must end long before this
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=2) if MODE == "timeouts"
                        else LONG)
R = dist.get_rank()
START = time.monotonic()


def stall_in_different_operations():
    # rank 1 waits longer, so rank 0's diagnosis finds it still waiting in its recv, and rank
    # 1's finds rank 0 in the barrier that follows
    pair = dist.new_group([0, 1], timeout=datetime.timedelta(seconds=2 + R))
    t0 = time.monotonic()
    try:
        if R == 0:
            dist.all_reduce(ember.ones(3), group=pair)
        else:
            dist.recv(ember.zeros(3), src=0, group=pair)
    except dist.DistBackendError as e:
        RESULTS["stall.error"] = str(e)
        RESULTS["stall.seconds"] = time.monotonic() - t0
    try:
        dist.barrier(group=pair)
    except RuntimeError as e:
        RESULTS["stall.broken_group"] = str(e)
    dist.barrier()


def sleeper():
    t0 = time.monotonic()
    if R == 1:
        report(R)
        time.sleep(30)
    try:
        dist.all_reduce(ember.ones(3))
    except RuntimeError as e:
        RESULTS["sleep.error"] = f"{type(e).__name__}: {e}"
        RESULTS["sleep.seconds"] = time.monotonic() - t0
        report(R)
        raise                       # uncaught: the job is aborted, rank 1 does not linger


if MODE == "timeouts":
    stall_in_different_operations()
    sleeper()
elif MODE in ("exit", "raise"):
    t = ember.ones(2)
    dist.all_reduce(t)
    if R == 1:
        print("rank 1 going down", flush=True)
        time.sleep(0.2)
        if MODE == "exit":
            os._exit(3)
        raise ValueError("rank 1 fails on purpose")
    dist.all_reduce(t)               # rank 0 waits here: the job must end anyway
    print("rank 0 must not get here", flush=True)
elif MODE == "checkpoint":
    path = sys.argv[2]
    for i in range(1000):
        if R == 0:
            ember.save({"step": i, "weights": ember.full((1_000_000,), float(i))}, path)
        elif i == 3:
            time.sleep(0.005)
            os._exit(3)
        dist.barrier()
else:
    @check("unknown mode")
    def _():
        raise ValueError(MODE)
    report(R)
