"""Tables and dates for a person (stdout stays data only with --json)."""

from __future__ import annotations

import time
from typing import Any

from rich.table import Table

from ..textfmt import flatten


def human_time(t: float | None, now: float) -> str:
    """`today 14:02 (5 min ago)`, `yesterday 09:10`, `Mon 28 Nov 14:02`, `2026-10-01 14:02`."""
    if not t:
        return "-"
    local, today = time.localtime(t), time.localtime(now)
    clock = time.strftime("%H:%M", local)
    days = (
        time.mktime(time.strptime(time.strftime("%Y-%m-%d", today), "%Y-%m-%d"))
        - time.mktime(time.strptime(time.strftime("%Y-%m-%d", local), "%Y-%m-%d"))
    ) // 86400
    if days == 0:
        ago = now - t
        if 0 <= ago < 3600:
            return f"today {clock} ({max(1, int(ago // 60))} min ago)"
        return f"today {clock}"
    if days == 1:
        return f"yesterday {clock}"
    if 1 < days < 7:
        return time.strftime("%a %d %b %H:%M", local)
    return time.strftime("%Y-%m-%d %H:%M", local)


def runs_table(rows: list[dict[str, Any]], state: str, now: float) -> Table:
    table = Table(title=f"runs in {state}")
    for col in ("run", "site", "operator", "started", "last event", "events", "status", "in use by"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            r["run_id"],
            r.get("site") or "",
            r.get("operator") or "",
            human_time(r.get("started"), now),
            human_time(r.get("last_time"), now),
            str(r.get("events", "")),
            r.get("problem") or r.get("status") or "",
            r.get("in_use") or "",
        )
    return table


def record_table(record: Any, title: str) -> Table:
    """A parsed record as `path  value` rows."""
    table = Table(title=title, show_header=True)
    table.add_column("field", overflow="fold")
    table.add_column("value", overflow="fold")
    for path, text in flatten(record):
        table.add_row(path or "(value)", text)
    return table


def wide_console():
    """A terminal keeps its width; a pipe or a file gets lines long enough not to fold the table."""
    from rich.console import Console

    console = Console()
    return console if console.is_terminal else Console(width=200)
