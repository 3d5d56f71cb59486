"""DistributedDataParallel on 2 real MPI ranks: equivalence with single-process training on
the concatenated batch, and its options (scripts/mpi_ddp.py)."""
import pytest

CHECKS = ["ddp.starts_from_rank0_weights", "ddp.equivalence.default",
          "ddp.equivalence.small_buckets", "ddp.equivalence.gradient_as_bucket_view",
          "ddp.buckets_start_during_backward", "ddp.no_sync_accumulates_then_averages",
          "ddp.find_unused_parameters", "ddp.unused_without_find_unused_raises",
          "ddp.broadcast_buffers", "ddp.no_grad_forward_does_not_arm",
          "ddp.state_dict_and_module", "ddp.on_another_device", "ddp.errors"]


@pytest.fixture(scope="module")
def job(mpi_job):
    return mpi_job("mpi_ddp.py")


def test_the_job_ran_every_check(job):
    assert job.rc == 0, job.describe()
    assert sorted(job.results) == [0, 1], job.describe()
    assert all(set(r) == set(CHECKS) for r in job.results.values())


@pytest.mark.parametrize("name", CHECKS)
def test_check(job, name):
    assert not job.failures([name])
