"""Two real MPI jobs on 2 ranks: SyncBatchNorm against PyTorch's BatchNorm on the
concatenated batch (scripts/mpi_syncbn.py), and Work.get_future, DDP's communication hooks
and join() (scripts/mpi_hooks_join.py).  Each job runs once, on the first test that needs it."""
import pytest

pytest.importorskip("torch")        # the SyncBatchNorm job compares with torch

JOBS = {
    "mpi_syncbn.py": [
        "syncbn.uneven_batches.float64", "syncbn.uneven_batches.float32",
        "syncbn.cumulative_average_and_3d", "syncbn.empty_batch_on_one_rank",
        "syncbn.float16_input", "syncbn.eval_one_rank_groups_and_non_members_are_batchnorm",
        "syncbn.process_group", "syncbn.ddp_converted_model_equals_single_process"],
    "mpi_hooks_join.py": [
        "futures.work_get_future", "futures.errors_reach_the_future",
        "hooks.allreduce_hook_equals_default", "hooks.fp16_compress_hook",
        "hooks.bf16_compress_hook", "hooks.custom_state_and_grad_bucket", "hooks.errors",
        "join.uneven_inputs", "join.buffers_and_comm_hook",
        "join.throw_on_early_termination"],
}


@pytest.fixture(scope="module")
def jobs(mpi_job):
    done = {}

    def job(script):
        if script not in done:
            done[script] = mpi_job(script)
        return done[script]
    return job


@pytest.mark.parametrize("script", JOBS)
def test_the_job_ran_every_check(jobs, script):
    job = jobs(script)
    assert job.rc == 0, job.describe()
    assert sorted(job.results) == [0, 1], job.describe()
    assert all(set(r) == set(JOBS[script]) for r in job.results.values())


@pytest.mark.parametrize("script,name", [(s, n) for s, names in JOBS.items() for n in names])
def test_check(jobs, script, name):
    assert not jobs(script).failures([name])
