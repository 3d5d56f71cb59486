"""``python -m ember.distributed.run``: torchrun's command line, starting the ranks through MPI.

    python -m ember.distributed.run --nproc-per-node 2 train.py --epochs 3

starts one MPI job (MPICH's ``mpiexec``, from the mpich wheel or the PATH) with a process per
rank, each with torchrun's environment: RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE,
GROUP_RANK, ROLE_RANK, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_RUN_ID, ... so scripts written
for torchrun (reading those, ``init_process_group("gloo")``) run unchanged.  When the job
fails, the report names the failed ranks, their exit codes and the first error.

Rendezvous flags (``--rdzv-*``) are accepted and not needed: MPI forms the job.  Several nodes
are MPI's business: run the launcher once, on node 0, with ``--nnodes N --hosts h0,h1,...``
(ember's addition); hydra starts the other nodes' ranks over ssh.
"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import uuid

__all__ = ["get_args_parser", "main", "parse_args", "run"]

_EXIT_CODES = re.compile(rb"^\[mpiexec@[^\]]*\] Exit codes: (.*)$")


def get_args_parser():
    """torchrun's arguments (both ``--nproc-per-node`` and ``--nproc_per_node`` spellings)."""
    p = argparse.ArgumentParser(prog="python -m ember.distributed.run",
                                description="Start a data-parallel job over MPI, as torchrun.")

    def flag(name, **kw):
        under = "--" + name[2:].replace("-", "_")
        p.add_argument(*dict.fromkeys([name, under]), **kw)

    flag("--nnodes", default="1", help="number of nodes, N or N:N (default 1)")
    flag("--nproc-per-node", default="1", help="processes per node: an int, cpu, gpu or auto")
    flag("--node-rank", type=int, default=0, help="this node's rank (default 0)")
    flag("--master-addr", default="127.0.0.1", help="exported as MASTER_ADDR")
    flag("--master-port", type=int, default=29500, help="exported as MASTER_PORT")
    flag("--standalone", action="store_true", help="one node, a free MASTER_PORT")
    flag("--max-restarts", type=int, default=0, help="restart a failed job this many times")
    flag("--rdzv-backend", default="static", help="accepted; MPI forms the job")
    flag("--rdzv-endpoint", default="", help="accepted; MPI forms the job")
    flag("--rdzv-id", default="none", help="exported as TORCHELASTIC_RUN_ID")
    flag("--rdzv-conf", default="", help="accepted; MPI forms the job")
    flag("--monitor-interval", type=float, default=0.1, help="accepted")
    flag("--role", default="default", help="exported as ROLE_NAME")
    flag("--hosts", default="", help="comma-separated hosts of the nodes (with --nnodes > 1)")
    flag("--mpiexec", default=None, help="the mpiexec to use (default: next to python, else "
         "on the PATH)")
    p.add_argument("-m", "--module", action="store_true",
                   help="run training_script as a module (python -m)")
    flag("--no-python", action="store_true",
         help="run training_script directly, not with python")
    p.add_argument("training_script", help="the script each rank runs")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def parse_args(args=None):
    return get_args_parser().parse_args(args)


def _nproc(value):
    if value in ("cpu", "auto"):
        return os.cpu_count() or 1
    if value == "gpu":
        import ember
        n = ember.cuda.device_count()
        if n == 0:
            raise ValueError("--nproc-per-node=gpu: no GPU is available")
        return n
    try:
        n = int(value)
    except ValueError:
        raise ValueError(f"--nproc-per-node: expected an int, cpu, gpu or auto, got {value!r}")
    if n < 1:
        raise ValueError(f"--nproc-per-node must be positive, got {n}")
    return n


def _nnodes(value):
    lo, _, hi = str(value).partition(":")
    lo, hi = int(lo), int(hi or lo)
    if lo != hi or lo < 1:
        raise ValueError(f"--nnodes={value}: an elastic range needs a rendezvous; "
                         f"ember.distributed.run starts a fixed-size MPI job (use N)")
    return lo


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _find_mpiexec(explicit):
    candidates = [explicit] if explicit else [
        os.path.join(os.path.dirname(sys.executable), "mpiexec"), shutil.which("mpiexec")]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    raise RuntimeError("ember.distributed.run needs MPICH's mpiexec: pip install mpi4py mpich "
                       "(or pass --mpiexec)")


def _check_hydra(mpiexec):
    out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True).stdout
    if "HYDRA" not in out:
        raise RuntimeError(f"{mpiexec} is not MPICH's hydra mpiexec; ember.distributed.run "
                           f"drives hydra.  With another MPI, start the ranks with its mpiexec "
                           f"and read the rank from MPI (init_process_group does)")


def _command(args, nproc, nnodes, hosts, mpiexec, run_dir, restart):
    """The mpiexec command line: shared variables once, one block per rank."""
    world = nproc * nnodes
    shared = {"WORLD_SIZE": world, "LOCAL_WORLD_SIZE": nproc, "GROUP_WORLD_SIZE": nnodes,
              "ROLE_WORLD_SIZE": world, "ROLE_NAME": args.role, "MASTER_ADDR": args.master_addr,
              "MASTER_PORT": args.master_port, "TORCHELASTIC_RUN_ID": args.rdzv_id,
              "TORCHELASTIC_RESTART_COUNT": restart,
              "TORCHELASTIC_MAX_RESTARTS": args.max_restarts,
              "TORCHELASTIC_USE_AGENT_STORE": "False"}
    if nproc > 1 and "OMP_NUM_THREADS" not in os.environ:
        shared["OMP_NUM_THREADS"] = 1
    cmd = [mpiexec, "-print-all-exitcodes"]
    for k, v in shared.items():
        cmd += ["-genv", k, str(v)]
    if args.no_python:
        program = [args.training_script]
    elif args.module:
        program = [sys.executable, "-u", "-m", args.training_script]
    else:
        program = [sys.executable, "-u", args.training_script]
    program += args.training_script_args
    for rank in range(world):
        node, local = divmod(rank, nproc)
        if rank:
            cmd.append(":")
        cmd += ["-n", "1"]
        if hosts:
            cmd += ["-host", hosts[node]]
        per_rank = {"RANK": rank, "LOCAL_RANK": local, "GROUP_RANK": node, "ROLE_RANK": rank,
                    "TORCHELASTIC_ERROR_FILE": _error_file(run_dir, rank)}
        for k, v in per_rank.items():
            cmd += ["-env", k, str(v)]
        cmd += program
    return cmd


def _error_file(run_dir, rank):
    return os.path.join(run_dir, f"rank_{rank}", "error.json")


def _relay(proc):
    """Forward mpiexec's output; return the wait statuses hydra reports per rank."""
    statuses = []
    out = sys.stdout.buffer
    for line in proc.stdout:
        m = _EXIT_CODES.match(line.rstrip(b"\r\n"))
        if m:
            statuses = [int(c) for c in re.findall(rb"\d+", re.sub(rb"\[[^\]]*\]", b" ",
                                                                    m.group(1)))]
            continue
        out.write(line)
        out.flush()
    return statuses


def _describe_status(status):
    if status & 0x7F:
        sig = status & 0x7F
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        return f"killed by {name}"
    return f"exitcode {status >> 8}"


def _report(rc, statuses, run_dir, world, nproc):
    """torchrun's failure summary: the failed ranks, and the first error as root cause."""
    errors = {}
    for rank in range(world):
        try:
            with open(_error_file(run_dir, rank)) as fh:
                errors[rank] = json.load(fh)["message"]
        except (OSError, ValueError, KeyError):
            pass
    failed = [r for r, s in enumerate(statuses[:world]) if s]
    lines = [f"ember.distributed.run: the job failed (mpiexec returned {rc})", "Failures:"]
    for r in sorted(set(failed) | set(errors)):
        why = _describe_status(statuses[r]) if r < len(statuses) and statuses[r] else \
            "raised an exception"
        lines.append(f"  rank {r} (local_rank {r % nproc}): {why}")
    if errors:
        first = min(errors, key=lambda r: int(errors[r]["extraInfo"].get("timestamp", 0)))
        e = errors[first]
        lines += ["Root Cause (first observed failure):",
                  f"  rank {first} (local_rank {first % nproc}): {e['message']}",
                  "  " + e["extraInfo"]["py_callstack"].rstrip().replace("\n", "\n  ")]
    elif failed:
        lines += ["Root Cause (first observed failure):",
                  f"  rank {failed[0]}: {_describe_status(statuses[failed[0]])} (no error "
                  f"record: it died without raising a Python exception)"]
    else:
        lines.append("  no rank left an error record; see MPI's message above")
    print("\n".join(lines), file=sys.stderr, flush=True)


def run(args):
    """Start the job described by ``args`` (``parse_args``'s namespace); returns its exit
    status (0 on success)."""
    nproc, nnodes = _nproc(args.nproc_per_node), _nnodes(args.nnodes)
    hosts = [h for h in args.hosts.split(",") if h]
    if args.standalone:
        nnodes, hosts = 1, []
        args.master_addr, args.master_port = "127.0.0.1", _free_port()
        if args.rdzv_id == "none":
            args.rdzv_id = str(uuid.uuid4())
    if nnodes > 1:
        if len(hosts) != nnodes:
            raise ValueError(f"--nnodes={nnodes}: pass --hosts with the {nnodes} nodes' "
                             f"hostnames (MPI starts every node's ranks from node 0)")
        if args.node_rank != 0:
            print(f"ember.distributed.run: node {args.node_rank}'s ranks are started by node "
                  f"0's mpiexec; nothing to do here", file=sys.stderr)
            return 0
    mpiexec = _find_mpiexec(args.mpiexec)
    _check_hydra(mpiexec)
    world = nproc * nnodes
    for restart in range(args.max_restarts + 1):
        run_dir = tempfile.mkdtemp(prefix="ember_run_")
        try:
            cmd = _command(args, nproc, nnodes, hosts, mpiexec, run_dir, restart)
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE)
            try:
                statuses = _relay(proc)
                rc = proc.wait()
            except KeyboardInterrupt:
                proc.send_signal(signal.SIGINT)
                proc.wait()
                raise
            if rc == 0:
                return 0
            _report(rc, statuses, run_dir, world, nproc)
        finally:
            shutil.rmtree(run_dir, ignore_errors=True)
        if restart < args.max_restarts:
            print(f"ember.distributed.run: restarting the job ({restart + 1} of "
                  f"{args.max_restarts})", file=sys.stderr, flush=True)
    return rc


def main(args=None):
    try:
        sys.exit(run(parse_args(args)))
    except (ValueError, RuntimeError) as e:
        print(f"ember.distributed.run: error: {e}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
