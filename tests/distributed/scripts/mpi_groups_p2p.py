"""Groups, point-to-point and object collectives.  Run under ``mpiexec -n 3``."""
import datetime
import warnings

import ember.distributed as dist
import numpy as np
from _harness import check, raises, report

import ember

T = datetime.timedelta(seconds=20)
dist.init_process_group("gloo", timeout=T)
R, W = dist.get_rank(), dist.get_world_size()
assert W == 3, "run with mpiexec -n 3"

# every rank calls new_group, members or not
outer = dist.new_group([2, 0], timeout=T)   # sorted: group rank 0 is global 0, 1 is global 2
solo = dist.new_group([1], timeout=T)
pair = dist.new_group([0, 1], timeout=T, group_desc="pair")


@check("groups.membership_and_ranks")
def _():
    if R == 1:
        assert outer is dist.GroupMember.NON_GROUP_MEMBER
        assert dist.get_rank(outer) == -1 and dist.get_world_size(outer) == -1
    else:
        assert dist.get_rank(outer) == R // 2 and dist.get_world_size(outer) == 2
        assert dist.get_process_group_ranks(outer) == [0, 2]
        assert dist.get_global_rank(outer, 1) == 2 and dist.get_group_rank(outer, 2) == 1
        raises(ValueError, lambda: dist.get_group_rank(outer, 1), match="not part of group")
    if R != 2:
        assert pair.group_desc == "pair" and pair.size() == 2 and pair.rank() == R


@check("groups.collectives_on_subgroups")
def _():
    t = ember.full((4,), float(R + 1))
    out = dist.all_reduce(t, group=outer)
    if R == 1:
        assert out is None and t[0].item() == 2.0      # untouched on a non-member
    else:
        assert t[0].item() == 1.0 + 3.0
    b = ember.full((2,), float(R))
    dist.broadcast(b, src=2, group=outer)
    assert b[0].item() == (1.0 if R == 1 else 2.0)
    g = ember.full((2,), float(R))
    dist.broadcast(g, group=outer, group_src=0)         # group rank 0 is global 0
    assert g[0].item() == (1.0 if R == 1 else 0.0)
    if R != 1:
        raises(ValueError, lambda: dist.broadcast(ember.ones(1), src=1, group=outer),
               match="not part of group")
    if R == 1:
        s = ember.full((3,), 7.0)
        dist.all_reduce(s, group=solo)
        assert s[0].item() == 7.0
    if R != 2:
        gl = [ember.zeros(1) for _ in range(2)]
        dist.all_gather(gl, ember.full((1,), float(R * 10)), group=pair)
        assert [x.item() for x in gl] == [0.0, 10.0]


@check("groups.non_member_warns")
def _():
    if R == 1:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            dist.barrier(group=outer)
        assert any("does not belong to the given group" in str(x.message) for x in w)


@check("p2p.send_recv_ring")
def _():
    nxt, prv = (R + 1) % W, (R - 1) % W
    out = ember.full((5,), float(R))
    got = ember.zeros(5)
    if R % 2 == 0:
        dist.send(out, dst=nxt)
        sender = dist.recv(got, src=prv)
    else:
        sender = dist.recv(got, src=prv)
        dist.send(out, dst=nxt)
    assert sender == prv and got[0].item() == float(prv)


@check("p2p.any_source_and_tags")
def _():
    if R == 0:
        senders = set()
        for _ in range(2):
            t = ember.zeros(3, dtype=ember.int64)
            s = dist.recv(t, tag=7)
            assert t.tolist() == [s] * 3
            senders.add(s)
        assert senders == {1, 2}
    else:
        dist.send(ember.full((3,), R, dtype=ember.int64), dst=0, tag=7)


@check("p2p.isend_irecv_order_and_bf16")
def _():
    # three messages from rank 1 to rank 2, same tag: received in order
    if R == 1:
        works = [dist.isend(ember.full((2,), float(k), dtype=ember.bfloat16), dst=2)
                 for k in range(3)]
        for w in works:
            w.wait()
    elif R == 2:
        bufs = [ember.zeros(2, dtype=ember.bfloat16) for _ in range(3)]
        works = [dist.irecv(b, src=1) for b in bufs]
        works[2].wait()
        works[0].wait()
        works[1].wait()
        assert [b[0].item() for b in bufs] == [0.0, 1.0, 2.0]
        assert works[1].source_rank() == 1


@check("p2p.batch_isend_irecv")
def _():
    nxt, prv = (R + 1) % W, (R - 1) % W
    send_t = ember.arange(4, dtype=ember.float64) + R
    recv_t = ember.zeros(4, dtype=ember.float64)
    ops = [dist.P2POp(dist.isend, send_t, nxt), dist.P2POp(dist.irecv, recv_t, prv)]
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    np.testing.assert_array_equal(recv_t.numpy(), np.arange(4) + prv)
    raises(ValueError, lambda: dist.P2POp(dist.all_reduce, send_t, nxt), match="Invalid ``op``")


@check("p2p.mismatch_names_both_sides")
def _():
    if R == 0:
        dist.send(ember.ones(3, dtype=ember.float64), dst=1, tag=3)
    elif R == 1:
        msg = raises(RuntimeError, lambda: dist.recv(ember.zeros(4), src=0, tag=3))
        assert "rank 0 sent float64[3]" in msg and "float32[4]" in msg, msg
        # the channel still works
    if R == 0:
        dist.send(ember.ones(2), dst=1, tag=3)
    elif R == 1:
        t = ember.zeros(2)
        dist.recv(t, src=0, tag=3)
        assert t.tolist() == [1.0, 1.0]
    raises(ValueError, lambda: dist.send(ember.ones(1), dst=R), match="Invalid destination")
    raises(ValueError, lambda: dist.send(ember.ones(1), dst=(R + 1) % W, tag=-1), match="tag")


@check("p2p.on_subgroup_with_group_peer")
def _():
    if R == 0:
        dist.send(ember.full((2,), 42.0), group=outer, group_dst=1)
    elif R == 2:
        t = ember.zeros(2)
        assert dist.recv(t, group=outer, group_src=0) == 0
        assert t[0].item() == 42.0


@check("objects.broadcast_object_list")
def _():
    objs = [{"a": 1, "rank": R}, "text", ember.arange(3)] if R == 1 else [None, None, None]
    dist.broadcast_object_list(objs, src=1)
    assert objs[0] == {"a": 1, "rank": 1} and objs[1] == "text"
    assert objs[2].tolist() == [0, 1, 2]


@check("objects.all_gather_object")
def _():
    out = [None] * W
    dist.all_gather_object(out, {"rank": R, "pad": "x" * (R * 50)})
    assert [o["rank"] for o in out] == list(range(W)) and len(out[2]["pad"]) == 100


@check("objects.gather_object")
def _():
    out = [None] * W if R == 2 else None
    dist.gather_object(("r", R), out, dst=2)
    if R == 2:
        assert out == [("r", 0), ("r", 1), ("r", 2)]


@check("objects.scatter_object_list")
def _():
    out = [None]
    src_list = [{"to": i, "data": list(range(i * 3))} for i in range(W)] if R == 0 else None
    dist.scatter_object_list(out, src_list, src=0)
    assert out[0] == {"to": R, "data": list(range(R * 3))}


@check("objects.on_subgroup")
def _():
    if R != 1:
        out = [None, None]
        dist.all_gather_object(out, R * 100, group=outer)
        assert out == [0, 200]


@check("groups.destroy_subgroup")
def _():
    if R != 2:
        dist.destroy_process_group(pair)
    dist.barrier()


report(R)
