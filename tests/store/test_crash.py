"""Kill -9 at random moments: every append that returned is on disk, the
journal opens and its hash chain verifies.

A forked child appends batches in a loop (some with outputs big enough to go
to blobs) and prints `seq hash` of each batch's last entry after append
returns. The parent SIGKILLs it at a random moment -- sometimes while it is
still opening (cutting a torn tail, appending RunInterrupted) -- then opens
the run, checks every acknowledged entry is there with the same hash, and
verifies the chain. The next child continues the same run (a new run every
RUN_EVERY kills keeps each reopen small, so more kills fit in the budget).

SIGKILL tests the order of operations (nothing acknowledged before its
write); it cannot test what fsync adds against a power cut (the page cache
survives a killed process) -- test_durability checks fsync is called.
"""

from __future__ import annotations

import os
import random
import select
import signal
import time

from runbook.run.events import HostFinished, HostStarted, PendingActionChanged, StepStarted
from runbook.store import Store

from .helpers import new_store

KILLS = 60
RUN_EVERY = 12
BUDGET_S = 11.0


def _child(state, wfd: int, seed: int) -> None:
    rng = random.Random(seed)
    store = Store.open(state)
    os.write(wfd, b"ready\n")
    n = 0
    while True:
        n += 1
        step, hosts = f"step-{n % 7}", [f"gpu{rng.randint(1, 48):02d}" for _ in range(rng.randint(1, 4))]
        batch = [StepStarted(step, "verify", tuple(hosts), "5" * 64)]
        batch += [HostStarted(step, "verify", h, f"check {n}") for h in hosts]
        if rng.random() < 0.5:
            store.append_many(batch)
            batch = []
        for h in hosts:
            size = rng.choice([10, 300, 5000, 40000])
            batch.append(
                HostFinished(
                    step,
                    "verify",
                    h,
                    rng.choice(["pass", "fail"]),
                    f"n={n}",
                    f"check {n}",
                    0,
                    f"{n}:{h}:" + "o" * size,
                    "",
                    1.0,
                    2.0,
                )
            )
        if rng.random() < 0.2:
            batch.append(PendingActionChanged(step, hosts[0], "reboot", "owed"))
        for part in [batch] if rng.random() < 0.5 else [[e] for e in batch]:
            last = store.append_many(part)[-1]
            os.write(wfd, f"{last['seq']} {last['hash']}\n".encode())


def _spawn(state, seed: int) -> tuple[int, int]:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: never returns into pytest
        code = 0
        try:
            os.close(r)
            _child(state, w, seed)
        except BaseException as exc:
            os.write(w, f"error {type(exc).__name__}: {exc}\n".encode())
            code = 1
        finally:
            os._exit(code)
    os.close(w)
    return pid, r


def _read_until(fd: int, token: bytes, timeout: float) -> bytes:
    data, end = b"", time.monotonic() + timeout
    while token not in data and time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], max(0.0, end - time.monotonic()))
        if not ready:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        data += chunk
    return data


def _drain(fd: int) -> bytes:
    data = b""
    while chunk := os.read(fd, 65536):
        data += chunk
    os.close(fd)
    return data


def test_kill_minus_9_loses_nothing_acknowledged(tmp_path):
    rng = random.Random(20261129)
    acked: dict[int, str] = {}
    kills, during_open, total, torn, started = 0, 0, 0, 0, time.monotonic()
    while kills < KILLS and time.monotonic() - started < BUDGET_S:
        if kills % RUN_EVERY == 0:
            new_store(tmp_path, f"run-{kills // RUN_EVERY:02d}").close()
            total += len(acked)
            acked = {}
        pid, fd = _spawn(tmp_path, rng.randrange(1 << 30))
        if rng.random() < 0.2:  # kill while it opens (cuts a torn tail, appends RunInterrupted)
            time.sleep(rng.uniform(0, 0.03))
            data = b""
            during_open += 1
        else:
            data = _read_until(fd, b"ready\n", 10)
            assert b"ready\n" in data, data
            time.sleep(rng.uniform(0, 0.12))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        data += _drain(fd)
        assert b"error" not in data, data.decode(errors="replace")
        for line in data.decode().splitlines():
            if line != "ready":
                seq, h = line.split()
                acked[int(seq)] = h
        kills += 1
        with Store.open(tmp_path) as store:  # opens: header, every line's checksum, the links
            torn += bool(store.recovered)
            on_disk = {e["seq"]: e["hash"] for e in store.journal()}
            missing = {s for s in acked if on_disk.get(s) != acked[s]}
            assert not missing, f"acknowledged but lost after kill {kills}: {sorted(missing)[:5]}"
            if kills % 8 == 0:
                assert store.verify_chain() == store.head()  # every hash recomputed, blobs read
    total += len(acked)
    print(
        f"{kills} kills ({during_open} while opening), {total} acknowledged appends, {torn} torn tails cut, "
        f"{time.monotonic() - started:.1f} s"
    )
    assert kills >= 24, f"only {kills} kills fit in the time budget"
    assert total > kills  # the children did get work done between kills
    with Store.open(tmp_path, read_only=True) as store:
        assert store.verify_chain() == store.head()
        assert max(acked) <= store.run_info()["events"]
