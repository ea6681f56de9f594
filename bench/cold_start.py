#!/usr/bin/env python3
"""Cold start: from process start to the first SSH connection, for
`runbook run --step STEP` and for raw asyncssh (bench/raw_asyncssh.py), in the
same run, alternating, plus `runbook --version`.

    python bench/cold_start.py [--nodes 48] [--reps 5] [--step ofed-version] [--lab-dir DIR]

"First connection" is the first `socket.connect` to an internet address made
by the client (a PEP 578 audit hook installed by a tiny wrapper before
anything of the client is imported, so the client's imports are measured as
they are). "Process start" is taken by this script just before it spawns the
interpreter, so interpreter start-up is included for both clients.
Per run: time to the first connect, wall to exit, CPU (user+sys, wait4).
Medians over --reps; ratios runbook/raw per repetition, then the median.

Bytecode: this machine sets PYTHONDONTWRITEBYTECODE=1, so every `runbook` start
here recompiles every module it imports (~0.6 s of `compile` in a profile),
which an installed package (pip writes .pyc files at install) never does. By
default the clients run as installed: with a bytecode cache in a temporary
PYTHONPYCACHEPREFIX, filled by one discarded warm-up run of each client.
--no-bytecode measures what this machine's environment does instead.

Which copy runs: every client starts with `python -P` (no current directory or
script directory put ahead of PYTHONPATH). Without it, `-c`/`-m` put the current
directory first, so a run started from one checkout with --baseline-tree (or
PYTHONPATH) naming another imported the checkout it was started from for both
"trees", and the before/after columns measured the same code.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from lab import REPO, STEPS, Lab  # noqa: E402

PY = sys.executable

# Runs the client (a module with -m semantics, or a script path) after installing an
# audit hook that writes the wall-clock time of the first internet-socket connect to FD 3's file.
_WRAPPER = r"""
import sys, time
_out = sys.argv[1]; _kind = sys.argv[2]; _target = sys.argv[3]
_done = []
def _hook(ev, args):
    if ev == "socket.connect" and not _done and isinstance(args[1], tuple):
        _done.append(1)
        with open(_out, "w") as f:
            f.write(repr(time.time()))
sys.addaudithook(_hook)
import runpy
sys.argv = [_target] + sys.argv[4:]
if _kind == "module":
    runpy.run_module(_target, run_name="__main__", alter_sys=True)
else:
    runpy.run_path(_target, run_name="__main__")
"""


def _measured(argv: list[str], env: dict, timeout: float = 300) -> dict:
    # stdout/stderr to files, not pipes: nothing reads a pipe while wait4 polls, so a client
    # writing more than a pipe holds (`--json` at 1,000 hosts) would block until the timeout
    out_f, err_f = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    t0 = time.time()
    proc = subprocess.Popen(argv, env=env, stdout=out_f, stderr=err_f)
    deadline = time.monotonic() + timeout
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            raise RuntimeError(f"timeout: {argv}")
        time.sleep(0.002)
    wall = time.time() - t0
    out_f.seek(0), err_f.seek(0)
    out = out_f.read().decode(errors="replace")
    err = err_f.read().decode(errors="replace")
    out_f.close(), err_f.close()
    return {
        "t0": t0,
        "wall": wall,
        "cpu": ru.ru_utime + ru.ru_stime,
        "rc": os.waitstatus_to_exitcode(status),
        "stdout": out,
        "stderr": err,
    }


def _first_connect(kind: str, target: str, args: list[str], env: dict, work: Path, tag: str) -> dict:
    mark = work / f"first-connect-{tag}"
    mark.unlink(missing_ok=True)
    r = _measured([PY, "-P", "-c", _WRAPPER, str(mark), kind, target, *args], env)
    r["to_connect"] = float(mark.read_text()) - r["t0"] if mark.exists() else None
    return r


def _med(xs):
    xs = [x for x in xs if x is not None]
    return round(statistics.median(xs), 3) if xs else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=48)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--step", default="ofed-version")
    ap.add_argument("--json", help="also write every run here")
    ap.add_argument(
        "--no-bytecode", action="store_true", help="keep PYTHONDONTWRITEBYTECODE (recompile each run)"
    )
    ap.add_argument(
        "--baseline-tree",
        help="also run `runbook` from this tree (e.g. a `git archive` of the "
        "branch point) in the same run: before/after side by side",
    )
    a = ap.parse_args()

    base_env = dict(os.environ)
    if not a.no_bytecode:
        base_env.pop("PYTHONDONTWRITEBYTECODE", None)
    cache = Path(tempfile.mkdtemp(prefix="cold-start-pyc-"))
    trees = {"": dict(base_env, PYTHONPATH=str(REPO), PYTHONPYCACHEPREFIX=str(cache / "tree"))}
    if a.baseline_tree:
        trees[" (baseline)"] = dict(
            base_env,
            PYTHONPATH=str(Path(a.baseline_tree).resolve()),
            PYTHONPYCACHEPREFIX=str(cache / "baseline"),
        )
    rows: dict[str, list[dict]] = {"raw-asyncssh": []}
    for t in trees:
        rows["runbook-run" + t], rows["runbook --version" + t] = [], []
    with (
        tempfile.TemporaryDirectory(prefix="cold-start-") as tmp,
        Lab.start(a.nodes, Path(tmp), lifetime=600) as lab,
    ):
        work = Path(tmp)
        files = lab.baseline_files(a.step)
        cmd = lab.command(a.step)
        raw = [
            "--hosts-file",
            str(files["hosts"]),
            "--key",
            str(lab.key),
            "--known-hosts",
            str(lab.known_hosts),
            "--command",
            cmd,
            "--mode",
            "cold",
        ]
        for rep in range(-1 if not a.no_bytecode else 0, a.reps):  # rep -1: warm-up, fills the caches
            order = list(rows)
            order = order[rep % len(order) :] + order[: rep % len(order)]  # rotate: no client always first
            for client in order:
                tree = " (baseline)" if client.endswith(" (baseline)") else ""
                env = trees[tree]
                if client.startswith("runbook-run"):
                    args = [
                        "run",
                        "--steps",
                        # the baseline tree loads its own steps/ (bench/fanout.py does the same)
                        str(Path(a.baseline_tree) / "steps" if tree else STEPS),
                        "--inventory",
                        str(lab.inventory),
                        "--state",
                        str(work / f"state{tree}"),
                        "--new-run",
                        "--json",
                        "--step",
                        a.step,
                    ]
                    r = _first_connect("module", "runbook", args, env, work, "runbook")
                    r["ok"] = r["rc"] in (0, 1) and '"pass"' in r["stdout"]
                elif client == "raw-asyncssh":
                    r = _first_connect("path", str(HERE / "raw_asyncssh.py"), raw, env, work, "raw")
                    r["ok"] = r["rc"] == 0
                else:
                    r = _measured([PY, "-P", "-m", "runbook", "--version"], env)
                    r["ok"] = r["stdout"].startswith("runbook ")
                for k in ("stdout", "stderr"):
                    if not r["ok"]:
                        print(f"{client} rep {rep} rc {r['rc']}: {r[k][-400:]}", file=sys.stderr)
                    r.pop(k)
                if rep >= 0:
                    rows[client].append(r)

    raw_r = rows["raw-asyncssh"]
    print(f"# cold start, step {a.step}, {a.nodes} nodes, {a.reps} reps (medians; seconds)")
    print(f"# command: python bench/cold_start.py {' '.join(sys.argv[1:])}")
    print(f"# bytecode cache: {'no (PYTHONDONTWRITEBYTECODE)' if a.no_bytecode else 'yes (as installed)'}")
    print("| client | start → first SSH connect | wall to exit | CPU | ok |")
    print("|---|---|---|---|---|")
    for client, rs in rows.items():
        tc = _med([r.get("to_connect") for r in rs])
        print(
            f"| {client} | {tc if tc is not None else '-'} | {_med([r['wall'] for r in rs])} | "
            f"{_med([r['cpu'] for r in rs])} | {sum(r['ok'] for r in rs)}/{len(rs)} |"
        )
    for t in trees:
        rb = rows["runbook-run" + t]
        ratio_c = [
            x["to_connect"] / y["to_connect"]
            for x, y in zip(rb, raw_r)
            if x["to_connect"] and y["to_connect"]
        ]
        ratio_w = [x["wall"] / y["wall"] for x, y in zip(rb, raw_r)]
        ratio_cpu = [x["cpu"] / y["cpu"] for x, y in zip(rb, raw_r)]
        print(
            f"| runbook-run{t} / raw-asyncssh (per rep, median) | {_med(ratio_c)}x | {_med(ratio_w)}x | "
            f"{_med(ratio_cpu)}x | |"
        )
    if a.json:
        Path(a.json).write_text(json.dumps({"args": vars(a), "rows": rows}, indent=1))
    import shutil

    shutil.rmtree(cache, ignore_errors=True)
    return 0 if all(r["ok"] for rs in rows.values() for r in rs) else 1


if __name__ == "__main__":
    sys.exit(main())
