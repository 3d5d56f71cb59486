"""ember.distributed benchmarks, side by side in one run (not a test):

1. all_reduce of float32 tensors, 1 KB to 64 MB, on 2 ranks: ember's all_reduce (with its
   signature check, and without it as DDP's buckets run) against raw mpi4py
   ``comm.Allreduce(IN_PLACE, ...)`` on the same buffers.  Ratio = raw time / ember time
   (1.0: as fast as raw MPI; the goal is >= 0.9).
2. A DistributedDataParallel training step on 2 ranks (half the batch each, one thread each)
   against the single-process step on the same global batch (the whole 2-core machine), and
   the same DDP step under no_sync() (the computation alone, no communication).

    python benchmarks/bench_distributed.py        # starts mpiexec -n 2 itself
"""
import json
import os
import statistics
import subprocess
import sys
import time

import ember

SIZES = [1 << 10, 1 << 14, 1 << 18, 1 << 20, 1 << 22, 1 << 24, 1 << 26]
BATCH, WIDTH, STEPS = 256, 1024, 12


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


def step_time(net, x, y, steps=STEPS, sync=None):
    """Median seconds of one SGD step (forward, backward, update)."""
    opt = ember.optim.SGD(net.parameters(), lr=0.01)
    loss_fn = ember.nn.CrossEntropyLoss()
    times = []
    for _ in range(steps + 2):
        if sync is not None:
            sync()
        t = time.perf_counter()
        opt.zero_grad()
        loss_fn(net(x), y).backward()
        opt.step()
        times.append(time.perf_counter() - t)
    return statistics.median(times[2:])


def single_process():
    """The single-process step on the global batch, with the machine's 2 threads."""
    ember.set_num_threads(2)
    x, y = batch()
    return step_time(model(), x, y)


def interleaved(fns, reps, rounds, barrier):
    """Median seconds per call of each fn, timed in alternating rounds."""
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
    return [statistics.median(s) for s in samples]


def ranks(single_s):
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
        rounds = 7 if size < 1 << 24 else 5
        raw, checked, unchecked = interleaved(
            [lambda: comm.Allreduce(MPI.IN_PLACE, a),
             lambda: dist.all_reduce(t),
             lambda: _collectives._all_reduce_unchecked(t, None).wait()],
            reps, rounds, comm.Barrier)
        rows.append((size, raw, checked, unchecked))
    x, y = batch()
    half = BATCH // world
    xs, ys = x[rank * half:(rank + 1) * half], y[rank * half:(rank + 1) * half]
    ddp = ember.nn.parallel.DistributedDataParallel(model())
    ddp_s = step_time(ddp, xs, ys, sync=comm.Barrier)
    with ddp.no_sync():
        local_s = step_time(ddp, xs, ys, sync=comm.Barrier)
    if rank == 0:
        print(f"all_reduce, float32, {world} ranks (ratio = raw mpi4py time / ember time)")
        print(f"{'size':>8} {'raw mpi4py':>12} {'ember':>12} {'ratio':>7} "
              f"{'unchecked':>12} {'ratio':>7} {'ember GB/s':>11}")
        for size, raw, checked, unchecked in rows:
            print(f"{fmt_bytes(size):>8} {raw * 1e6:10.1f}us {checked * 1e6:10.1f}us "
                  f"{raw / checked:7.2f} {unchecked * 1e6:10.1f}us {raw / unchecked:7.2f} "
                  f"{size / checked / 1e9:11.2f}")
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
        ranks(float(os.environ["BENCH_SINGLE_S"]))
        return
    single_s = single_process()
    mpiexec = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    env = dict(os.environ, BENCH_SINGLE_S=json.dumps(single_s), OMP_NUM_THREADS="1")
    subprocess.run([mpiexec, "-n", "2", sys.executable, os.path.abspath(__file__)], env=env,
                   check=True)


if __name__ == "__main__":
    main()
