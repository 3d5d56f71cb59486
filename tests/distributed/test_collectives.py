"""Every collective and dtype against NumPy on 2 real MPI ranks, async forms, staging of
strided and non-CPU tensors, mismatches and argument errors (scripts/mpi_collectives.py)."""
import pytest

DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64",
          "uint8", "bool", "complex64", "complex128"]
OPS = ["SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"]
PER_DTYPE = ["reduce", "broadcast", "all_gather", "all_gather_into_tensor", "reduce_scatter",
             "reduce_scatter_tensor", "gather", "scatter", "all_to_all", "all_to_all_single"]
OTHERS = ["staging.strided_views", "staging.reference_device",
          "staging.requires_grad_and_empty", "async.outstanding_waited_in_reverse",
          "async.poll_until_complete", "async.mismatch_raised_by_wait",
          "mismatch.shape_dtype_op", "protocol.small_and_large_sync_and_async",
          "protocol.blocking_behind_async_and_mismatched_paths",
          "protocol.fast_and_general_paths_meet", "protocol.native_path_has_numpys_bits",
          "errors.arguments", "api.world",
          "sampler.default_group", "lifecycle.destroy_and_init_again"]


@pytest.fixture(scope="module")
def job(mpi_job):
    return mpi_job("mpi_collectives.py")


def test_the_job_ran_every_check(job):
    assert job.rc == 0, job.describe()
    names = {f"all_reduce.{d}.{o}" for d in DTYPES for o in OPS} | \
        {f"{c}.{d}" for c in PER_DTYPE for d in DTYPES} | set(OTHERS)
    assert sorted(job.results) == [0, 1], job.describe()
    for res in job.results.values():
        assert set(res) == names


@pytest.mark.parametrize("dtype", DTYPES)
def test_all_reduce_every_op(job, dtype):
    assert not job.failures([f"all_reduce.{dtype}.{o}" for o in OPS])


@pytest.mark.parametrize("dtype", DTYPES)
def test_other_collectives(job, dtype):
    assert not job.failures([f"{c}.{dtype}" for c in PER_DTYPE])


@pytest.mark.parametrize("name", OTHERS)
def test_check(job, name):
    assert not job.failures([name])
