"""An unknown step id on the command line: say which ids come closest."""

from __future__ import annotations

from ..definition.model import Runbook
from ..errors import UsageError


def closest(word: str, choices: list[str], n: int = 3) -> list[str]:
    import difflib  # only for a mistake: a run that names known steps never needs it

    near = difflib.get_close_matches(word, choices, n=n, cutoff=0.5)
    if len(near) < n:  # a fragment (`topo`, `nccl`) is a fine start too
        near += [c for c in choices if word and word in c and c not in near][: n - len(near)]
    return near


def check_step_ids(runbook: Runbook, ids: list[str]) -> None:
    known = [s.id for s in runbook.steps]
    for step_id in ids:
        if step_id in known:
            continue
        near = closest(step_id, known)
        hint = f"; closest: {', '.join(near)}" if near else "; `runbook plan` lists every step"
        raise UsageError(f"no step {step_id!r} in the runbook{hint}")
