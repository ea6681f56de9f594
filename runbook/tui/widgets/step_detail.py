"""The selected step: title, why, the commands as they will run on the
selected host (after templating), the criteria, the hints; above them, while
that host runs a detached command, its elapsed and expected time (JobClock)."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Group
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from ..runview import StepText
from .job_clock import Clock, JobClock


def detail_renderable(t: StepText | None) -> Group:
    if t is None:
        return Group(Text("no step selected", style="dim"))
    parts: list[Text] = []
    title = Text()
    title.append(t.title, style="bold")
    if t.stale:
        title.append("  (changed since its results were recorded)", style="bold yellow")
    parts.append(title)
    if t.why:
        parts.append(Text(" ".join(t.why.split()), style="italic"))
    scope = Text(f"hosts {t.hosts} ({t.host_count})", style="dim")
    if t.needs:
        scope.append(f" · needs {', '.join(t.needs)}", style="dim")
    parts.append(scope)
    where = f" on {t.host}" if t.host else ""
    for label, command in t.commands:
        line = Text()
        line.append(f"{label}{where}: ", style="bold")
        line.append(command)
        if label == "apply" and t.then:
            line.append(f"   then: {t.then}", style="yellow")
        parts.append(line)
    if t.before:
        parts.append(Text("before: " + ", ".join(f"{k}={v}" for k, v in t.before.items()), style="cyan"))
    if t.criteria:
        parts.append(Text("pass when: " + "; ".join(t.criteria)))
    for line in t.decisions:
        parts.append(Text(line, style="magenta"))
    for item in t.checklist:
        parts.append(Text(f"☐ {item}"))
    for i, hint in enumerate(t.hints, 1):
        parts.append(Text(f"hint {i}: {hint}", style="dim"))
    return Group(*parts)


class StepDetail(VerticalScroll, can_focus=True):
    def __init__(
        self,
        text: StepText | None = None,
        *,
        job_of: Callable[[str, str | None], Clock | None] | None = None,
        id: str | None = None,
    ):
        super().__init__(id=id)
        self.text = text
        self.job_of = job_of  # (step, host) -> (started, expected) while a detached job runs

    def _clock(self, text: StepText | None) -> Clock | None:
        return self.job_of(text.step_id, text.host) if self.job_of and text is not None else None

    def compose(self):
        yield JobClock(self._clock(self.text))
        yield Static(detail_renderable(self.text), classes="step-detail-body")

    def show(self, text: StepText | None) -> None:
        self.query_one(JobClock).set_clock(self._clock(text))
        if text != self.text:
            self.text = text
            self.query_one(".step-detail-body", Static).update(detail_renderable(text))
