"""ember.distributed benchmarks, side by side in one run (not a test):

1. all_reduce of float32 tensors, 1 KB to 64 MB, on 2 ranks: ember's all_reduce (with its
   signature check, and without it as DDP's buckets run) against raw mpi4py on the same
   buffers, ``comm.Allreduce(IN_PLACE, ...)`` and ``comm.Iallreduce(IN_PLACE, ...).Wait()``.
   Ratio = raw time / ember time (1.0: as fast as raw MPI; the goal is >= 0.9).
2. A DistributedDataParallel training step on 2 ranks (half the batch each, one thread each)
   against the single-process step on the same global batch (rank 0 alone with 2 threads,
   rank 1 asleep), in alternating rounds; and the DDP step under no_sync() (the computation
   alone, no communication).

    python benchmarks/bench_distributed.py        # starts mpiexec -n 2 itself
"""
import os
import subprocess
import sys
import time

import ember

SIZES = [1 << 10, 1 << 14, 1 << 18, 1 << 20, 1 << 22, 1 << 24, 1 << 26]
BATCH, WIDTH, STEPS, ROUNDS = 256, 1024, 3, 7


def fmt_bytes(n):
    return f"{n >> 20} MB" if n >= 1 << 20 else f"{n >> 10} KB"


def model():
    ember.manual_seed(0)
    nn = ember.nn
    return nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.ReLU(), nn.Linear(WIDTH, WIDTH), nn.ReLU(),
                         nn.Linear(WIDTH, 10))


def batch():
    g = ember.Generator()
    g.manual_seed(1)
    return ember.randn(BATCH, WIDTH, generator=g), ember.randint(0, 10, (BATCH,), generator=g)


def stepper(net, x, y):
    """One SGD step (forward, backward, update) of ``net`` on (x, y)."""
    opt = ember.optim.SGD(net.parameters(), lr=0.01)
    loss_fn = ember.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss_fn(net(x), y).backward()
        opt.step()
    return step


def timed(fn, reps):
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t) / reps


def idle_until_released(comm):
    """Rank 1 while rank 0 times the single-process step: sleep, do not spin."""
    buf = bytearray(1)
    req = comm.Irecv(buf, source=0, tag=99)
    while not req.Test():
        time.sleep(0.001)


def interleaved(fns, reps, rounds, barrier):
    """Seconds per call of each fn: the best of alternating rounds (on a shared machine the
    best round is the one the other jobs disturbed least, for every fn alike)."""
    samples = [[] for _ in fns]
    for fn in fns:
        fn()
    for _ in range(rounds):
        for fn, out in zip(fns, samples):
            barrier()
            t = time.perf_counter()
            for _ in range(reps):
                fn()
            out.append((time.perf_counter() - t) / reps)
    return [min(s) for s in samples]


def ranks():
    import ember.distributed as dist
    from ember.distributed import _collectives
    from mpi4py import MPI
    dist.init_process_group("gloo")
    ember.set_num_threads(1)
    rank, world = dist.get_rank(), dist.get_world_size()
    comm = MPI.COMM_WORLD
    rows = []
    for size in SIZES:
        t = ember.ones(size // 4)
        a = t.numpy()
        reps = max(2, min(400, (8 << 20) // size))
        rounds = 15 if size < 1 << 24 else 7
        rows.append((size, *interleaved(
            [lambda: comm.Allreduce(MPI.IN_PLACE, a),
             lambda: comm.Iallreduce(MPI.IN_PLACE, a).Wait(),
             lambda: dist.all_reduce(t),
             lambda: _collectives._all_reduce_unchecked(t, None).wait()],
            reps, rounds, comm.Barrier)))
    # the training step: single-process rounds (rank 0 alone, 2 threads; rank 1 sleeps)
    # alternate with DDP rounds (both ranks, 1 thread each, half the batch each)
    x, y = batch()
    half = BATCH // world
    xs, ys = x[rank * half:(rank + 1) * half], y[rank * half:(rank + 1) * half]
    single = stepper(model(), x, y) if rank == 0 else None
    ddp = ember.nn.parallel.DistributedDataParallel(model())
    ddp_step = stepper(ddp, xs, ys)
    ddp_step()                                  # warm-up
    if single is not None:
        single()
    single_s, ddp_s, local_s = [], [], []
    for _ in range(ROUNDS):
        comm.Barrier()
        if rank == 0:
            ember.set_num_threads(2)
            single_s.append(timed(single, STEPS))
            ember.set_num_threads(1)
            comm.Send(bytearray(1), dest=1, tag=99)
        else:
            idle_until_released(comm)
        comm.Barrier()
        ddp_s.append(timed(ddp_step, STEPS))
        comm.Barrier()
        with ddp.no_sync():
            local_s.append(timed(ddp_step, STEPS))
    single_s, ddp_s, local_s = (min(v) if v else 0.0 for v in (single_s, ddp_s, local_s))
    if rank == 0:
        print(f"all_reduce, float32, {world} ranks: per-call times; ratio = raw time / ember "
              f"time (>= 0.9 is the goal)")
        print(f"{'size':>8} {'Allreduce':>11} {'Iallreduce':>11} {'ember':>11} {'ratio':>6} "
              f"{'ratio vs I':>10} {'unchecked':>11} {'ratio':>6} {'ember GB/s':>10}")
        for size, raw, iraw, checked, unchecked in rows:
            print(f"{fmt_bytes(size):>8} {raw * 1e6:9.1f}us {iraw * 1e6:9.1f}us "
                  f"{checked * 1e6:9.1f}us {raw / checked:6.2f} {iraw / checked:10.2f} "
                  f"{unchecked * 1e6:9.1f}us {raw / unchecked:6.2f} "
                  f"{size / checked / 1e9:10.2f}")
        print("(Allreduce: raw mpi4py's blocking call, what a raw user writes; Iallreduce: "
              "its non-blocking call + Wait, the MPI operation ember polls; unchecked: "
              "ember without the signature all-reduce, as DDP's buckets run)")
        print()
        n_params = sum(p.numel() for p in ddp.parameters())
        print(f"training step, MLP {WIDTH}-{WIDTH}-{WIDTH}-10 ({n_params / 1e6:.1f} M params), "
              f"global batch {BATCH}")
        print(f"  single process, batch {BATCH}, 2 threads:    {single_s * 1e3:8.1f} ms")
        print(f"  DDP, {world} ranks x batch {half}, 1 thread each: {ddp_s * 1e3:8.1f} ms"
              f"   ratio DDP / single = {ddp_s / single_s:.2f}")
        print(f"  same step under no_sync (no communication): {local_s * 1e3:8.1f} ms"
              f"   communication not hidden = {(ddp_s - local_s) * 1e3:.1f} ms")
    dist.destroy_process_group()


def main():
    if "PMI_RANK" in os.environ:
        ranks()
        return
    mpiexec = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    subprocess.run([mpiexec, "-n", "2", sys.executable, os.path.abspath(__file__)],
                   env=dict(os.environ, OMP_NUM_THREADS="1"), check=True)


if __name__ == "__main__":
    main()
