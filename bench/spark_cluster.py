"""A Spark standalone cluster on this machine, from the pyspark package: a master and workers,
each worker a separate JVM whose executors start their own Python workers.

    with standalone_cluster(workdir, workers=2) as master:   # "spark://127.0.0.1:<port>"
        subprocess.run([spark_submit(), "--master", master, "job.py"])

Used by the cluster test and by ``bench.spark --cluster``; the README's "Spark on a cluster"
section gives the same steps as shell commands.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.run import free_port


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def spark_submit() -> str:
    return str(spark_home() / "bin" / "spark-submit")


def spark_env() -> dict[str, str]:
    """What every Spark process here runs with: this interpreter for Python, loopback only."""
    return dict(os.environ, SPARK_HOME=str(spark_home()), SPARK_LOCAL_IP="127.0.0.1",
                PYSPARK_PYTHON=sys.executable)


@contextmanager
def standalone_cluster(workdir: Path, workers: int = 2, cores: int = 1,
                       memory: str = "2g") -> Iterator[str]:
    """Start a master and ``workers`` workers; yields the master's URL once every worker has
    registered; stops them all (their process groups) on the way out."""
    workdir.mkdir(parents=True, exist_ok=True)
    port, ui_port = free_port(), free_port()
    spark_class = str(spark_home() / "bin" / "spark-class")
    master = f"spark://127.0.0.1:{port}"
    commands = [[spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                 "--port", str(port), "--webui-port", str(ui_port)]]
    for i in range(workers):
        commands.append([spark_class, "org.apache.spark.deploy.worker.Worker",
                         "--host", "127.0.0.1", "--cores", str(cores), "--memory", memory,
                         "--webui-port", "0", "--work-dir", str(workdir / f"worker-{i}"),
                         master])
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for i, command in enumerate(commands):
            name = "master" if i == 0 else f"worker-{i - 1}"
            with (workdir / f"{name}.log").open("wb") as log:
                processes.append(subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                                  env=spark_env(), start_new_session=True))
            if i == 0:
                _wait_alive(ui_port, 0, processes[0], workdir / "master.log")
        _wait_alive(ui_port, workers, processes[0], workdir / "master.log")
        yield master
    finally:
        for process in processes:
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def _wait_alive(ui_port: int, workers: int, master: subprocess.Popen[bytes],
                log: Path) -> None:
    """Until the master's status page shows ``workers`` live workers."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if master.poll() is not None:
            raise RuntimeError(f"the Spark master exited: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=5) as page:
                status = json.load(page)
            if status.get("aliveworkers", 0) >= workers:
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"the Spark cluster did not come up: {log.read_text()[-2000:]}")
