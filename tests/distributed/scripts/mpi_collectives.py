"""Every collective and every dtype against NumPy, async forms, staging (strided views, the
reference device), mismatches and argument errors.  Run under ``mpiexec -n 2``."""
import datetime

import ember.distributed as dist
import numpy as np
from _harness import bf16, check, raises, report

import ember
from ember.utils.data import DistributedSampler

dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=20))
R, W = dist.get_rank(), dist.get_world_size()
RO = dist.ReduceOp
DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64",
          "uint8", "bool", "complex64", "complex128"]
OPS = ["SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"]
HALF = ("float16", "bfloat16")


def dt(name):
    return getattr(ember, name)


def values(name, rank, n=12):
    """Rank ``rank``'s input, as NumPy values of the dtype (float32 for halves)."""
    base = np.arange(n) % 5 + 1 + rank
    if name == "bool":
        return (np.arange(n) + rank) % 3 == 0
    if name == "uint8":
        return base.astype(np.uint8)
    if name.startswith("int"):
        return (base - 3).astype(name)
    if name in HALF:
        return (base * 0.5 - 1).astype(np.float32)
    if name.startswith("complex"):
        return (base - 2.5 + 1j * (base - 1)).astype(name)
    return ((base - 3) * 0.75 + 0.125 * rank).astype(name)


def tensor(name, arr):
    t = ember.tensor(arr.astype(np.float32)) if name in HALF else ember.from_numpy(arr.copy())
    return t.to(dt(name))


def host(t):
    return t.to(ember.float32).numpy() if t.dtype.name in HALF else t.numpy()


def rounded(name, a):
    if name == "float16":
        return a.astype(np.float16).astype(np.float32)
    if name == "bfloat16":
        return bf16(a)
    return a


def expected(name, op, arrays):
    a = np.stack(arrays)
    if name == "bool":
        f = {"SUM": np.any, "PRODUCT": np.all, "MIN": np.all, "MAX": np.any, "BAND": np.all,
             "BOR": np.any, "BXOR": lambda x, axis: np.logical_xor.reduce(x, axis=axis)}[op]
        return f(a, axis=0)
    if op == "AVG":
        s = a.sum(0)
        if np.issubdtype(a.dtype, np.integer):
            return (np.sign(s) * (np.abs(s) // len(arrays))).astype(a.dtype)
        return rounded(name, (s / len(arrays)).astype(a.dtype))
    f = {"SUM": lambda x: x.sum(0), "PRODUCT": lambda x: x.prod(0), "MIN": lambda x: x.min(0),
         "MAX": lambda x: x.max(0), "BAND": lambda x: np.bitwise_and.reduce(x, 0),
         "BOR": lambda x: np.bitwise_or.reduce(x, 0),
         "BXOR": lambda x: np.bitwise_xor.reduce(x, 0)}[op]
    return rounded(name, f(a).astype(a.dtype))


def valid(name, op):
    if op in ("BAND", "BOR", "BXOR"):
        return not (name.startswith(("float", "complex")) or name in HALF)
    if op in ("MIN", "MAX"):
        return not name.startswith("complex")
    return not (name == "bool" and op == "AVG")


def same(got, want):
    np.testing.assert_allclose(got.astype(want.dtype) if got.dtype != want.dtype else got,
                               want, rtol=1e-6, atol=0)


everyone = [values(n, r) for n in DTYPES for r in range(W)]
for name in DTYPES:
    ins = [values(name, r) for r in range(W)]
    for op in OPS:
        @check(f"all_reduce.{name}.{op}")
        def _():
            t = tensor(name, ins[R])
            if not valid(name, op):
                raises(ValueError, lambda: dist.all_reduce(t, op=getattr(RO, op)),
                       match="all_reduce()")
                return
            dist.all_reduce(t, op=getattr(RO, op))
            same(host(t), expected(name, op, ins))

    @check(f"reduce.{name}")
    def _():
        t = tensor(name, ins[R])
        op = "MAX" if valid(name, "MAX") else "SUM"
        dist.reduce(t, dst=1, op=getattr(RO, op))
        same(host(t), expected(name, op, ins) if R == 1 else ins[R])

    @check(f"broadcast.{name}")
    def _():
        t = tensor(name, ins[R])
        dist.broadcast(t, src=1)
        same(host(t), rounded(name, ins[1]))

    @check(f"all_gather.{name}")
    def _():
        out = [tensor(name, ins[R] * 0) for _ in range(W)]
        dist.all_gather(out, tensor(name, ins[R]))
        for r in range(W):
            same(host(out[r]), rounded(name, ins[r]))

    @check(f"all_gather_into_tensor.{name}")
    def _():
        out = tensor(name, np.concatenate([ins[R]] * W) * 0).view(W, -1)
        dist.all_gather_into_tensor(out, tensor(name, ins[R]))
        same(host(out), rounded(name, np.stack(ins)))

    @check(f"reduce_scatter.{name}")
    def _():
        op = "MAX" if valid(name, "MAX") else "SUM"
        chunks = [values(name, R + 10 * j, 4) for j in range(W)]
        out = tensor(name, chunks[0] * 0)
        dist.reduce_scatter(out, [tensor(name, c) for c in chunks], op=getattr(RO, op))
        want = expected(name, op, [values(name, r + 10 * R, 4) for r in range(W)])
        same(host(out), want)

    @check(f"reduce_scatter_tensor.{name}")
    def _():
        whole = np.concatenate([values(name, R + 10 * j, 4) for j in range(W)])
        out = tensor(name, whole[:4] * 0)
        dist.reduce_scatter_tensor(out, tensor(name, whole))
        same(host(out), expected(name, "SUM", [values(name, r + 10 * R, 4) for r in range(W)]))

    @check(f"gather.{name}")
    def _():
        out = [tensor(name, ins[R] * 0) for _ in range(W)] if R == 0 else None
        dist.gather(tensor(name, ins[R]), out, dst=0)
        for r in range(W if R == 0 else 0):
            same(host(out[r]), rounded(name, ins[r]))

    @check(f"scatter.{name}")
    def _():
        out = tensor(name, ins[R] * 0)
        src = [tensor(name, values(name, 7 + r)) for r in range(W)] if R == 1 else None
        dist.scatter(out, src, src=1)
        same(host(out), rounded(name, values(name, 7 + R)))

    @check(f"all_to_all.{name}")
    def _():
        # rank i sends i + j + 1 elements to rank j
        send = [tensor(name, values(name, 100 * R + j, R + j + 1)) for j in range(W)]
        recv = [tensor(name, values(name, 0, j + R + 1) * 0) for j in range(W)]
        dist.all_to_all(recv, send)
        for j in range(W):
            same(host(recv[j]), rounded(name, values(name, 100 * j + R, j + R + 1)))

    @check(f"all_to_all_single.{name}")
    def _():
        # uneven: rank i sends (j + 1) rows of 2 to rank j
        send = np.concatenate([values(name, 10 * R + j, 2 * (j + 1)) for j in range(W)])
        out = tensor(name, np.zeros(2 * W * (R + 1), dtype=send.dtype)).view(-1, 2)
        dist.all_to_all_single(out, tensor(name, send).view(-1, 2),
                               output_split_sizes=[R + 1] * W,
                               input_split_sizes=[j + 1 for j in range(W)])
        want = np.concatenate([values(name, 10 * j + R, 2 * (R + 1)) for j in range(W)])
        same(host(out).reshape(-1), rounded(name, want))


@check("staging.strided_views")
def _():
    base = ember.arange(12, dtype=ember.float32).view(3, 4) * (R + 1)
    t = base.t()                        # not contiguous
    dist.all_reduce(t)
    same(t.numpy(), (np.arange(12, dtype=np.float32).reshape(3, 4) * sum(range(1, W + 1))).T)
    row = ember.zeros(4, 6)[:, 1:3]
    if R == 0:
        row.copy_(ember.ones(4, 2) * 5)
    dist.broadcast(row, src=0)
    same(row.numpy(), np.full((4, 2), 5, np.float32))


@check("protocol.fast_and_general_paths_meet")
def _():
    # rank 0's tensors are contiguous (the prepared fast path, riding in the slot or in two
    # steps past it), the others' strided (the general path): the two speak one protocol
    for rows in (2, 600):                           # 32 bytes, and 9.6 KB (past the slot)
        base = ember.arange(rows * 4, dtype=ember.float32).view(4, rows) * (R + 1)
        t = base.t().contiguous() if R == 0 else base.t()
        dist.all_reduce(t, op=RO.AVG)
        want = np.arange(rows * 4, dtype=np.float32).reshape(4, rows).T * (W + 1) / 2
        same(t.numpy(), want)
        src = ember.full((4, rows), float(R + 7))
        t = src.t().contiguous() if R == 0 else src.t()
        dist.broadcast(t, src=1)
        same(t.numpy(), np.full((rows, 4), 8, np.float32))


@check("protocol.native_path_has_numpys_bits")
def _():
    # the all_reduce's and broadcast's C path (distributed/_fast_mpi.c, built here against
    # the mpich wheel) against NumPy's rank-order combination, bit for bit: rounding of float sums, NaN in
    # MAX/MIN, AVG's division, wrapping integer sums; the (dtype, op) pairs it leaves to
    # Python (products, bytes, bool); payloads in the slot and past it (MPI's all-reduce)
    from ember.distributed import _native
    assert _native.get() is not None, "the C path did not build"
    rng = [np.random.default_rng(100 + r) for r in range(W)]
    for n, name, op in [(n, name, op) for n in (37, 3000)     # in the slot, and past it
                    for name in ("float32", "float64", "int32", "int64", "uint8", "bool")
                    for op in ("SUM", "AVG", "MAX", "MIN", "PRODUCT")]:
        if op == "AVG" and name in ("uint8", "bool"):
            continue
        rows = []
        for r in range(W):
            x = rng[r].standard_normal(n) * 1e3
            if name == "bool":
                x = x > 0
            elif name.startswith(("int", "uint")):
                x = (x * 1e6).astype(np.int64).astype(name)   # sums wrap
            else:
                x = x.astype(name)
                if n < 100:         # a NaN per rank (past the slot MPI's MAX decides)
                    x[r] = np.nan
            rows.append(x)
        t = ember.from_numpy(rows[R].copy())
        dist.all_reduce(t, op=getattr(RO, op))
        ufunc = {"SUM": np.add, "AVG": np.add, "MAX": np.maximum, "MIN": np.minimum,
                 "PRODUCT": np.multiply}[op]
        if name == "bool":
            ufunc = {"SUM": np.maximum, "PRODUCT": np.minimum}.get(op, ufunc)
        with np.errstate(all="ignore"):
            want = rows[0].copy()
            for r in range(1, W):
                want = ufunc(want, rows[r])
            if op == "AVG":
                want = want / np.array(W, dtype=want.dtype) if want.dtype.kind == "f" \
                    else np.sign(want) * (np.abs(want) // W)
        assert t.numpy().tobytes() == want.astype(name).tobytes(), (name, op)
    # a late rank: the other's C path hands its pending request back to Python, which
    # finishes the collective (each phase: the slot's exchange, the all-reduce/broadcast)
    import time
    for n in (37, 3000):
        for late in range(W):
            t = ember.arange(n, dtype=ember.float32) * (R + 1)
            if R == late:
                time.sleep(0.05)
            dist.all_reduce(t)
            same(t.numpy(), np.arange(n, dtype=np.float32) * sum(range(1, W + 1)))
            t = ember.arange(n, dtype=ember.float64) * (R + 1)
            if R == late:
                time.sleep(0.05)
            dist.broadcast(t, src=W - 1)
            same(t.numpy(), np.arange(n, dtype=np.float64) * W)


@check("staging.reference_device")
def _():
    dev = "reference"
    t = ember.full((5,), float(R + 1), device=dev)
    dist.all_reduce(t, op=RO.MAX)
    assert str(t.device) == "reference:0"
    same(t.cpu().numpy(), np.full(5, W, np.float32))
    out = ember.zeros(W, 5, device=dev)
    dist.all_gather_into_tensor(out, ember.full((5,), float(R), device=dev))
    same(out.cpu().numpy(), np.repeat(np.arange(W, dtype=np.float32)[:, None], 5, 1))
    h = ember.full((3,), 1.5, device=dev, dtype=ember.bfloat16)
    dist.all_reduce(h)
    same(h.cpu().to(ember.float32).numpy(), np.full(3, 1.5 * W, np.float32))


@check("staging.requires_grad_and_empty")
def _():
    p = ember.ones(3, requires_grad=True)
    with ember.no_grad():
        dist.all_reduce(p)
    same(p.detach().numpy(), np.full(3, W, np.float32))
    e = ember.zeros(0)
    dist.all_reduce(e)
    assert e.numel() == 0


@check("async.outstanding_waited_in_reverse")
def _():
    ts = [ember.full((1000,), float(R + k)) for k in range(3)]
    works = [dist.all_reduce(t, async_op=True) for t in ts]
    b = ember.full((4,), float(R))
    wb = dist.broadcast(b, src=1, async_op=True)
    for w in reversed(works):
        assert w.wait() is True
    wb.wait()
    for k, t in enumerate(ts):
        same(t.numpy(), np.full(1000, sum(r + k for r in range(W)), np.float32))
    same(b.numpy(), np.full(4, 1, np.float32))
    assert all(w.is_completed() and w.is_success() and w.exception() is None for w in works)
    assert works[0].result()[0] is ts[0]


@check("async.poll_until_complete")
def _():
    t = ember.ones(10)
    w = dist.all_reduce(t, async_op=True)
    while not w.is_completed():
        pass
    same(t.numpy(), np.full(10, W, np.float32))


@check("async.mismatch_raised_by_wait")
def _():
    w = dist.all_reduce(ember.ones(2 + R), async_op=True)
    msg = raises(RuntimeError, w.wait, match="Detected mismatch between collectives")
    assert "float32[2]" in msg and "float32[3]" in msg
    assert isinstance(w.exception(), RuntimeError) and not w.is_success()
    t = ember.ones(2)
    dist.all_reduce(t)                 # the group is still usable
    same(t.numpy(), np.full(2, W, np.float32))


@check("mismatch.shape_dtype_op")
def _():
    raises(RuntimeError, lambda: dist.all_reduce(ember.ones(3 + R)), match="float32[3]")
    raises(RuntimeError, lambda: dist.all_reduce(ember.ones(3, dtype=ember.float32 if R else
                                                           ember.float64)), match="float64[3]")
    raises(RuntimeError, lambda: dist.all_reduce(ember.ones(3), op=RO.MAX if R else RO.SUM),
           match="op=MAX")
    msg = raises(RuntimeError, lambda: dist.all_reduce(ember.ones(3)) if R else
                 dist.broadcast(ember.ones(3), src=0), match="Detected mismatch")
    assert "broadcast(float32[3], root=0)" in msg and "all_reduce(float32[3], op=SUM)" in msg
    raises(RuntimeError, lambda: dist.broadcast(ember.ones(3), src=R), match="root=")
    raises(RuntimeError, lambda: dist.all_to_all_single(
        ember.zeros(4 + R), ember.zeros(4), output_split_sizes=[2, 2 + R],
        input_split_sizes=[2, 2]), match="sizes sent and expected disagree")
    t = ember.ones(2)
    dist.all_reduce(t)
    same(t.numpy(), np.full(2, W, np.float32))


@check("protocol.small_and_large_sync_and_async")
def _():
    # payloads that ride in the signature exchange (12 elements), and ones that follow it
    # (1100 elements: past 1 KB for every dtype); blocking calls (the prepared fast path for
    # small CPU tensors) and async ones (a Work)
    for name in ("float32", "float16", "bool", "int64", "complex128"):
        for n in (12, 1100):
            ins = [values(name, r, n) for r in range(W)]
            op = "MAX" if valid(name, "MAX") else "SUM"
            for async_op in (False, True):
                def run(w):
                    if async_op:
                        w.wait()
                for _ in range(2):      # the second call reuses the prepared plans
                    t = tensor(name, ins[R])
                    run(dist.all_reduce(t, op=getattr(RO, op), async_op=async_op))
                    same(host(t), expected(name, op, ins))
                    t = tensor(name, ins[R])
                    run(dist.reduce(t, dst=0, op=getattr(RO, op), async_op=async_op))
                    same(host(t), expected(name, op, ins) if R == 0 else ins[R])
                    t = tensor(name, ins[R])
                    run(dist.broadcast(t, src=1, async_op=async_op))
                    same(host(t), rounded(name, ins[1]))
                    out = [tensor(name, ins[R] * 0) for _ in range(W)]
                    run(dist.all_gather(out, tensor(name, ins[R]), async_op=async_op))
                    for r in range(W):
                        same(host(out[r]), rounded(name, ins[r]))
                    out = tensor(name, np.concatenate([ins[R]] * W) * 0).view(W, -1)
                    run(dist.all_gather_into_tensor(out, tensor(name, ins[R]),
                                                    async_op=async_op))
                    same(host(out), rounded(name, np.stack(ins)))


@check("protocol.blocking_behind_async_and_mismatched_paths")
def _():
    # a blocking call while async ones are in flight queues behind them (general path)
    big, small = ember.full((2000,), float(R + 1)), ember.full((3,), float(R + 1))
    w = dist.all_reduce(big, async_op=True)
    w2 = dist.all_reduce(small, op=RO.MAX, async_op=True)
    t = ember.full((5,), float(R))
    dist.all_reduce(t)
    w.wait()
    w2.wait()
    same(big.numpy(), np.full(2000, 3, np.float32))
    same(small.numpy(), np.full(3, 2, np.float32))
    same(t.numpy(), np.full(5, 1, np.float32))
    # a small call on one rank meets a large one on the other: both raise, nothing hangs
    msg = raises(RuntimeError, lambda: dist.all_reduce(ember.ones(3 if R == 0 else 3000)),
                 match="Detected mismatch")
    assert "float32[3]" in msg and "float32[3000]" in msg
    msg = raises(RuntimeError, lambda: dist.broadcast(ember.ones(4), src=0) if R == 0 else
                 dist.all_reduce(ember.ones(4), async_op=True).wait(), match="Detected mismatch")
    # alternating prepared plans rewrite the slot's signature each time
    for k in range(3):
        a, b = ember.full((2,), float(R)), ember.full((2,), float(R))
        dist.all_reduce(a, op=RO.MAX)
        dist.broadcast(b, src=0)
        same(a.numpy(), np.full(2, 1, np.float32))
        same(b.numpy(), np.full(2, 0, np.float32))


@check("errors.arguments")
def _():
    raises(TypeError, lambda: dist.all_reduce(np.ones(3)), match="Expected parameter `tensor`")
    raises(TypeError, lambda: dist.all_reduce(ember.ones(3), op="sum"), match="'op'")
    raises(ValueError, lambda: dist.all_gather([ember.ones(2)], ember.ones(2)), match="holds 1")
    raises(ValueError, lambda: dist.all_gather([ember.ones(3)] * W, ember.ones(2)),
           match="must match")
    raises(ValueError, lambda: dist.broadcast(ember.ones(2), src=W), match="not part of group")
    raises(ValueError, lambda: dist.scatter(ember.ones(2), [ember.ones(2)] * W if R == 0
                                            else None, src=1), match="be specified on")
    raises(ValueError, lambda: dist.all_gather_into_tensor(ember.ones(3), ember.ones(2)),
           match="world_size")
    raises(ValueError, lambda: dist.all_reduce(ember.ones(2), op=RO.PREMUL_SUM))
    raises(ValueError, lambda: dist.init_process_group("gloo"), match="twice")
    raises(ValueError, lambda: dist.init_process_group("nonsense"))


@check("api.world")
def _():
    assert dist.is_initialized() and dist.get_backend() == "gloo"
    assert dist.group.WORLD is dist.GroupMember.WORLD is not None
    assert dist.get_rank(dist.group.WORLD) == R and dist.get_world_size() == W
    assert dist.get_process_group_ranks(dist.group.WORLD) == list(range(W))
    assert dist.Backend("GLOO") == "gloo" and repr(RO.SUM) == "<RedOpType.SUM: 0>"
    assert RO.RedOpType.MAX == RO.MAX and RO(RO.MIN) == RO.MIN
    assert dist.distributed_c10d.ProcessGroup is dist.ProcessGroup
    dist.barrier()
    dist.barrier(async_op=True).wait()


@check("sampler.default_group")
def _():
    s = DistributedSampler(range(11), shuffle=True, seed=3)
    mine = list(s)
    every = [None] * W
    dist.all_gather_object(every, mine)
    assert all(len(e) == len(s) == 6 for e in every)
    flat = [i for e in every for i in e]
    assert set(flat) == set(range(11)) and len(flat) == 12
    s.set_epoch(1)
    assert list(s) != mine


@check("lifecycle.destroy_and_init_again")
def _():
    dist.destroy_process_group()
    assert not dist.is_initialized()
    raises(ValueError, lambda: dist.get_rank(), match="has not been initialized")
    dist.init_process_group(backend=None, world_size=W, rank=R)
    assert dist.get_backend() == "mpi"
    t = ember.ones(1)
    dist.all_reduce(t)
    assert t.item() == W


report(R)
