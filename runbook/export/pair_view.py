"""The pair and launch results as pictures' data: for a `pairs:` step, each
host's NIC on each rail with the tests it was in (partner, measured value,
verdict) and which links or hosts the verdict names; for a `launch:` step, the
jobs of each split round and the hosts named slow. Built from the journal's
HostFinished events (their `tests`, `link`, `peer`: docs/step-kinds.md), so the
report draws exactly what was signed and the TUI what the store holds. No
textual, no SVG here: pair_svg.py and the TUI widget only lay it out."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from .verdicts import fold

_END = re.compile(r"^(?P<host>\S+) (?P<dev>\S+) \(rail (?P<rail>[^)]+)\)$")


@dataclass
class PairCell:
    host: str
    rail: str
    dev: str
    mark: str  # pass | slow | named | cleared | unknown | none
    tests: list[dict] = field(default_factory=list)  # this end's tests, first round first

    def text(self) -> str:
        """One line: glyph, then each test as partner and value ("2nd" for a tie-break)."""
        parts = []
        for t in self.tests:
            mine = t.get("client") == self.host and str(t.get("client_rail")) == self.rail
            partner = t.get("server") if mine else t.get("client")
            value = t.get("value")
            shown = f"{value:.1f}" if isinstance(value, (int, float)) else "?"
            parts.append(f"{'2nd ' if t.get('retest') else ''}{partner} {shown}")
        return f"{GLYPH[self.mark]} " + " | ".join(parts) if parts else GLYPH[self.mark]


GLYPH = {"pass": "✓", "slow": "✗", "named": "✗✗", "cleared": "~", "unknown": "?", "none": "·"}
MEANING = {
    "pass": "at or above the threshold",
    "named": "named slow: the link (or host) common to the slow tests",
    "slow": "slow, not settled (no second partner)",
    "cleared": "slow with one partner, fast with another: cleared",
    "unknown": "could not be measured",
    "none": "in no test",
}


@dataclass
class PairPicture:
    step_id: str
    title: str
    criteria: list[str]
    rails: list[str]  # columns
    hosts: list[str]  # rows, natural order
    cells: dict[str, dict[str, PairCell]]  # host -> rail -> cell
    named_links: list[tuple[str, str, str]]  # (rail, dev, folded hosts)
    named_hosts: str  # folded NodeSet of hosts named as a whole
    unit: str = "Gb/s"

    def named_text(self) -> list[str]:
        out = [f"rail {r} {d}: {h}" for r, d, h in self.named_links]
        return out


@dataclass
class LaunchPicture:
    step_id: str
    title: str
    criteria: list[str]
    rounds: list[list[tuple[str, str]]]  # round -> [(folded hosts, status)]
    slow: str  # folded NodeSet of the hosts named slow
    unknown: str
    hosts: int


def latest_finished(entries: Iterable[dict]) -> dict[str, dict[str, dict]]:
    """step -> host -> its latest verify HostFinished event (journal entries, in order)."""
    out: dict[str, dict[str, dict]] = {}
    for entry in entries:
        ev = entry.get("event") if isinstance(entry, dict) and "event" in entry else entry
        if not isinstance(ev, dict) or ev.get("type") != "HostFinished" or ev.get("action") != "verify":
            continue
        out.setdefault(str(ev.get("step_id")), {})[str(ev.get("host"))] = ev
    return out


def step_kind(step: dict) -> str:
    d = step.get("definition") or {}
    return "pairs" if d.get("pairs") else "launch" if d.get("launch") else ""


def named_ends(events: dict[str, dict]) -> set[tuple[str, str, str]]:
    """(host, dev, rail) of every end a failing host's verdict names (its `link`)."""
    out = set()
    for host, ev in events.items():
        if ev.get("status") != "fail" or not ev.get("link"):
            continue
        for part in str(ev["link"]).split(", "):
            m = _END.match(part.strip())
            if m and m["host"] == host:
                out.add((host, m["dev"], m["rail"]))
    return out


def _natural(values: Iterable[str]) -> list[str]:
    return sorted(set(values), key=lambda v: [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", v)])


def pair_picture(step: dict, events: dict[str, dict], criteria: list[str]) -> PairPicture | None:
    sid = step.get("id", "")
    named = named_ends(events)
    whole = [h for h, ev in events.items() if ev.get("status") == "fail" and _is_host_named(ev)]
    cells: dict[str, dict[str, PairCell]] = {}
    for host, ev in events.items():
        ends: dict[tuple[str, str], list[dict]] = {}
        for t in ev.get("tests") or []:
            if not isinstance(t, dict):
                continue
            for side in ("client", "server"):
                if t.get(side) == host:
                    ends.setdefault((str(t.get(f"{side}_rail")), str(t.get(f"{side}_dev"))), []).append(t)
        row = cells.setdefault(host, {})
        for (rail, dev), tests in ends.items():
            tests.sort(key=lambda t: bool(t.get("retest")))
            row[rail] = PairCell(host, rail, dev, _mark(host, dev, rail, tests, ev, named), tests)
        for h, dev, rail in named:  # a named end always shows, even with no test kept
            if h == host and rail not in row:
                row[rail] = PairCell(host, rail, dev, "named")
    if not any(cells.values()):
        return None
    rails = _natural(r for row in cells.values() for r in row)
    by_link: dict[tuple[str, str], list[str]] = {}
    for h, dev, rail in named:
        by_link.setdefault((rail, dev), []).append(h)
    links = [(r, d, fold(hs)) for (r, d), hs in sorted(by_link.items(), key=lambda kv: _natural([kv[0][0]]))]
    return PairPicture(
        sid,
        step.get("title", ""),
        criteria,
        rails,
        _natural(cells),
        cells,
        links,
        fold(whole) if whole else "",
    )


def _is_host_named(ev: dict) -> bool:
    return str(ev.get("reason", "")).startswith(f"the host {ev.get('host')} ")


def _mark(host: str, dev: str, rail: str, tests: list[dict], ev: dict, named: set) -> str:
    if (host, dev, rail) in named:
        return "named"
    statuses = [t.get("status") for t in tests]
    if all(s == "pass" for s in statuses):
        return "pass"
    if "fail" in statuses:
        # slow once, then fast with another partner (or the host passed): cleared
        later = [t.get("status") for t in tests if t.get("retest") and _end_of(t, host, rail)]
        if "pass" in later or ev.get("status") == "pass":
            return "cleared"
        return "slow"
    return "unknown"


def _end_of(t: dict, host: str, rail: str) -> bool:
    return any(t.get(s) == host and str(t.get(f"{s}_rail")) == rail for s in ("client", "server"))


def launch_picture(step: dict, events: dict[str, dict], criteria: list[str]) -> LaunchPicture | None:
    jobs: dict[tuple[int, str], str] = {}
    for ev in events.values():
        for j in ev.get("tests") or []:
            if isinstance(j, dict) and isinstance(j.get("round"), int):
                jobs[(j["round"], str(j.get("hosts", "")))] = str(j.get("status", ""))
    slow = [h for h, ev in events.items() if ev.get("status") == "fail"]
    unknown = [h for h, ev in events.items() if ev.get("status") in ("unknown", "interrupted")]
    if not jobs and not slow:
        return None
    rounds: list[list[tuple[str, str]]] = []
    for (r, hosts), status in sorted(jobs.items()):
        while len(rounds) < r:
            rounds.append([])
        rounds[r - 1].append((hosts, status))
    return LaunchPicture(
        step.get("id", ""),
        step.get("title", ""),
        criteria,
        rounds,
        fold(slow) if slow else "",
        fold(unknown) if unknown else "",
        len(events),
    )


def kind_pictures(
    steps: list[dict], entries: Iterable[dict], criteria_of=lambda step: []
) -> list[PairPicture | LaunchPicture]:
    """One picture per pairs/launch step that has results, in runbook order."""
    finished = latest_finished(entries)
    out: list[PairPicture | LaunchPicture] = []
    for step in steps:
        kind, events = step_kind(step), finished.get(step.get("id", ""), {})
        if not kind or not events:
            continue
        make = pair_picture if kind == "pairs" else launch_picture
        pic = make(step, events, criteria_of(step))
        if pic is not None:
            out.append(pic)
    return out
