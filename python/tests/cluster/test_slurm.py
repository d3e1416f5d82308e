"""scripts/slurm/dask.sbatch on a real single-node Slurm (Debian's slurm-wlm and munge):
the test starts munged, slurmctld and slurmd itself with their files in a temporary
directory and free ports, submits a short training run with `sbatch --wait`, and stops
them. Needs root, as CI has."""

import os
import socket
import subprocess
import time

import pytest

from cluster_helpers import MLGO_ENV, ROOT, command_env, stop

pytestmark = pytest.mark.slurm


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SLURM_CONF = """\
ClusterName=mlgotest
SlurmctldHost={node}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
AuthType=auth/munge
AuthInfo=socket={dir}/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool
SlurmctldPidFile={dir}/slurmctld.pid
SlurmdPidFile={dir}/slurmd.pid
SlurmctldLogFile={dir}/slurmctld.log
SlurmdLogFile={dir}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
KillWait=5
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName={node} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""


@pytest.fixture
def slurm(tmp_path):
    """The environment (SLURM_CONF) of a running single-node Slurm."""
    d = tmp_path / "slurm"
    for sub in ("", "state", "spool"):
        (d / sub).mkdir(exist_ok=True)
    os.chmod(d, 0o755)
    key = d / "munge.key"
    key.write_bytes(os.urandom(1024))
    os.chmod(key, 0o400)
    node = socket.gethostname().split(".")[0]
    (d / "slurm.conf").write_text(SLURM_CONF.format(
        node=node, dir=d, ctld_port=free_port(), slurmd_port=free_port(),
        cpus=os.cpu_count()))
    env = dict(command_env(), SLURM_CONF=str(d / "slurm.conf"))
    log = open(d / "daemons.out", "w")
    daemons = []

    def start(*cmd):
        daemons.append(subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                                        start_new_session=True))
    try:
        start("munged", "--foreground", "--force", f"--socket={d}/munge.sock",
              f"--key-file={key}", f"--pid-file={d}/munged.pid", f"--log-file={d}/munged.log",
              f"--seed-file={d}/munged.seed")
        deadline = time.time() + 20
        while not (d / "munge.sock").exists() and time.time() < deadline:
            time.sleep(0.05)
        start("slurmctld", "-D", "-c")
        start("slurmd", "-D", "-N", node)
        state = ""
        while time.time() < deadline + 30:
            state = subprocess.run(["sinfo", "-h", "-o", "%t"], env=env, text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout
            if state.strip() == "idle":
                break
            time.sleep(0.2)
        assert state.strip() == "idle", state + (d / "daemons.out").read_text()
        yield env, d
    finally:
        subprocess.run(["scancel", "--full", "--quiet", "--partition=test"], env=env,
                       stderr=subprocess.DEVNULL)
        for p in reversed(daemons):
            stop(p)
        log.close()


def test_sbatch_trains_on_a_dask_cluster_of_the_job(slurm, demo, cache_dir, tmp_path):
    env, d = slurm
    output = tmp_path / "policy.json"
    job_out = tmp_path / "job.out"
    proc = subprocess.run(
        ["sbatch", "--wait", f"--output={job_out}", "--ntasks=2",
         os.path.join(ROOT, "scripts", "slurm", "dask.sbatch"),
         "/usr/bin/python3", "-m", "mlgo_env.train", "--problem=inlining", f"--corpus={demo}",
         f"--output={output}", "--minutes=2", "--rounds=1", "--search-modules=4",
         "--check-modules=2", "--pairs=2",
         "--trace-sampling-rate=0.2",
         f"--mlgo-env={MLGO_ENV}", f"--cache-dir={cache_dir}"],
        env=dict(env, MLGO_CHECKOUT=ROOT, MLGO_DASK_DIR=str(tmp_path)), cwd=str(tmp_path),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    log = job_out.read_text() if job_out.exists() else ""
    assert proc.returncode == 0, proc.stdout + log + (d / "slurmd.log").read_text()[-3000:]
    assert "dask: 2 worker(s), 2 thread(s)" in log, log
    assert "validation (" in log and output.stat().st_size > 0, log
    # The job's scheduler file and its directory are gone; no Dask process is left.
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".mlgo-dask-")]
    left = subprocess.run(["pgrep", "-f", f"--scheduler-file {tmp_path}"],
                          stdout=subprocess.PIPE, text=True).stdout
    assert not left.strip(), left
