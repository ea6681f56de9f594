"""Who is running the tool: recorded in the run, on every decision, in the log."""

from __future__ import annotations

import getpass
import os


def operator_name(cli_value: str | None = None) -> str:
    """--operator, else $RUNBOOK_OPERATOR, else the login name."""
    for value in (cli_value, os.environ.get("RUNBOOK_OPERATOR")):
        if value and value.strip():
            return value.strip()
    try:
        return getpass.getuser()
    except Exception:  # no LOGNAME/USER and no passwd entry (some containers)
        return f"uid-{os.getuid()}"
