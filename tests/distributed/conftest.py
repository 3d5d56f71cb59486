"""Running real MPI jobs from pytest: each job (``mpiexec -n N`` or the torchrun-style
launcher) runs a script of tests/distributed/scripts that performs many named checks and
writes each rank's results as JSON; the tests assert on those.  One launch costs about a second,
so each test module starts its job once (module-scoped fixtures) and asserts per check."""
import dataclasses
import importlib.util
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

SCRIPTS = pathlib.Path(__file__).resolve().parent / "scripts"


@dataclasses.dataclass
class Job:
    rc: int
    stdout: str
    stderr: str
    seconds: float
    results: dict          # rank -> {check name: "ok" or the error}

    def failures(self, names):
        """The ranks' errors for the checks ``names`` (missing checks count as errors)."""
        bad = []
        for rank, res in sorted(self.results.items()):
            for n in names:
                if res.get(n) != "ok":
                    bad.append(f"rank {rank} {n}: {res.get(n, 'not reported')}")
        return bad

    def describe(self):
        return f"rc={self.rc}\nstdout:\n{self.stdout[-3000:]}\nstderr:\n{self.stderr[-3000:]}"


def _mpiexec():
    near = pathlib.Path(sys.executable).with_name("mpiexec")
    return str(near) if near.exists() else shutil.which("mpiexec")


def run_job(script, args=(), n=2, timeout=120, launcher=False, cwd=None, env=None):
    """Run ``script`` on ``n`` ranks (``env``: extra environment) and collect its RESULT
    lines."""
    if importlib.util.find_spec("mpi4py") is None:
        pytest.skip("mpi4py is not installed (pip install mpi4py mpich)")
    mpiexec = _mpiexec()
    if mpiexec is None:
        pytest.skip("no mpiexec found (pip install mpich)")
    path = str(SCRIPTS / script)
    if launcher:
        cmd = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", str(n), path]
    else:
        cmd = [mpiexec, "-n", str(n), sys.executable, path]
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, OMP_NUM_THREADS="1", OMP_WAIT_POLICY="PASSIVE", HARNESS_OUT=out,
                   **(env or {}))
        start = time.monotonic()
        p = subprocess.run(cmd + [str(a) for a in args], capture_output=True, text=True,
                           timeout=timeout, env=env, cwd=cwd or SCRIPTS)
        seconds = time.monotonic() - start
        results = {int(f.stem[4:]): json.loads(f.read_text())
                   for f in pathlib.Path(out).glob("rank*.json")}
    return Job(p.returncode, p.stdout, p.stderr, seconds, results)


@pytest.fixture(scope="session")
def mpi_job():
    """``run_job``: what the test modules' job fixtures call."""
    return run_job
