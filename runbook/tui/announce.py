"""What a finished step says in a toast, in words: "applied on 1 host;
re-verify passed", "verify link-type-ib: 46 passed; failing on gpu[07,31]".

Plain Python (no textual): `Announcer` is fed the engine's events in order and
returns at most one message per finished step; an apply waits for the verify
the engine runs after it, so the two read as one sentence.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..inventory.load import fold
from ..run.events import Event, HostFinished, StepFinished, StepStarted

# How each action's outcome reads (past tense), by the status a host ended in.
DONE = {"apply": "applied", "rollback": "rolled back", "verify": "passed"}
BAD = ("fail", "unknown", "interrupted", "blocked")
BAD_WORDS = {"fail": "failing", "unknown": "unknown", "interrupted": "interrupted", "blocked": "blocked"}


@dataclass(frozen=True)
class Announcement:
    title: str
    message: str
    severity: str  # information | warning


def hosts_word(n: int) -> str:
    return f"{n} host{'s' if n != 1 else ''}"


def _by_status(results: dict[str, str]) -> dict[str, list[str]]:
    by: dict[str, list[str]] = {}
    for host, status in sorted(results.items()):
        by.setdefault(status, []).append(host)
    return by


# How a failed apply or rollback reads, by the status the host ended in.
ACTION_BAD_WORDS = {
    "fail": "failed",
    "unknown": "unreachable",
    "interrupted": "interrupted",
    "blocked": "blocked",
}


def _problems(by: dict[str, list[str]], words: dict[str, str] = BAD_WORDS) -> list[str]:
    return [f"{words[s]} on {fold(by[s])}" for s in BAD if by.get(s)]


def verify_words(results: dict[str, str]) -> tuple[str, bool]:
    """'46 passed; failing on gpu[07,31]' and whether all is well."""
    by = _by_status(results)
    parts = []
    if by.get("pass"):
        parts.append(f"{len(by['pass'])} passed")
    for status in ("skipped", "waived"):
        if by.get(status):
            parts.append(f"{len(by[status])} {status}")
    problems = _problems(by)
    return "; ".join(parts + problems) or "nothing to verify", not problems


def change_words(action: str, results: dict[str, str], reverify: dict[str, str] | None) -> tuple[str, bool]:
    """'applied on 1 host; re-verify passed' (apply or rollback, then the engine's re-verify)."""
    failed = {h: s for h, s in results.items() if s in BAD}
    done = [h for h in results if h not in failed]
    parts = [f"{DONE[action]} on {hosts_word(len(done))}"] if done else []
    parts += [f"{action} {w}" for w in _problems(_by_status(failed), ACTION_BAD_WORDS)]
    ok = not failed
    if reverify:
        by = _by_status(reverify)
        problems = _problems(by)
        if problems:
            parts.append("re-verify " + "; ".join(problems))
            ok = False
        else:
            parts.append("re-verify passed")
    elif done and action == "apply":
        parts.append("not verified again yet")
        ok = False
    return "; ".join(parts) or f"nothing to {action}", ok


class Announcer:
    """Fed every non-output event in order; `feed` returns the announcements due."""

    def __init__(self) -> None:
        self._results: dict[tuple[str, str], dict[str, str]] = {}
        self._changed: dict[str, tuple[str, dict[str, str]]] = {}  # step -> (apply|rollback, results)

    def feed(self, events: list[Event]) -> list[Announcement]:
        out: list[Announcement] = []
        for ev in events:
            if isinstance(ev, StepStarted):
                self._results[(ev.step_id, ev.action)] = {}
            elif isinstance(ev, HostFinished):
                self._results.setdefault((ev.step_id, ev.action), {})[ev.host] = ev.status
            elif isinstance(ev, StepFinished):
                said = self._finished(ev)
                if said is not None:
                    out.append(said)
        return out

    def flush(self) -> list[Announcement]:
        """At the end of a run: an apply whose re-verify never came (no host came back, or stopped)."""
        out = []
        for step_id, (action, results) in self._changed.items():
            words, _ = change_words(action, results, None)
            out.append(Announcement(f"{action} {step_id}", words, "warning"))
        self._changed.clear()
        return out

    def _finished(self, ev: StepFinished) -> Announcement | None:
        results = self._results.pop((ev.step_id, ev.action), {})
        if ev.action in ("apply", "rollback"):
            done = [h for h, s in results.items() if s not in BAD]
            if ev.action == "apply" and done:
                self._changed[ev.step_id] = (ev.action, results)  # the engine verifies them next
                return None
            words, ok = change_words(ev.action, results, None)
            return Announcement(f"{ev.action} {ev.step_id}", words, "information" if ok else "warning")
        if ev.step_id in self._changed:
            action, changed = self._changed.pop(ev.step_id)
            words, ok = change_words(action, changed, results)
            return Announcement(f"{action} {ev.step_id}", words, "information" if ok else "warning")
        if not results:  # every host had passed already (c, p): nothing ran
            done = ", ".join(f"{n} {s}" for s, n in sorted(ev.counts.items()) if n)
            return Announcement(
                f"{ev.action} {ev.step_id}", f"nothing left to verify ({done})", "information"
            )
        words, ok = verify_words(results)
        return Announcement(f"{ev.action} {ev.step_id}", words, "information" if ok else "warning")
