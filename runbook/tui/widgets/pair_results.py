"""A pairs/launch step's results under the step detail: per rail, each host's
NIC with its partner and measured value, coloured, the slow links and hosts
named as NodeSets; for a launch step, the split rounds and the hosts named
slow. Data from the store's journal (export/pair_view.py, the same the report
draws), read again only when the run has moved on. Hidden for other steps."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

from ...export.pair_view import GLYPH, LaunchPicture, PairPicture, kind_pictures, step_kind

STYLE = {
    "pass": "green",
    "named": "bold white on red",
    "slow": "bold red",
    "cleared": "yellow",
    "unknown": "dark_orange",
    "none": "dim",
}


def pair_text(pic: PairPicture | LaunchPicture) -> Text:
    out = Text()
    if isinstance(pic, PairPicture):
        width = max(len(h) for h in pic.hosts)
        for rail in pic.rails:
            out.append(f"rail {rail}\n", style="bold")
            for host in pic.hosts:
                cell = pic.cells.get(host, {}).get(rail)
                if cell is None:
                    continue
                out.append(f"  {host:<{width}} {cell.dev} ")
                out.append(cell.text(), style=STYLE[cell.mark])
                out.append("\n")
        links = "; ".join(f"rail {r} {d}: {h}" for r, d, h in pic.named_links) or "none"
        out.append("slow links: ", style="bold")
        out.append(links, style="bold red" if pic.named_links else "green")
        out.append("   slow hosts: ", style="bold")
        out.append(pic.named_hosts or "none", style="bold red" if pic.named_hosts else "green")
        out.append(f"   ({GLYPH['named']} named, ~ cleared, ✗ slow, ? unknown)", style="dim")
        return out
    for i, jobs in enumerate(pic.rounds, 1):
        out.append(f"round {i}: ")
        for hosts, status in jobs:
            out.append(f"{'✓' if status == 'pass' else '✗'} {hosts}  ", style=STYLE.get(status, "bold red"))
        out.append("\n")
    out.append("slow hosts: ", style="bold")
    out.append(pic.slow or "none", style="bold red" if pic.slow else "green")
    return out


class PairResults(Static):
    """Shown under the step detail for pairs/launch steps only."""

    DEFAULT_CSS = """
    PairResults { height: auto; max-height: 12; padding: 0 1; border: round $primary-darken-2; }
    PairResults.-hidden { display: none; }
    """

    def __init__(self, *, id: str | None = None):
        super().__init__("", id=id, classes="-hidden")
        self._key: tuple[str, str] | None = None

    def show(self, session: Any, step_id: str | None) -> None:
        step = session.runbook.step(step_id) if step_id else None
        as_dict = {"id": step.id, "title": step.title, "definition": step.definition} if step else {}
        if not step or not step_kind(as_dict):
            self._key = None
            self.add_class("-hidden")
            return
        key = (step_id, session.store.head())
        if key == self._key:
            return
        self._key = key
        pics = kind_pictures([as_dict], session.store.iter_journal())
        self.update(pair_text(pics[0]) if pics else Text("no pair or job results yet", style="dim"))
        self.remove_class("-hidden")
