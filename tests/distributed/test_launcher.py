"""``python -m ember.distributed.run``: torchrun's flags and environment; a torchrun-style
training script runs unchanged on 2 ranks; a failing rank is named in the report."""
import json

import pytest
from ember.distributed import run

import ember


@pytest.fixture(scope="module")
def trained(mpi_job, tmp_path_factory):
    out = tmp_path_factory.mktemp("torchrun")
    return mpi_job("torchrun_train.py", [out], launcher=True), out


def test_torchrun_script_runs_unchanged(trained):
    job, out = trained
    assert job.rc == 0, job.describe()
    ranks = [json.loads((out / f"rank{r}.json").read_text()) for r in range(2)]
    for r, d in enumerate(ranks):
        assert d["rank"] == r and d["world"] == 2 and d["local_rank"] == r and d["launched"]
        env = d["env"]
        assert (env["RANK"], env["LOCAL_RANK"], env["WORLD_SIZE"], env["LOCAL_WORLD_SIZE"],
                env["GROUP_RANK"], env["ROLE_RANK"]) == (str(r), str(r), "2", "2", "0", str(r))
        assert env["MASTER_ADDR"] == "127.0.0.1" and env["MASTER_PORT"] == "29500"
        assert env["TORCHELASTIC_RESTART_COUNT"] == "0"
    # the sampler shards each epoch: disjoint halves covering the dataset, new every epoch
    for epoch in range(3):
        a, b = ranks[0]["seen"][epoch], ranks[1]["seen"][epoch]
        assert len(a) == len(b) == 32 and sorted(a + b) == list(range(64))
    assert ranks[0]["seen"][0] != ranks[0]["seen"][1]
    # DDP kept the replicas identical, training made progress, rank 0's checkpoint is whole
    assert ranks[0]["weights"][0] == ranks[0]["weights"][1] == ranks[1]["weights"][0]
    assert ranks[0]["losses"][-1] < ranks[0]["losses"][0]
    state = ember.load(out / "model.pt")
    assert state["weight"].tolist() == ranks[0]["weights"][0]


def test_a_rank_that_dies_is_named(mpi_job, tmp_path):
    job = mpi_job("torchrun_train.py", [tmp_path, "die"], launcher=True)
    assert job.rc == 3, job.describe()
    assert "rank 1 (local_rank 1): exitcode 3" in job.stderr
    assert "Root Cause (first observed failure):\n  rank 1: exitcode 3" in job.stderr


def test_a_rank_that_raises_is_named_with_its_error(mpi_job, tmp_path):
    job = mpi_job("torchrun_train.py", [tmp_path, "raise"], launcher=True)
    assert job.rc != 0, job.describe()
    report = job.stderr[job.stderr.index("ember.distributed.run: the job failed"):]
    assert "rank 1 (local_rank 1): RuntimeError: rank 1 cannot read its shard" in report
    assert "torchrun_train.py" in report        # the traceback


def test_flags_both_spellings_and_the_command():
    a = run.parse_args(["--nproc_per_node=3", "--master-port", "1234", "--node_rank", "0",
                        "--rdzv-backend=c10d", "train.py", "--lr", "0.1"])
    assert (a.nproc_per_node, a.master_port, a.training_script) == ("3", 1234, "train.py")
    assert a.training_script_args == ["--lr", "0.1"]
    cmd = run._command(a, 3, 1, [], "mpiexec", "/tmp/x", 0)
    blocks = " ".join(cmd).split(" : ")
    assert len(blocks) == 3
    for r, block in enumerate(blocks):
        assert f"-env RANK {r} -env LOCAL_RANK {r}" in block and block.endswith("--lr 0.1")
    assert "-genv WORLD_SIZE 3" in blocks[0] and "-genv MASTER_PORT 1234" in blocks[0]
    m = run.parse_args(["-m", "--nnodes", "1", "pkg.train"])
    assert run._command(m, 1, 1, [], "mpiexec", "/tmp/x", 0)[-2:] == ["-m", "pkg.train"]


@pytest.mark.parametrize("argv, message", [
    (["--nnodes", "1:4", "x.py"], "elastic range"),
    (["--nproc-per-node", "0", "x.py"], "must be positive"),
    (["--nproc-per-node", "many", "x.py"], "expected an int"),
    (["--nnodes", "2", "x.py"], "pass --hosts"),
])
def test_bad_flags(argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        run.main(argv)
    assert e.value.code == 2 and message in capsys.readouterr().err
