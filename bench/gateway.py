#!/usr/bin/env python3
"""What one gateway level costs: two simulated labs ("pods") on loopback and
one real OpenSSH sshd on loopback as the jump host in front of both. Each pod
gets its own runbook (`runbook run --all --new-run --json`, verify only, as
full_runbook.py), the two pods in parallel, once direct and once through the
jump host (`ansible_ssh_common_args: -J gw`, the way a site's inventory says
it, docs/inventory.md), alternated rep by rep (direct first, then gateway
first, ...) so the drift of this shared machine hits both paths alike.

Per path: wall time of the pair, the two clients' CPU, the sims' CPU, the
jump host's CPU (its sshd and every per-connection process it forked, from
/proc: their own time and that of the children they reaped), and whether the
verdicts (status and reason of every step x host) are the same as direct.

The jump host is reached the way an operator reaches one: a `Host gw` block
(HostName, Port, User, IdentityFile, UserKnownHostsFile) in ~/.ssh/config,
here a HOME of its own for the clients, so nothing of the real ~/.ssh is read
or written. Its host key is verified (UserKnownHostsFile), as are the
nodes' behind it (the lab's runbook_known_hosts).

    python bench/gateway.py --pods 48,100 --reps 3 -o bench/results/gateway
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import asyncssh
import psutil
import yaml
from full_runbook import TIMEOUT, argv_all
from lab import Lab
from measure import ServerCPU, cpu_of, last_json, machine_cpu, median, publish, run_measured

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from tests.sshd_server import SshdServer, sshd_unavailable  # noqa: E402

GATEWAY = "gw"


def gateway_home(home: Path, gw: SshdServer) -> Path:
    """A HOME whose ~/.ssh/config says how to reach the jump host."""
    ssh = home / ".ssh"
    ssh.mkdir(parents=True, exist_ok=True, mode=0o700)
    (ssh / "config").write_text(
        f"Host {GATEWAY}\n"
        f"    HostName {gw.addr}\n"
        f"    Port {gw.port}\n"
        f"    User {gw.user}\n"
        f"    IdentityFile {gw.client_key}\n"
        f"    UserKnownHostsFile {gw.known_hosts}\n"
    )
    return home


def via_gateway(lab: Lab) -> Path:
    """The lab's inventory with every host behind the jump host."""
    doc = yaml.safe_load(lab.inventory.read_text())
    all_vars = doc["all"].setdefault("vars", {}) or {}
    all_vars["ansible_ssh_common_args"] = f"-J {GATEWAY}"
    doc["all"]["vars"] = all_vars
    path = lab.dir / "inventory-via-gw.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


class ProcCPU:
    """CPU of a process and everything it forked: its own time, its reaped
    children's, and its live descendants' (own + reaped)."""

    def __init__(self, pid: int):
        self.pid = pid

    def total(self) -> float:
        try:
            root = psutil.Process(self.pid)
            procs = [root, *root.children(recursive=True)]
        except psutil.Error:
            return 0.0
        return cpu_of(procs)


def verdicts(doc: dict) -> dict[tuple[str, str], tuple[str, str]]:
    return {
        (s["id"], host): (h["status"], h.get("reason") or "")
        for s in doc.get("steps", [])
        for host, h in (s.get("hosts") or {}).items()
    }


def run_path(
    path: str, pods: list[Lab], inventories: dict, work: Path, env: dict, gw: ProcCPU, rep: int, keep: dict
):
    """Both pods' runbooks at once; the measured pair. With `keep` (a dict), the
    pods' state directories are kept in it, by pod, for the site view."""
    results: dict = {}

    def one(lab: Lab) -> None:
        state = work / f"state-{path}-{lab.dir.name}-{rep}"
        argv = argv_all(lab, state)
        argv[argv.index("--inventory") + 1] = str(inventories[lab.dir.name])
        results[lab.dir.name] = run_measured(argv, server=ServerCPU(lab.pids()), timeout=TIMEOUT, env=env)
        if keep is None:
            shutil.rmtree(state, ignore_errors=True)
        else:
            keep[lab.dir.name] = state

    g0, (b0, _) = gw.total(), machine_cpu()
    threads = [threading.Thread(target=one, args=(lab,)) for lab in pods]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    time.sleep(0.5)  # the jump host's per-connection processes exit and are reaped (counted)
    g1, (b1, _) = gw.total(), machine_cpu()
    docs = {name: last_json(r.stdout) for name, r in results.items()}
    host_verdicts = sum(len(verdicts(d)) for d in docs.values())
    clients = sum(r.cpu for r in results.values())
    sims = sum(r.server_cpu for r in results.values())
    rec = {
        "path": path,
        "rep": rep,
        "wall": round(max(r.wall for r in results.values()), 3),
        "client_cpu": round(clients, 3),
        "sim_cpu": round(sims, 3),
        "gateway_cpu": round(g1 - g0, 3),
        "other_cpu": round((b1 - b0) - clients - sims - (g1 - g0), 3),
        "host_verdicts": host_verdicts,
        "rc": {name: r.rc for name, r in results.items()},
        "pods": {name: r.record() for name, r in results.items()},
    }
    for name, r in results.items():
        if not docs[name]:
            rec.setdefault("stderr_tail", {})[name] = r.stderr[-1500:]
    print(
        f"  {path:7} rep{rep}: wall {rec['wall']:.2f}s clients {clients:.2f}s sims {sims:.2f}s "
        f"gateway {rec['gateway_cpu']:.2f}s other {rec['other_cpu']:.2f}s verdicts {host_verdicts} "
        f"rc {rec['rc']}",
        flush=True,
    )
    return rec, {name: verdicts(d) for name, d in docs.items()}


def _cli(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "runbook", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


def _signer(path: Path, identity: str) -> str:
    """A new ed25519 key at PATH; its allowed_signers line."""
    k = asyncssh.generate_private_key("ssh-ed25519", comment=identity)
    k.write_private_key(str(path))
    os.chmod(path, 0o600)
    k.write_public_key(str(path) + ".pub")
    return f"{identity} {k.export_public_key('openssh').decode().strip()}\n"


def site_view(states: dict[str, Path], work: Path, env: dict) -> dict:
    """Each pod signs its own completion log (`runbook export`, a key of its own);
    `runbook merge-logs` puts them into one signed site log (refusing a pod signed
    by a key the pods' allowed_signers does not list), and `runbook verify-log`
    checks it, every pod log inside it included, as the customer would."""
    site = work / "site"
    site.mkdir(exist_ok=True)
    pod_signers = []
    view: dict = {"pods": {}}
    for pod, state in sorted(states.items()):
        pod_signers.append(_signer(site / f"{pod}-signer", f"{pod}@site"))
        log = site / f"{pod}.json"
        r = _cli(
            "export",
            "--state",
            str(state),
            "--sign-key",
            str(site / f"{pod}-signer"),
            "-o",
            str(log),
            env=env,
        )
        view["pods"][pod] = {
            "export_rc": r.returncode,
            "export_stderr": r.stderr[-500:] if r.returncode else "",
        }
    (site / "pod_signers").write_text("".join(pod_signers))
    merger = _signer(site / "merger", "merger@site")
    (site / "allowed_signers").write_text(merger + "".join(pod_signers))
    site_log = site / "site.json"
    m = _cli(
        "merge-logs",
        *(str(site / f"{pod}.json") for pod in sorted(states)),
        "-o",
        str(site_log),
        "--sign-key",
        str(site / "merger"),
        "--allowed-signers",
        str(site / "pod_signers"),
        env=env,
    )
    view["merge_rc"] = m.returncode
    view["merge_stderr"] = m.stderr[-800:] if m.returncode else ""
    if m.returncode == 0:
        doc = json.loads(site_log.read_text())
        summary = doc.get("summary") or {}
        view["site_status"] = summary.get("status")
        view["host_count"] = summary.get("host_count")
        view["pod_summaries"] = [
            {k: p.get(k) for k in ("name", "host_count", "hosts", "signer_identity")}
            for p in summary.get("pods", [])
        ]
        statuses: dict[str, int] = {}
        for st in (summary.get("step_status") or {}).values():
            statuses[st] = statuses.get(st, 0) + 1
        view["site_step_statuses"] = statuses
        view["site_steps_not_pass"] = {
            k: v for k, v in (summary.get("step_status") or {}).items() if v != "pass"
        }
        v = _cli(
            "verify-log", str(site_log), "--allowed-signers", str(site / "allowed_signers"), "--json", env=env
        )
        view["verify_rc"] = v.returncode
        view["verify"] = last_json(v.stdout) or v.stdout[-800:]
        # One verdict of one pod changed after signing (and the site log signed again
        # would not help: the pod's own signature covers it); here not even re-signed.
        tampered = site / "tampered.json"
        tampered.write_text(site_log.read_text().replace('"pass"', '"fail"', 1))
        shutil.copy(f"{site_log}.sig", f"{tampered}.sig")
        t = _cli(
            "verify-log", str(tampered), "--allowed-signers", str(site / "allowed_signers"), "--json", env=env
        )
        view["tampered_verify_rc"] = t.returncode
    return view


def markdown(runs: list[dict], same: dict, pods: str, reps: int, unknown: int) -> str:
    def med(path, key):
        return median([r[key] for r in runs if r["path"] == path])

    hv = med("direct", "host_verdicts")
    rows = []
    for path in ("direct", "gateway"):
        rows.append(
            f"| {path} | {med(path, 'wall'):.2f} | {med(path, 'client_cpu'):.2f} | {med(path, 'sim_cpu'):.2f} "
            f"| {med(path, 'gateway_cpu'):.2f} | {med(path, 'other_cpu'):.2f} | {med(path, 'host_verdicts'):.0f} |"
        )
    gw_per = med("gateway", "gateway_cpu") / med("gateway", "host_verdicts") * 1000
    client_extra = (med("gateway", "client_cpu") - med("direct", "client_cpu")) / hv * 1000
    wall_extra = med("gateway", "wall") - med("direct", "wall")
    wall_pairs = [
        g["wall"] - d["wall"]
        for d in runs
        if d["path"] == "direct"
        for g in runs
        if g["path"] == "gateway" and g["rep"] == d["rep"]
    ]
    pairs = [
        (g["client_cpu"] - d["client_cpu"]) / d["host_verdicts"] * 1000
        for d in runs
        if d["path"] == "direct"
        for g in runs
        if g["path"] == "gateway" and g["rep"] == d["rep"]
    ]
    identical = all(same.values())
    return "\n".join(
        [
            "# One gateway level: two pods behind one OpenSSH jump host",
            "",
            f"`python bench/gateway.py --pods {pods} --reps {reps}`: two compliant sim labs (pods) of {pods} "
            "nodes (SMs on the switches), each verified by its own `runbook run --steps steps --inventory POD/inventory.yaml "
            "--state S --all --new-run --json`, the two at once; `direct` to the nodes, `gateway` through "
            "one real `/usr/sbin/sshd` on loopback (`ansible_ssh_common_args: -J gw`, `Host gw` in the "
            f"clients' ~/.ssh/config). Paths alternated, medians of {reps} runs each; "
            f"{os.cpu_count()} cores shared by the clients, the sims, the sshd and whatever else ran "
            "(`other`).",
            "",
            "| path | wall s (pair) | clients CPU s | sims CPU s | jump host CPU s | other CPU s | host verdicts |",
            "|---|---|---|---|---|---|---|",
            *rows,
            "",
            f"* verdicts (status and reason, every step x host of both pods) identical on both paths in "
            f"every rep: **{'yes' if identical else 'NO'}** ({sum(same.values())}/{len(same)} runs); "
            f"`unknown` verdicts: {unknown}",
            f"* jump host CPU per host verdict: **{gw_per:.2f} ms** (sshd forwarding: one connection per "
            "runbook, one direct-tcpip channel per node)",
            f"* extra client CPU per host verdict through the gateway: {client_extra:.2f} ms "
            f"(per rep: {', '.join(f'{x:.2f}' for x in pairs)}): the nodes' SSH runs inside the "
            "gateway connection's SSH",
            f"* wall: {wall_extra:+.2f} s for the pair through the gateway (medians; per rep: "
            f"{', '.join(f'{x:+.2f}' for x in wall_pairs)} s)",
            "",
        ]
    )


def site_markdown(view: dict) -> str:
    out = [
        "## The site view: the pods' signed logs in one signed site log",
        "",
        "Each pod's last gateway run: `runbook export --state POD_STATE --sign-key POD_KEY -o site/POD.json` "
        "(a key per pod); `runbook merge-logs site/POD_A.json site/POD_B.json -o site/site.json --sign-key "
        "MERGER_KEY --allowed-signers site/pod_signers`; `runbook verify-log site/site.json "
        "--allowed-signers site/allowed_signers --json` (the merger and the pods' public keys).",
        "",
        "| pod | export rc | hosts | signed by |",
        "|---|---|---|---|",
    ]
    by_name = {p["name"]: p for p in view.get("pod_summaries", [])}
    for pod, p in view["pods"].items():
        ps = by_name.get(pod, {})
        out.append(
            f"| {pod} | {p['export_rc']} | {ps.get('host_count')} ({ps.get('hosts')}) | {ps.get('signer_identity')} |"
        )
    steps = ", ".join(f"{k} {v}" for k, v in sorted((view.get("site_step_statuses") or {}).items()))
    out += [
        "",
        f"* merge-logs exit {view['merge_rc']}; site status **{view.get('site_status')}** over "
        f"{view.get('host_count')} hosts; steps: {steps} "
        f"({', '.join(f'{k} {v}' for k, v in (view.get('site_steps_not_pass') or {}).items())})",
        f"* verify-log of the site log (every pod log inside re-verified): exit **{view.get('verify_rc')}**",
        f"* the site log with one `pass` turned into `fail` after signing: verify-log exits "
        f"{view.get('tampered_verify_rc')}",
        "",
    ]
    if view.get("merge_stderr"):
        out += ["merge-logs said:", "", "    " + view["merge_stderr"].replace("\n", "\n    "), ""]
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--pods",
        default="48,100",
        help="nodes per pod, comma-separated; the sim names them gpu01..gpu48, gpu001..gpu100: "
        "sizes with the same number of digits would give two pods the same hosts",
    )
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("-o", "--out", help="write OUT.json and OUT.md")
    args = ap.parse_args()
    sizes = [int(x) for x in args.pods.split(",")]
    if len(sizes) != 2 or len({len(str(max(n, 10))) for n in sizes}) != 2:
        sys.exit("--pods: two sizes with different numbers of digits (e.g. 48,100), so no host is in both")
    why = sshd_unavailable()
    if why:
        sys.exit(f"no jump host: {why}")
    work = Path(tempfile.mkdtemp(prefix="gateway-bench-"))
    gw = SshdServer(work / "gw")
    pods: list[Lab] = []
    runs: list[dict] = []
    same: dict[str, bool] = {}
    unknown = 0
    states: dict[str, Path] = {}
    try:
        gw.start()
        lifetime = TIMEOUT * 2 * args.reps + 300
        for n, tag in zip(sizes, ("-podA", "-podB")):
            # SMs on the switches: a pod is its compute nodes only (no sm01 in both pods)
            pods.append(
                Lab.start(n, work, lifetime=lifetime, timeout=600, tag=tag, extra=["--sm-on", "switch"])
            )
        inventories = {
            "direct": {lab.dir.name: lab.inventory for lab in pods},
            "gateway": {lab.dir.name: via_gateway(lab) for lab in pods},
        }
        env = {"HOME": str(gateway_home(work / "home", gw)), "RUNBOOK_OPERATOR": "bench"}
        cpu = ProcCPU(gw.proc.pid)
        for rep in range(args.reps):
            order = ("direct", "gateway") if rep % 2 == 0 else ("gateway", "direct")
            got = {}
            for path in order:
                keep = states if (path == "gateway" and rep == args.reps - 1) else None
                rec, got[path] = run_path(path, pods, inventories[path], work, env, cpu, rep, keep)
                runs.append(rec)
            same[f"rep{rep}"] = got["direct"] == got["gateway"] and bool(got["direct"])
            unknown += sum(
                1 for p in got.values() for v in p.values() for s, _ in v.values() if s == "unknown"
            )
            if not same[f"rep{rep}"]:
                diff = {
                    f"{pod}:{k[0]}:{k[1]}": (got["direct"][pod].get(k), got["gateway"][pod].get(k))
                    for pod in got["direct"]
                    for k in set(got["direct"][pod]) | set(got["gateway"].get(pod, {}))
                    if got["direct"][pod].get(k) != got["gateway"].get(pod, {}).get(k)
                }
                print(f"  rep{rep}: verdicts differ: {list(diff.items())[:10]}", flush=True)
                runs[-1]["differences"] = {k: [list(x) if x else None for x in v] for k, v in diff.items()}
        view = site_view(states, work, env)
    finally:
        for lab in pods:
            lab.stop()
        gw.stop()
        shutil.rmtree(work, ignore_errors=True)
    md = markdown(runs, same, args.pods, args.reps, unknown) + "\n" + site_markdown(view)
    publish(md, {"pods": sizes, "identical": same, "site_view": view, "runs": runs}, args.out)


if __name__ == "__main__":
    main()
