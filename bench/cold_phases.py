#!/usr/bin/env python3
"""Cold start, phase by phase: where the time goes from process start to exit, for
`runbook run --step STEP` and raw asyncssh (bench/raw_asyncssh.py), same lab, same
run, alternating (order rotated per repetition).

    python bench/cold_phases.py [--nodes 48] [--reps 5] [--step ofed-version] [--json OUT]

Every client runs under a tiny wrapper (`python -P -c`, so the current directory
never shadows PYTHONPATH) that installs, before anything of the client is imported:
  * a PEP 578 audit hook: the last `import` before the first connect ("imports
    done": what the client imported before it could connect), the first `open` of
    the inventory (runbook) or hosts file (raw) ("inventory read"), the first and
    then every `socket.connect` to an internet address ("first TCP connect");
  * a post-import patch of asyncssh (the same for both clients): the time of each
    client-side MSG_USERAUTH_SUCCESS ("first auth done", "all connected" when as
    many as the step has hosts) and of each exit status received ("first result",
    "all results").
"Process start" is this script's clock just before it spawns the interpreter, so
interpreter start-up counts for both; "exit" is when wait4 returned. The wrapper's
hooks cost a little for both clients alike. Bytecode is cached as an installed package
has it (bench/cold_start.py explains why), filled by one discarded warm-up of each.
Medians over --reps, seconds from process start; ratios runbook/raw per repetition.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from cold_start import PY, _measured, _med  # noqa: E402
from lab import REPO, STEPS, Lab  # noqa: E402

PHASES = (
    "interpreter up",
    "inventory read",
    "imports done",
    "first TCP connect",
    "first auth done",
    "all connected",
    "first result",
    "all results",
    "exit",
)

_WRAPPER = r"""
import sys, time
T = {"interpreter up": time.time()}
_out, _kind, _target, _inv, _n = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
_last_import = [None]
_count = {"auth": 0, "exit": 0}

def _hook(ev, args):
    if ev == "import":
        if "first TCP connect" not in T:
            _last_import[0] = time.time()
    elif ev == "open":
        if "inventory read" not in T and isinstance(args[0], str) and args[0].startswith(_inv):
            T["inventory read"] = time.time()
    elif ev == "socket.connect" and isinstance(args[1], tuple) and "first TCP connect" not in T:
        T["first TCP connect"] = time.time()
        T["imports done"] = _last_import[0]

sys.addaudithook(_hook)

def _patch_connection(mod):
    from asyncssh.constants import MSG_USERAUTH_SUCCESS
    table = mod.SSHConnection._packet_handlers
    orig = table[MSG_USERAUTH_SUCCESS]
    def success(self, *a):
        r = orig(self, *a)
        if self.is_client():
            _count["auth"] += 1
            now = time.time()
            T.setdefault("first auth done", now)
            if _count["auth"] == _n:
                T["all connected"] = now
        return r
    table[MSG_USERAUTH_SUCCESS] = success

def _patch_channel(mod):
    cls = mod.SSHClientChannel
    orig = cls._process_exit_status_request
    def exit_status(self, packet):
        r = orig(self, packet)
        _count["exit"] += 1
        now = time.time()
        T.setdefault("first result", now)
        if _count["exit"] == _n:
            T["all results"] = now
        return r
    cls._process_exit_status_request = exit_status

_PATCH = {"asyncssh.connection": _patch_connection, "asyncssh.channel": _patch_channel}

class _After:
    # runs the patch right after the module's own code (not before: nothing is imported early)
    def find_spec(self, name, path=None, target=None):
        if name not in _PATCH:
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            spec = finder.find_spec(name, path, target) if hasattr(finder, "find_spec") else None
            if spec is not None:
                break
        else:
            return None
        loader, patch = spec.loader, _PATCH[name]
        class _L:
            def create_module(self, spec):
                return loader.create_module(spec)
            def exec_module(self, module):
                loader.exec_module(module)
                patch(module)
        spec.loader = _L()
        return spec

sys.meta_path.insert(0, _After())

import atexit, json
def _write():
    with open(_out, "w") as f:
        json.dump({k: v for k, v in T.items() if v is not None}, f)
atexit.register(_write)

import runpy
sys.argv = [_target] + sys.argv[6:]
if _kind == "module":
    runpy.run_module(_target, run_name="__main__", alter_sys=True)
else:
    runpy.run_path(_target, run_name="__main__")
"""


def _phased(kind: str, target: str, inv: str, n: int, args: list[str], env: dict, work: Path) -> dict:
    mark = work / f"phases-{os.getpid()}.json"
    mark.unlink(missing_ok=True)
    r = _measured([PY, "-P", "-c", _WRAPPER, str(mark), kind, target, inv, str(n), *args], env)
    marks = json.loads(mark.read_text()) if mark.exists() else {}
    r["phases"] = {k: round(v - r["t0"], 4) for k, v in marks.items()}
    r["phases"]["exit"] = round(r["wall"], 4)
    return r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=48)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--step", default="ofed-version")
    ap.add_argument("--json", help="also write every run here")
    ap.add_argument("--baseline-tree", help="also run `runbook` from this tree (before/after, same run)")
    a = ap.parse_args()

    env0 = dict(os.environ)
    env0.pop("PYTHONDONTWRITEBYTECODE", None)
    cache = Path(tempfile.mkdtemp(prefix="cold-phases-pyc-"))
    trees = {"runbook": dict(env0, PYTHONPATH=str(REPO), PYTHONPYCACHEPREFIX=str(cache / "tree"))}
    if a.baseline_tree:
        trees["runbook (baseline)"] = dict(
            env0, PYTHONPATH=str(Path(a.baseline_tree).resolve()), PYTHONPYCACHEPREFIX=str(cache / "base")
        )
    rows: dict[str, list[dict]] = {"raw-asyncssh": [], **{t: [] for t in trees}}
    try:
        with (
            tempfile.TemporaryDirectory(prefix="cold-phases-") as tmp,
            Lab.start(a.nodes, Path(tmp), lifetime=900) as lab,
        ):
            work = Path(tmp)
            files = lab.baseline_files(a.step)
            n = len(lab.targets(a.step))
            raw = ["--hosts-file", str(files["hosts"]), "--key", str(lab.key)]
            raw += ["--known-hosts", str(lab.known_hosts), "--command", lab.command(a.step), "--mode", "cold"]
            for rep in range(-1, a.reps):  # rep -1: warm-up, fills the bytecode caches
                order = list(rows)
                order = order[rep % len(order) :] + order[: rep % len(order)]
                for client in order:
                    if client == "raw-asyncssh":
                        r = _phased(
                            "path", str(HERE / "raw_asyncssh.py"), str(files["hosts"]), n, raw, env0, work
                        )
                        r["ok"] = r["rc"] == 0
                    else:
                        state = work / f"state-{client.replace(' ', '-')}"
                        # the baseline tree loads its own steps/: this checkout's may use
                        # what it does not know yet (bench/fanout.py does the same)
                        steps = Path(a.baseline_tree) / "steps" if client == "runbook (baseline)" else STEPS
                        args = ["run", "--steps", str(steps), "--inventory", str(lab.inventory)]
                        args += ["--state", str(state), "--new-run", "--json", "--step", a.step]
                        r = _phased("module", "runbook", str(lab.inventory), n, args, trees[client], work)
                        r["ok"] = r["rc"] in (0, 1) and '"pass"' in r["stdout"]
                    if not r["ok"]:
                        print(f"{client} rep {rep} rc {r['rc']}: {r['stderr'][-600:]}", file=sys.stderr)
                    r.pop("stdout"), r.pop("stderr")
                    if rep >= 0:
                        rows[client].append(r)
    finally:
        shutil.rmtree(cache, ignore_errors=True)

    print(f"# cold start by phase, step {a.step}, {a.nodes} nodes ({n} contacted), {a.reps} reps")
    print(f"# command: python bench/cold_phases.py {' '.join(sys.argv[1:])}")
    print("# seconds from process start (medians); CPU = user+sys of the whole process")
    print("| phase | " + " | ".join(rows) + " | " + " | ".join(f"{t} / raw" for t in trees) + " |")
    print("|---|" + "---|" * (len(rows) + len(trees)))
    raw_rows = rows["raw-asyncssh"]
    for ph in (*PHASES, "CPU"):
        key = (lambda r, ph=ph: r["cpu"]) if ph == "CPU" else (lambda r, ph=ph: r["phases"].get(ph))
        cells = [_med([key(r) for r in rs]) for rs in rows.values()]
        ratios = []
        for t in trees:
            rs = [key(x) / key(y) for x, y in zip(rows[t], raw_rows) if key(x) and key(y)]
            ratios.append(f"{_med(rs)}x" if rs else "-")
        print(
            f"| {ph} | "
            + " | ".join("-" if c is None else str(c) for c in cells)
            + " | "
            + " | ".join(ratios)
            + " |"
        )
    print("| ok | " + " | ".join(f"{sum(r['ok'] for r in rs)}/{len(rs)}" for rs in rows.values()) + " |")
    if a.json:
        Path(a.json).write_text(json.dumps({"args": vars(a), "contacted": n, "rows": rows}, indent=1))
    return 0 if all(r["ok"] for rs in rows.values() for r in rs) else 1


if __name__ == "__main__":
    sys.exit(main())
