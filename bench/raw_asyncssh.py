#!/usr/bin/env python3
"""Raw asyncssh fan-out: the SSH part of a step and nothing else (the floor for
our stack). Same choices as runbook's transport, so the ratio measures our
stack and not a different SSH configuration:
  * the same cipher preference (aes128-gcm first, then asyncssh's defaults),
  * the same client key and the same known_hosts, strictly checked,
  * the same bound on concurrent handshakes (64); commands are not bounded.

  cold: for every host connect, run the command, close.
  warm: connect every host, run the command once (the "first step"), then time
        --rounds more rounds over the open connections (median reported).

Hosts file: one `name address port user` per line (bench/lab.py writes it).
Prints one JSON object on stdout: ok count, errors, phase timings.
"""

from __future__ import annotations

import time

T0, C0 = time.perf_counter(), time.process_time()

import argparse  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402

import asyncssh  # noqa: E402
from asyncssh.encryption import get_default_encryption_algs  # noqa: E402

T_IMPORTED, C_IMPORTED = time.perf_counter(), time.process_time()

_GCM = ["aes128-gcm@openssh.com", "aes256-gcm@openssh.com"]
ENCRYPTION_ALGS = _GCM + [a.decode() for a in get_default_encryption_algs() if a.decode() not in _GCM]


class Phase:
    def __init__(self):
        self.w0, self.c0 = time.perf_counter(), time.process_time()

    def done(self) -> dict:
        return {
            "wall": round(time.perf_counter() - self.w0, 4),
            "cpu": round(time.process_time() - self.c0, 4),
        }


def read_hosts(path: str) -> list[tuple[str, str, int, str]]:
    out = []
    for line in open(path, encoding="utf-8"):
        if line.strip():
            name, addr, port, user = line.split()
            out.append((name, addr, int(port), user))
    return out


def make_connect(key_file: str, known_hosts_file: str, handshakes: int, first_host: tuple):
    key = asyncssh.read_private_key(key_file)
    known = asyncssh.read_known_hosts(known_hosts_file)
    # Entries by address ([127.x.y.z]:port) are used as they are; a file that
    # names hosts only by their inventory name needs the name as the alias.
    text = open(known_hosts_file, encoding="utf-8").read()
    _name, addr, port, _user = first_host
    by_alias = f"[{addr}]:{port}" not in text and f"{addr} " not in text
    opts = asyncssh.SSHClientConnectionOptions(
        client_keys=[key],
        known_hosts=known,
        agent_path=None,
        config=[],
        encryption_algs=ENCRYPTION_ALGS,
        connect_timeout=120,
        login_timeout=120,
    )
    sem = asyncio.Semaphore(handshakes)

    async def connect(name, addr, port, user):
        alias = {"host_key_alias": name} if by_alias else {}
        async with sem:
            return await asyncssh.connect(addr, port, username=user, options=opts, config=None, **alias)

    return connect


def _ok(r) -> bool:
    return r.exit_status == 0 and bool(r.stdout.strip())


async def cold(hosts, cmd, connect) -> tuple[list, dict]:
    async def one(h):
        try:
            async with await connect(*h) as conn:
                return h[0], await conn.run(cmd, check=False), None
        except (TimeoutError, asyncssh.Error, OSError) as e:
            return h[0], None, f"{type(e).__name__}: {e}"

    ph = Phase()
    res = await asyncio.gather(*(one(h) for h in hosts))
    return res, {"fanout": ph.done()}


async def warm(hosts, cmd, connect, rounds: int) -> tuple[list, dict]:
    async def op(h):
        try:
            return h[0], await connect(*h), None
        except (TimeoutError, asyncssh.Error, OSError) as e:
            return h[0], None, f"{type(e).__name__}: {e}"

    async def run(name, conn):
        try:
            return name, await conn.run(cmd, check=False), None
        except (asyncssh.Error, OSError) as e:
            return name, None, f"{type(e).__name__}: {e}"

    phases = {}
    ph = Phase()
    opened = await asyncio.gather(*(op(h) for h in hosts))
    conns = [(n, c) for n, c, _ in opened if c is not None]
    errs = [(n, None, e) for n, c, e in opened if c is None]
    await asyncio.gather(*(run(n, c) for n, c in conns))  # the "first step"
    phases["connect_and_first"] = ph.done()
    rounds_ph, res = [], []
    for _ in range(max(1, rounds)):
        ph = Phase()
        res = await asyncio.gather(*(run(n, c) for n, c in conns))
        rounds_ph.append(ph.done())
    rounds_ph.sort(key=lambda p: p["wall"])
    phases["warm"] = rounds_ph[len(rounds_ph) // 2]
    for _, c in conns:
        c.close()
    await asyncio.gather(*(c.wait_closed() for _, c in conns))
    return res + errs, phases


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hosts-file", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--known-hosts", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--mode", choices=("cold", "warm"), default="cold")
    ap.add_argument("--handshakes", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=1)
    a = ap.parse_args()
    hosts = read_hosts(a.hosts_file)

    async def go():
        connect = make_connect(a.key, a.known_hosts, a.handshakes, hosts[0])
        if a.mode == "cold":
            return await cold(hosts, a.command, connect)
        return await warm(hosts, a.command, connect, a.rounds)

    total = Phase()
    res, phases = asyncio.run(go())
    phases["total_after_imports"] = total.done()
    ok = sum(1 for _, r, _ in res if r is not None and _ok(r))
    errors = [
        f"{n}: {e or f'rc={r.exit_status} out={r.stdout!r} err={r.stderr!r}'}"
        for n, r, e in res
        if not (r is not None and _ok(r))
    ]
    print(
        json.dumps(
            {
                "client": "raw-asyncssh",
                "mode": a.mode,
                "n": len(hosts),
                "ok": ok,
                "errors": len(errors),
                "first_errors": errors[:3],
                "startup": {"wall": round(T_IMPORTED - T0, 4), "cpu": round(C_IMPORTED - C0, 4)},
                "phases": phases,
                "asyncssh": asyncssh.__version__,
            }
        )
    )


if __name__ == "__main__":
    main()
