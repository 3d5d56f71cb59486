"""What the MPI test scripts share: run many named checks in one job and write each rank's
results as JSON, which the pytest side reads (one mpiexec launch costs about a second)."""
import json
import os
import traceback

import numpy as np

RESULTS = {}


def check(name):
    """Decorator: run the function now, record "ok" or the error under ``name``."""
    def run(fn):
        if os.environ.get("HARNESS_TRACE"):
            print("check", name, flush=True)
        try:
            fn()
            RESULTS[name] = "ok"
        except Exception as e:          # recorded, asserted by the pytest side
            RESULTS[name] = f"{type(e).__name__}: {e}\n{traceback.format_exc()}"
        return fn
    return run


def raises(exc_type, fn, match=None):
    """``fn()`` raises ``exc_type`` (with ``match`` in its message); returns the message."""
    try:
        fn()
    except exc_type as e:
        if match is not None and match not in str(e):
            raise AssertionError(f"expected {match!r} in {str(e)!r}")
        return str(e)
    raise AssertionError(f"{exc_type.__name__} not raised")


def report(rank):
    """Write this rank's results to $HARNESS_OUT/rank<rank>.json (MPI interleaves the ranks'
    stdout), atomically: a rank may be killed right after."""
    out = os.environ.get("HARNESS_OUT")
    if not out:
        print(json.dumps({"rank": rank, "results": RESULTS}), flush=True)
        return
    path = os.path.join(out, f"rank{rank}.json")
    with open(path + ".tmp", "w") as fh:
        json.dump(RESULTS, fh)
    os.replace(path + ".tmp", path)


def data(seed, n=8):
    """A global batch (inputs (n, 6), targets (n, 3)), the same on every rank."""
    import ember
    g = ember.Generator()
    g.manual_seed(seed)
    return ember.randn(n, 6, generator=g), ember.randn(n, 3, generator=g)


def mine(t):
    """This rank's share of a global batch (its rows, in rank order)."""
    import ember.distributed as dist
    k = t.shape[0] // dist.get_world_size()
    r = dist.get_rank()
    return t[r * k:(r + 1) * k]


def ddp_twins(make, seed, **ddp_kwargs):
    """(ddp, model, reference) of ``make()``: a rank-dependent init that DDP replaces by rank
    0's; the reference starts from the same weights and trains alone on the whole batch."""
    import ember.distributed as dist
    from ember.nn.parallel import DistributedDataParallel

    import ember
    ember.manual_seed(seed + dist.get_rank())
    model = make()
    ddp = DistributedDataParallel(model, **ddp_kwargs)
    ref = make()
    ref.load_state_dict(model.state_dict())
    return ddp, model, ref


def bf16(a):
    """float32 values rounded to bfloat16 (nearest even), as float32."""
    bits = np.asarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return bits.astype(np.uint32).view(np.float32)
