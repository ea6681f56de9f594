"""The runs of a state directory: naming, finding the latest, listing.

    state/                       (--state, default state/)
      lock                       one owner at a time (lock.py)
      <run_id>/
        journal.jsonl            the run's journal (storage.py, journal.py)
        blobs/pack               outputs longer than journal.INLINE_MAX, by SHA-256 (blobs.py)
        known_hosts              keys pinned on first use (written by the transport)
        definitions/             the step definitions and inventory it ran with (definitions.py)

The whole layout: docs/state-directory.md. A run id is `YYYYmmdd-HHMMSS-xxxx`
(UTC start time and 4 random hex digits), so they sort in time order; any name of letters, digits, `.`, `_`, `-` may be
given instead. "The latest run" is the one whose journal header says it was
created last.
"""

from __future__ import annotations

import os
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UsageError
from .errors import NoRun, StoreCorrupt
from .lock import holder
from .nofollow import open_read
from .storage import decode_batch, parse_header

JOURNAL_NAME = "journal.jsonl"
BLOBS_NAME = "blobs"
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def new_run_id(now: float | None = None) -> str:
    t = time.gmtime(time.time() if now is None else now)
    return time.strftime("%Y%m%d-%H%M%S", t) + "-" + secrets.token_hex(2)


def check_run_id(run_id: str) -> str:
    if not isinstance(run_id, str) or not _RUN_ID.fullmatch(run_id):
        raise UsageError(
            f"bad run id {run_id!r}: use letters, digits, '.', '_' or '-' (at most 64), "
            "starting with a letter or digit"
        )
    return run_id


def read_header(journal: Path) -> dict[str, Any]:
    try:
        with open_read(journal) as f:
            first = f.readline(1 << 20)
    except OSError as exc:
        raise StoreCorrupt(journal, f"cannot read: {exc.strerror}") from None
    return parse_header(journal, first)


def run_dirs(state_dir: Path) -> list[Path]:
    if not state_dir.is_dir():
        return []
    return sorted(p for p in state_dir.iterdir() if (p / JOURNAL_NAME).is_file())


def resolve_run(state_dir: Path, run_id: str | None) -> Path:
    """The directory of `run_id`, or of the latest run when None."""
    if run_id is not None:
        d = state_dir / check_run_id(run_id)
        if not (d / JOURNAL_NAME).is_file():
            known = ", ".join(p.name for p in run_dirs(state_dir)[-5:]) or "none"
            raise NoRun(f"{state_dir}/: no run {run_id!r} (runs: {known})")
        return d
    dirs = run_dirs(state_dir)
    if not dirs:
        raise NoRun(f"{state_dir}/: no run has been started here yet (`runbook run` starts one)")
    return max(dirs, key=lambda d: (read_header(d / JOURNAL_NAME).get("created", 0), d.name))


def _last_line(path: Path) -> bytes:
    """The last newline-terminated line of a file (an incomplete last write is
    skipped), read backwards from the end so big journals list quickly."""
    with open_read(path) as f:
        pos = f.seek(0, os.SEEK_END)
        data = b""
        while pos > 0:
            step = min(65536, pos)
            pos -= step
            f.seek(pos)
            data = f.read(step) + data
            body = data[: data.rfind(b"\n") + 1]
            if not body:
                continue
            start = body.rfind(b"\n", 0, len(body) - 1)
            if start >= 0 or pos == 0:
                return body[start + 1 :]
        return b""


@dataclass
class RunSummary:
    """One run of the state directory as `runbook runs` lists it."""

    run_id: str
    directory: str
    site: str = ""
    operator: str = ""
    started: float | None = None
    events: int = 0  # seq of the last event
    last_event: str = ""  # its type
    last_time: float | None = None
    status: str = ""  # open | finished: <status> | interrupted
    in_use: str = ""  # who has it open now, if anyone
    problem: str = ""  # why it could not be read


def summarize(run_dir: Path, lock_holder: dict[str, Any] | None) -> RunSummary:
    """Header, first and last line only: listing stays quick for big runs."""
    journal = run_dir / JOURNAL_NAME
    s = RunSummary(run_id=run_dir.name, directory=str(run_dir))
    if lock_holder and lock_holder.get("run") == run_dir.name:
        s.in_use = f"pid {lock_holder.get('pid')} on host {lock_holder.get('host')}"
    try:
        header = read_header(journal)
        s.run_id = str(header.get("run_id", s.run_id))
        with open_read(journal) as f:
            f.readline()
            first = decode_batch(f.readline())[0]["event"]
        s.site, s.operator = first.get("site", ""), first.get("operator", "")
        s.started = first.get("time")
        last = decode_batch(_last_line(journal))[-1]
        s.events, ev = last["seq"], last["event"]
        s.last_event, s.last_time = ev.get("type", ""), ev.get("time", ev.get("ended"))
        s.status = {"RunFinished": f"finished: {ev.get('status')}", "RunInterrupted": "interrupted"}.get(
            s.last_event, "open"
        )
    except (StoreCorrupt, ValueError, KeyError, IndexError, TypeError, OSError) as exc:
        s.problem = str(exc)
    return s


def list_runs(state_dir: str | Path) -> list[RunSummary]:
    state_dir = Path(state_dir)
    who = holder(state_dir) if state_dir.is_dir() else None
    runs = [summarize(d, who) for d in run_dirs(state_dir)]
    return sorted(runs, key=lambda r: (r.started or 0, r.run_id))
