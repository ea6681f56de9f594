#!/usr/bin/env python3
"""What a new file costs on this machine's file system, and what one record
appended to a pack costs: the two ways the store has kept command outputs
(runbook/store/blobs.py).

    python bench/fs_create.py [--files 30000] [--size 2000] [--dir DIR] [--settle 40]

Four timings, kernel and user CPU of this process:
  * files, fresh: N files as the store wrote a blob (create a temp file, write,
    rename; no fsync, so only the file system's own work is timed);
  * files, right after deleting as many: the same, with the N files of the run
    before just deleted. ext4 without a journal skips, for every new inode, the
    ones freed in the last 30 s (fs/ext4/ialloc.c, recently_deleted), and a
    benchmark that deletes a run's state before the next run pays it;
  * files, after --settle seconds without deletions;
  * pack: the same N outputs appended to one file.
DIR defaults to a new directory under the system's temporary directory (the same
file system as the benchmarks' state).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path


def _timed(label: str, fn) -> dict:
    t0, c0 = time.perf_counter(), os.times()
    fn()
    c1 = os.times()
    r = {
        "case": label,
        "wall_s": round(time.perf_counter() - t0, 3),
        "sys_s": round(c1.system - c0.system, 3),
        "user_s": round(c1.user - c0.user, 3),
    }
    print(
        f"{label:40} wall {r['wall_s']:7.2f} s  kernel {r['sys_s']:7.2f} s  user {r['user_s']:5.2f} s",
        flush=True,
    )
    return r


def _files(directory: Path, n: int, data: bytes) -> None:
    directory.mkdir()
    for i in range(n):
        tmp = directory / f".tmp-{i}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.write(fd, data)
        os.close(fd)
        os.rename(tmp, directory / f"{i:064x}")


def _pack(directory: Path, n: int, data: bytes) -> None:
    directory.mkdir()
    fd = os.open(directory / "pack", os.O_WRONLY | os.O_CREAT, 0o600)
    at = 0
    for i in range(n):
        record = b"%064x %d\n" % (i, len(data)) + data + b"\n"
        os.pwrite(fd, record, at)
        at += len(record)
    os.close(fd)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=30000)
    ap.add_argument("--size", type=int, default=2000, help="bytes per output")
    ap.add_argument("--dir", help="where to create them (default: a new temporary directory)")
    ap.add_argument(
        "--settle", type=float, default=40.0, help="seconds without deletions before the third case"
    )
    a = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="fs-create-", dir=a.dir))
    data = b"x" * a.size
    try:
        _timed(f"{a.files} files, fresh", lambda: _files(root / "a", a.files, data))
        shutil.rmtree(root / "a")
        _timed(f"{a.files} files, right after deleting as many", lambda: _files(root / "b", a.files, data))
        shutil.rmtree(root / "b")
        time.sleep(a.settle)
        _timed(
            f"{a.files} files, {a.settle:g} s after the deletions", lambda: _files(root / "c", a.files, data)
        )
        _timed(f"{a.files} records appended to one pack", lambda: _pack(root / "d", a.files, data))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
