"""Cost of a durable event in the store as a run grows.

For runs of 1k, 10k and 100k events (HostStarted/HostFinished pairs over
1,000 hosts; ~200-byte outputs, every 20th a 4 KiB one that goes to a blob):
- latency of one `append` (median, p99) -- each is one write + fdatasync;
- latency of one `append_many` of 100 events (median, p99, and per event);
- size on disk (journal + blobs);
- time to reopen the run (`Store.open`: read, check every line and link,
  rebuild the state) and to `verify_chain` (recompute every hash, read
  every blob -- what export does once).
Also, for scale: tinydb's default JSONStorage, one `insert` at 1k and 10k
documents (it rewrites the whole file each time).

    python bench/store_bench.py [--sizes 1000,10000,100000] [--dir DIR]

Prints a Markdown table and writes bench/results/store.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from runbook.run.events import HostFinished, HostStarted, StepStarted
from runbook.store import Store
from runbook.store.blobs import BlobStore

HOSTS = [f"gpu{i:04d}" for i in range(1, 1001)]
SMALL = "Device #1:\n  LINK_TYPE_P1    IB(1)\n  LINK_TYPE_P2    IB(1)\n" * 3
BIG = "GPU0\tX \tNV12\tNV12\tPXB\tSYS\t0-31\t0\n" * 100  # > INLINE_MAX: a blob


def events(start: int, n: int) -> list:
    """n realistic events, continuing a numbering that starts at `start`."""
    out = []
    for i in range(start, start + n):
        host, step = HOSTS[(i // 2) % len(HOSTS)], f"step-{(i // 2000) % 30:02d}"
        if i % 2 == 0:
            out.append(HostStarted(step, "verify", host, f"mlxconfig -d /dev/mst/mt4129_pciconf0 q #{i}"))
        else:
            stdout = (BIG + str(i)) if i % 40 == 1 else SMALL
            out.append(
                HostFinished(
                    step,
                    "verify",
                    host,
                    "pass",
                    "",
                    "mlxconfig -d /dev/mst/mt4129 q",
                    0,
                    stdout,
                    "",
                    1.0,
                    2.0,
                    record={"LINK_TYPE_P1": "IB(1)"},
                )
            )
    return out


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _fill(state: Path, run_id: str, n: int) -> float:
    store = Store.create(
        state,
        run_id,
        site="bench",
        operator="bench",
        tool_version="bench",
        inventory_sha256="a" * 64,
        runbook_sha256="b" * 64,
    )
    store.append(StepStarted("step-00", "verify", tuple(HOSTS), "c" * 64))
    t0 = time.perf_counter()
    seq = store.run_info()["events"]
    while seq < n:
        k = min(500, n - seq)
        store.append_many(events(seq, k))
        seq += k
    store.close()
    return time.perf_counter() - t0


def _timed(state: Path, calls) -> list[float]:
    store = Store.open(state)
    seq, out = store.run_info()["events"], []
    for arg in calls(seq):
        t = time.perf_counter()
        store.append(arg) if not isinstance(arg, list) else store.append_many(arg)
        out.append(time.perf_counter() - t)
    store.close()
    return out


def bench_size(root: Path, n: int, singles: int, batches: int) -> dict:
    """Fill a run to n events, copy it, time single appends on one copy and
    batches of 100 on the other: both measured at ~n events."""
    state, run_id = root / f"state-{n}", f"bench-{n}"
    fill = _fill(state, run_id, n)
    journal, blobs = state / run_id / "journal.jsonl", state / run_id / "blobs"
    size = {
        "journal_bytes": journal.stat().st_size,
        "blob_bytes": du(blobs),
        "blobs": len(BlobStore(blobs).names()),
    }
    t = time.perf_counter()
    store = Store.open(state, read_only=True)
    reopen = time.perf_counter() - t
    t = time.perf_counter()
    store.verify_chain()
    verify = time.perf_counter() - t
    store.close()
    copy = root / f"state-{n}-batches"
    shutil.copytree(state, copy)
    one = _timed(state, lambda seq: [e for e in events(seq, singles)])
    many = _timed(copy, lambda seq: [events(seq + b * 100, 100) for b in range(batches)])
    return {
        "events": n,
        "fill_s": round(fill, 2),
        **size,
        "reopen_s": reopen,
        "verify_chain_s": verify,
        "append_ms": {"median": statistics.median(one) * 1e3, "p99": pct(one, 99) * 1e3, "n": singles},
        "append_many_100_ms": {
            "median": statistics.median(many) * 1e3,
            "p99": pct(many, 99) * 1e3,
            "per_event": statistics.median(many) * 1e3 / 100,
            "n": batches,
        },
    }


def bench_tinydb(root: Path, n: int, inserts: int = 20) -> dict:
    from tinydb import TinyDB

    path = root / f"tinydb-{n}.json"
    db = TinyDB(path)
    db.insert_multiple(e.to_dict() for e in events(0, n))
    times = []
    for ev in events(n, inserts):
        t = time.perf_counter()
        db.insert(ev.to_dict())
        times.append(time.perf_counter() - t)
    db.close()
    return {
        "documents": n,
        "insert_ms": {"median": statistics.median(times) * 1e3, "p99": pct(times, 99) * 1e3, "n": inserts},
        "file_bytes": path.stat().st_size,
        "fsync": False,
    }


def table(results: dict) -> str:
    rows = [
        "| events | append median / p99 (ms) | append_many(100) median / p99 (ms) | per event in a batch (ms) "
        "| journal + blobs on disk | reopen (s) | verify_chain (s) |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results["store"]:
        a, m = r["append_ms"], r["append_many_100_ms"]
        size = (r["journal_bytes"] + r["blob_bytes"]) / 2**20
        rows.append(
            f"| {r['events']:,} | {a['median']:.2f} / {a['p99']:.2f} | {m['median']:.1f} / {m['p99']:.1f} "
            f"| {m['per_event']:.3f} | {size:.1f} MiB ({r['journal_bytes'] / 2**20:.1f} + "
            f"{r['blob_bytes'] / 2**20:.1f} in {r['blobs']} blobs) | {r['reopen_s']:.2f} "
            f"| {r['verify_chain_s']:.2f} |"
        )
    rows += [
        "",
        "| tinydb JSONStorage documents | insert median / p99 (ms), no fsync | file |",
        "|---:|---:|---:|",
    ]
    for r in results["tinydb"]:
        i = r["insert_ms"]
        rows.append(
            f"| {r['documents']:,} | {i['median']:.1f} / {i['p99']:.1f} | {r['file_bytes'] / 2**20:.1f} MiB |"
        )
    return "\n".join(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--singles", type=int, default=200)
    ap.add_argument("--batches", type=int, default=50)
    ap.add_argument("--dir", help="where to write the runs (default: a temp dir, removed after)")
    ap.add_argument("-o", "--output", default=str(Path(__file__).parent / "results" / "store.json"))
    args = ap.parse_args()
    root = Path(args.dir or tempfile.mkdtemp(prefix="store-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        results = {
            "machine": {
                "python": platform.python_version(),
                "cpus": os.cpu_count(),
                "platform": platform.platform(),
                "dir": str(root),
                "loadavg_at_start": os.getloadavg(),
            },
            "store": [bench_size(root, int(n), args.singles, args.batches) for n in args.sizes.split(",")],
            "tinydb": [bench_tinydb(root, n) for n in (1000, 10000)],
        }
    finally:
        if not args.dir:
            shutil.rmtree(root, ignore_errors=True)
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))
    print(
        f"\nload average at start: {results['machine']['loadavg_at_start'][0]:.1f} on "
        f"{os.cpu_count()} CPUs (other work on the machine moves fsync and CPU timings)"
    )
    print(f"\n(written to {out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
