"""Measuring one client run: wall time, CPU of the client process and every
child it waited for, peak RSS, and the CPU the simulated lab used meanwhile.

CPU comes from wait4(): a child's rusage includes the children it reaped, so
the ssh processes of clush/pdsh/ansible count. The client runs in its own
process group so a run past its deadline can be killed without touching
anything else.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil


def machine_cpu() -> tuple[float, float]:
    """(busy, steal) CPU seconds of the whole machine, from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    hz = os.sysconf("SC_CLK_TCK")
    user, nice, system, _idle, _iowait, irq, softirq, steal = v[:8]
    return (user + nice + system + irq + softirq) / hz, steal / hz


class ServerCPU:
    """CPU used by the lab's processes (the sim and whatever it reaped)."""

    def __init__(self, pids: list[int]):
        self.procs = []
        for p in pids:
            try:
                self.procs.append(psutil.Process(p))
            except psutil.Error:
                pass

    def total(self) -> float:
        return cpu_of(self.procs)


def cpu_of(procs: list) -> float:
    """User + system CPU of these processes and of the children each has reaped
    (a process gone meanwhile counts for nothing)."""
    tot = 0.0
    for p in procs:
        try:
            t = p.cpu_times()
            tot += t.user + t.system + t.children_user + t.children_system
        except psutil.Error:
            pass
    return tot


@dataclass
class Run:
    argv: list[str]
    rc: int
    wall: float
    cpu: float
    user: float
    sys: float
    maxrss_mb: float
    server_cpu: float
    other_cpu: float
    steal: float
    timed_out: bool
    stdout: str
    stderr: str
    extra: dict = field(default_factory=dict)

    def record(self) -> dict:
        """The numbers (no output text), for the JSON results."""
        return {
            "rc": self.rc,
            "wall": round(self.wall, 3),
            "cpu": round(self.cpu, 3),
            "user": round(self.user, 3),
            "sys": round(self.sys, 3),
            "maxrss_mb": round(self.maxrss_mb, 1),
            "server_cpu": round(self.server_cpu, 3),
            "other_cpu": round(self.other_cpu, 3),
            "steal": round(self.steal, 3),
            "timed_out": self.timed_out,
            **self.extra,
        }


def run_measured(
    argv: list[str],
    *,
    env: dict | None = None,
    cwd: str | None = None,
    timeout: float = 300,
    server: ServerCPU | None = None,
    settle: float = 0.1,
) -> Run:
    s0 = server.total() if server else 0.0
    b0, st0 = machine_cpu()
    t0 = time.perf_counter()
    p = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        start_new_session=True,
    )
    bufs = {"out": b"", "err": b""}

    def reader(name, stream):
        bufs[name] = stream.read()

    threads = [
        threading.Thread(target=reader, args=("out", p.stdout)),
        threading.Thread(target=reader, args=("err", p.stderr)),
    ]
    for t in threads:
        t.start()
    timed_out = []

    def kill():
        timed_out.append(True)
        try:
            os.killpg(p.pid, signal.SIGKILL)  # only the group this run started
        except ProcessLookupError:
            pass

    timer = threading.Timer(timeout, kill)
    timer.start()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    timer.cancel()
    p.returncode = os.waitstatus_to_exitcode(status)
    for t in threads:
        t.join()
    if settle:
        time.sleep(settle)  # let the servers finish closing their side
    s1 = server.total() if server else 0.0
    b1, st1 = machine_cpu()
    cpu = ru.ru_utime + ru.ru_stime
    return Run(
        argv,
        p.returncode,
        wall,
        cpu,
        ru.ru_utime,
        ru.ru_stime,
        ru.ru_maxrss / 1024,
        s1 - s0,
        (b1 - b0) - cpu - (s1 - s0),
        st1 - st0,
        bool(timed_out),
        bufs["out"].decode(errors="replace"),
        bufs["err"].decode(errors="replace"),
    )


def last_json(text: str) -> dict:
    """The JSON document a client printed: the last line starting with '{', or
    the whole stdout when it is one (indented) document."""
    for line in reversed(text.splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                break
    try:
        return json.loads(text)
    except ValueError:
        return {}


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def publish(md: str, runs: list, out: str | None) -> None:
    """Print a bench's Markdown page; with `out`, keep OUT.json (every run) and OUT.md."""
    print(md)
    if out:
        Path(out + ".json").write_text(json.dumps(runs, indent=1) + "\n")
        Path(out + ".md").write_text(md)


def set_aside(path: Path, work: Path) -> None:
    """Move a measured run's state out of the way, to be deleted with `work` when the
    series ends. Deleted at once, a 1,000-node run's state (~200 MB, ~7,000 files
    before runbook/store/blobs.py packed the outputs) put the file system's
    work of freeing it (and of discarding its blocks: this machine's ext4 is mounted
    with `discard`) beside the next measured run. What a new file costs after mass
    deletions also moves: bench/fs_create.py, 30,000 files in 1.6 to 8.4 s of kernel
    time on this machine, fresh, right after deleting as many, and 40 s later."""
    if path.exists():
        aside = work / ".set-aside"
        aside.mkdir(exist_ok=True)
        path.rename(aside / f"{path.name}-{len(list(aside.iterdir()))}")
