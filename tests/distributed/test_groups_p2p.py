"""Groups, point-to-point and object collectives on 3 real MPI ranks
(scripts/mpi_groups_p2p.py)."""
import pytest

CHECKS = ["groups.membership_and_ranks", "groups.collectives_on_subgroups",
          "groups.non_member_warns", "p2p.send_recv_ring", "p2p.any_source_and_tags",
          "p2p.isend_irecv_order_and_bf16", "p2p.batch_isend_irecv",
          "p2p.mismatch_names_both_sides", "p2p.on_subgroup_with_group_peer",
          "objects.broadcast_object_list", "objects.all_gather_object", "objects.gather_object",
          "objects.scatter_object_list", "objects.on_subgroup", "groups.destroy_subgroup"]


@pytest.fixture(scope="module")
def job(mpi_job):
    return mpi_job("mpi_groups_p2p.py", n=3)


def test_the_job_ran_every_check(job):
    assert job.rc == 0, job.describe()
    assert sorted(job.results) == [0, 1, 2], job.describe()
    assert all(set(r) == set(CHECKS) for r in job.results.values())


@pytest.mark.parametrize("name", CHECKS)
def test_check(job, name):
    assert not job.failures([name])
