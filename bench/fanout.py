"""Fan-out of one verify step over N simulated nodes: runbook (cold: a fresh
`runbook run` process; warm: the Session API on open connections) next to raw
asyncssh (cold and warm, the floor), clush, pdsh and ansible -m raw, all
against the same lab, in an order rotated every repetition so the drift of
this shared machine hits every client alike. Ratios are taken against raw
asyncssh of the same repetition (cold rows against raw cold, warm rows
against raw warm), then the median over repetitions.
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

from lab import REPO, STEPS, Lab
from measure import ServerCPU, last_json, median, run_measured

PY = sys.executable
HERE = Path(__file__).resolve().parent
COLD_BASE, WARM_BASE = "raw-asyncssh-cold", "raw-asyncssh-warm"
# `runbook-cold` of another tree (--baseline-tree): before/after in the same run
BASELINE_CLIENT = "runbook-cold-base"
# Both runbook trees run as an installed package does, with their bytecode cached (here
# PYTHONDONTWRITEBYTECODE=1 would recompile every module on every start; bench/cold_start.py),
# each under its own prefix, filled by one discarded run before the timed ones; `-P`: the
# tree named by PYTHONPATH is imported, never the current directory's.
TREES: dict[str, Path] = {"runbook-cold": REPO}
# False: every runbook-cold run in a new --state (its first run ever: no load or lint cache,
# no earlier run). True (--cold-state kept): one --state per tree for all its runs, each a
# `--new-run`, as a field engineer's site directory keeps its state/ (the untimed first run
# is that directory's first).
KEEP_STATE = False
CLIENTS = [
    "runbook-cold",
    "raw-asyncssh-cold",
    "runbook-warm",
    "raw-asyncssh-warm",
    "clush",
    "pdsh",
    "ansible",
]
NOTES = {
    "runbook-cold": "`runbook run --step STEP --new-run --json`: a fresh process (imports, "
    "inventory and runbook load, lint, new store, connect, run, parse, judge, store, JSON)",
    "raw-asyncssh-cold": "bench/raw_asyncssh.py: fresh process, connect + run + close per host; same "
    "ciphers (aes128-gcm first), key, strict known_hosts, 64 handshakes",
    BASELINE_CLIENT: "runbook-cold of the --baseline-tree (its own steps/, the same inventory, step and options)",
    "runbook-warm": "bench/runbook_warm.py: Session API in one process; a first verify opens the "
    "connections, the timed one re-verifies every host (`again`) on them",
    "raw-asyncssh-warm": "bench/raw_asyncssh.py --mode warm: connect all, run once, time the next "
    "round on the open connections",
    "clush": "ClusterShell clush -f 100 -t 60, one OpenSSH ssh per node (KEX curve25519)",
    "pdsh": "pdsh -R ssh -f 100 -t 60, one OpenSSH ssh per node (KEX curve25519)",
    "ansible": "ansible all -m raw -f 100 -o (ControlMaster off, host_key_checking off)",
}


def _argv(
    client: str, lab: Lab, files: dict, step: str, cmd: str, work: Path, run_no: int
) -> tuple[list, dict]:
    raw = [
        PY,
        str(HERE / "raw_asyncssh.py"),
        "--hosts-file",
        str(files["hosts"]),
        "--key",
        str(lab.key),
        "--known-hosts",
        str(lab.known_hosts),
        "--command",
        cmd,
    ]
    state = work / (f"state-{client}" if KEEP_STATE and client in TREES else f"state-{client}-{run_no}")
    if client in TREES:
        # the baseline tree loads its own steps/: this checkout's may use what it
        # does not know yet (a new key, a new value); the fanned-out step is the same
        steps = TREES[client] / "steps" if client == BASELINE_CLIENT else STEPS
        return [
            PY,
            "-P",
            "-m",
            "runbook",
            "run",
            "--steps",
            str(steps),
            "--inventory",
            str(lab.inventory),
            "--state",
            str(state),
            "--new-run",
            "--json",
            "--step",
            step,
        ], {
            "PYTHONPATH": str(TREES[client]),
            "PYTHONPYCACHEPREFIX": str(work / f"pyc-{client}"),
            "PYTHONDONTWRITEBYTECODE": "",
        }
    if client == "runbook-warm":
        return [
            PY,
            str(HERE / "runbook_warm.py"),
            "--steps",
            str(STEPS),
            "--inventory",
            str(lab.inventory),
            "--state",
            str(state),
            "--step",
            step,
        ], {"PYTHONPATH": str(REPO)}  # this checkout's runbook, never another one installed
    if client == "raw-asyncssh-cold":
        return raw + ["--mode", "cold"], {}
    if client == "raw-asyncssh-warm":
        return raw + ["--mode", "warm"], {}
    if client == "clush":
        return [
            "clush",
            "-f",
            "100",
            "-t",
            "60",
            "--hostfile",
            str(files["addrs"]),
            "-o",
            f"-F {files['ssh_config']}",
            cmd,
        ], {}
    if client == "pdsh":
        return (
            ["pdsh", "-R", "ssh", "-f", "100", "-t", "60", "-w", "^" + str(files["addrs"]), cmd],
            {"PDSH_SSH_ARGS_APPEND": f"-F {files['ssh_config']}"},
        )
    if client == "ansible":
        return (
            [
                "ansible",
                "all",
                "-i",
                str(files["ansible_inventory"]),
                "-m",
                "raw",
                "-a",
                cmd,
                "-f",
                "100",
                "-o",
            ],
            {
                "ANSIBLE_CONFIG": str(files["ansible_cfg"]),
                "ANSIBLE_HOME": str(work / "ansible_home"),
                "ANSIBLE_NOCOLOR": "1",
            },
        )
    raise ValueError(client)


def _ok(client: str, out: str, expect_prefix: str) -> tuple[int, dict]:
    """Hosts that answered, and for runbook the statuses."""
    if client in TREES:
        doc = last_json(out)
        hosts = (doc.get("steps") or [{}])[0].get("hosts", {})
        statuses: dict[str, int] = {}
        for h in hosts.values():
            statuses[h["status"]] = statuses.get(h["status"], 0) + 1
        return statuses.get("pass", 0) + statuses.get("fail", 0), {"statuses": statuses}
    if client in ("runbook-warm", "raw-asyncssh-cold", "raw-asyncssh-warm"):
        doc = last_json(out)
        extra = {k: doc[k] for k in ("phases", "startup", "statuses", "first_errors") if doc.get(k)}
        return int(doc.get("ok", 0)), extra
    # clush/pdsh: "HOST: OUTPUT"; ansible -o: "HOST | CHANGED | rc=0 | (stdout) OUTPUT"
    hosts = set()
    for line in out.splitlines():
        if expect_prefix and expect_prefix in line:
            hosts.add(line.split(":", 1)[0].split(" |", 1)[0])
    return len(hosts), {}


def run_block(
    lab: Lab,
    reps: int,
    work: Path,
    step: str = "ofed-version",
    clients: list[str] = CLIENTS,
    log=print,
    ansible_once_above: int = 100,
) -> list[dict]:
    """Run every client `reps` times against a running lab."""
    runs = []
    n = lab.nodes
    work.mkdir(parents=True, exist_ok=True)
    files = lab.baseline_files(step)
    targets = lab.targets(step)
    cmd = lab.command(step)
    expect = "MLNX_OFED" if "ofed_info" in cmd else ""
    server = ServerCPU(lab.pids())
    log(f"fan-out N={n}: lab up in {lab.startup_s}s, {len(targets)} targeted hosts, command {cmd!r}")
    run_no = 0
    for client in [c for c in clients if c in TREES]:  # bytecode caches filled, not timed
        run_no += 1
        argv, env = _argv(client, lab, files, step, cmd, work, run_no)
        run_measured(argv, env=env, timeout=300)
        shutil.rmtree(work / f"state-{client}-{run_no}", ignore_errors=True)
    for rep in range(reps):
        k = rep % len(clients)
        for client in clients[k:] + clients[:k]:
            if client == "ansible" and rep > 0 and n > ansible_once_above:
                continue  # ansible is ~10x slower than the rest: one repetition is enough
            run_no += 1
            argv, env = _argv(client, lab, files, step, cmd, work, run_no)
            r = run_measured(argv, env=env, server=server, timeout=300)
            ok, extra = _ok(client, r.stdout, expect)
            rec = {
                "client": client,
                "n": n,
                "hosts": len(targets),
                "rep": rep,
                "ok": ok,
                "process": r.record(),
                **extra,
            }
            if ok != len(targets):
                rec["stderr_tail"] = r.stderr[-800:]
            runs.append(rec)
            shutil.rmtree(work / f"state-{client}-{run_no}", ignore_errors=True)  # (a kept one stays)
            w, c = metric(rec)
            log(
                f"  N={n} rep{rep} {client:18} wall {w:7.3f}s cpu {c:7.3f}s "
                f"server {r.server_cpu:6.2f}s ok {ok}/{len(targets)}"
            )
    return runs


def metric(rec: dict) -> tuple[float, float]:
    """(wall, cpu) that the table compares: the timed warm round for warm
    clients, the whole process (client + children) otherwise."""
    if rec["client"].endswith("warm"):
        ph = (rec.get("phases") or {}).get("warm")
        if ph:
            return ph["wall"], ph["cpu"]
        return float("nan"), float("nan")
    return rec["process"]["wall"], rec["process"]["cpu"]


def summarize(runs: list[dict]) -> list[dict]:
    """One row per (N, client): medians and same-repetition ratios."""
    base = {}
    for r in runs:
        if r["client"] in (COLD_BASE, WARM_BASE):
            base[(r["n"], r["rep"], r["client"])] = metric(r)
    rows = []
    for n in sorted({r["n"] for r in runs}):
        for client in [*CLIENTS, BASELINE_CLIENT]:
            rs = [r for r in runs if r["n"] == n and r["client"] == client]
            if not rs:
                continue
            ref = WARM_BASE if client.endswith("warm") else COLD_BASE
            wr, cr = [], []
            for r in rs:
                b = base.get((n, r["rep"], ref))
                w, c = metric(r)
                if b and b[0] > 0 and b[1] > 0:
                    wr.append(w / b[0])
                    cr.append(c / b[1])
            rows.append(
                {
                    "n": n,
                    "hosts": rs[0]["hosts"],
                    "client": client,
                    "reps": len(rs),
                    "ok_min": min(r["ok"] for r in rs),
                    "wall": median([metric(r)[0] for r in rs]),
                    "cpu": median([metric(r)[1] for r in rs]),
                    "wall_ratio": median(wr),
                    "cpu_ratio": median(cr),
                    "baseline": ref,
                    "server_cpu": median([r["process"]["server_cpu"] for r in rs]),
                    "maxrss_mb": median([r["process"]["maxrss_mb"] for r in rs]),
                    "process_wall": median([r["process"]["wall"] for r in rs]),
                }
            )
    return rows


def run(
    lab: Lab,
    reps: int,
    work: Path,
    step: str = "ofed-version",
    clients: list[str] = CLIENTS,
    log=print,
    ansible_once_above: int = 100,
) -> dict:
    t0 = time.time()
    runs = run_block(lab, reps, work, step, clients, log, ansible_once_above)
    return {
        "n": lab.nodes,
        "step": step,
        "command": lab.command(step),
        "runs": runs,
        "rows": summarize(runs),
        "elapsed_s": round(time.time() - t0, 1),
    }
