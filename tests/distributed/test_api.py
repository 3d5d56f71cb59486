"""What needs no MPI job: importing never starts MPI, availability without mpi4py, the
public names at PyTorch's module paths."""
import subprocess
import sys
import textwrap

import ember.distributed as dist
import ember.nn.parallel
import torch.distributed as tdist


def python(code):
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_importing_does_not_load_mpi4py():
    out = python("""
        import sys
        import ember, ember.nn, ember.utils.data
        a = 'mpi4py' in sys.modules or 'ember.distributed' in sys.modules
        import ember.distributed as dist
        print(a, 'mpi4py' in sys.modules, dist.is_available())
    """)
    assert out.split() == ["False", "False", "True"]


def test_without_mpi4py_is_available_is_false_and_init_says_what_to_install():
    out = python("""
        import sys
        sys.modules['mpi4py'] = None          # as if it were not installed
        import ember.distributed as dist
        print(dist.is_available(), dist.is_mpi_available(), dist.is_initialized())
        try:
            dist.init_process_group('gloo')
        except RuntimeError as e:
            print(e)
    """)
    first, message = out.split("\n", 1)
    assert first.split() == ["False", "False", "False"]
    assert "pip install mpi4py mpich" in message


def test_public_names_match_torch():
    ours = set(dist.__all__)
    for name in ["init_process_group", "destroy_process_group", "is_initialized", "get_rank",
                 "get_world_size", "get_backend", "new_group", "barrier", "ReduceOp",
                 "all_reduce", "reduce", "broadcast", "all_gather", "all_gather_into_tensor",
                 "reduce_scatter", "reduce_scatter_tensor", "gather", "scatter", "all_to_all",
                 "all_to_all_single", "send", "recv", "isend", "irecv", "batch_isend_irecv",
                 "P2POp", "broadcast_object_list", "all_gather_object", "gather_object",
                 "scatter_object_list", "is_available", "Backend", "ProcessGroup", "Work",
                 "group", "GroupMember", "get_process_group_ranks", "get_global_rank",
                 "get_group_rank", "monitored_barrier", "DistBackendError", "DistError"]:
        assert name in ours and hasattr(tdist, name), name
        assert getattr(dist, name) is getattr(dist.distributed_c10d, name, getattr(dist, name))
    assert sorted(dist.__all__) == dist.__all__
    assert {k: int(v) for k, v in dist.ReduceOp.RedOpType.__members__.items()} == \
        {k: int(v) for k, v in tdist.ReduceOp.RedOpType.__members__.items()}
    for op in ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"):
        assert repr(getattr(dist.ReduceOp, op)) == repr(getattr(tdist.ReduceOp, op))
    assert dist.Backend("GLOO") == tdist.Backend("GLOO") == "gloo"
    assert dist.constants.default_pg_timeout == tdist.constants.default_pg_timeout
    assert issubclass(dist.DistBackendError, RuntimeError)
    assert ember.nn.parallel.DistributedDataParallel.__module__ == \
        "ember.nn.parallel.distributed"
