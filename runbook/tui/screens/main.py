"""The main screen: the runbook on the left, the selected step, its hosts and
the selected host's output on the right. It owns the layout and the
selection; what the keys do lives in `main_actions.py`.

Repaints are batched: events only mark what changed (`Feed`), and a timer
(every `repaint_every` seconds) redraws just the changed grid cells, step
rows and header, so a 1,000-host step never floods the UI loop.
"""

from __future__ import annotations

import time
from functools import partial
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Static

from ...definition.model import Status
from ...run.events import Event, HostFinished, HostOutput, HostStarted
from .. import heap
from ..announce import Announcer
from ..feed import Feed
from ..keys import HELP, KEYS
from ..runview import RunView, StepRow, folded
from ..widgets.header_bar import HeaderBar
from ..widgets.host_reason import HostReason
from ..widgets.host_summary import HostSummary
from ..widgets.node_grid import FILTERS, NodeGrid
from ..widgets.output_log import OutputLog
from ..widgets.pair_results import PairResults
from ..widgets.step_detail import StepDetail
from ..widgets.step_list import StepList
from .main_actions import MainActions

LIST_EVERY = 0.5  # seconds between step-list redraws while a step streams

# A finished output up to this many characters is split into lines only when shown
# (1,000 hosts finishing together); a longer one at once: the log keeps its tail only.
LAZY_MAX = 64 * 1024

# Shown once, on a run's first start (a new user's two keys).
FIRST_START = "c runs everything, ? lists the keys"

# What the line above the grid folds into NodeSets: (glyph of, statuses).
ATTENTION = (
    ("fail", frozenset({"fail"})),
    ("unknown", frozenset({"unknown", "interrupted"})),
    ("blocked", frozenset({"blocked"})),
)


def output_lines(
    command: str, stdout: str, stderr: str, status: str, exit_status: int | None, reason: str
) -> list[str]:
    """One host's result as the output pane shows it (live or from the store)."""
    lines = [f"$ {command}"] if command else []
    lines += stdout.splitlines()
    lines += [f"[stderr] {line}" for line in stderr.splitlines()]
    exit_part = f" (exit {exit_status})" if exit_status is not None else ""
    lines.append(f"→ {status}{exit_part}: {reason}" if reason else f"→ {status}{exit_part}")
    return lines


class MainScreen(MainActions, Screen):
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (36, "-tall")]

    # One list of keys (tui/keys.py): the footer, the help screen and the palette.
    BINDINGS = [Binding(k.key, k.action, k.label, show=k.footer) for k in KEYS]
    HELP_ROWS = HELP

    def __init__(
        self,
        session: Any,
        *,
        blink: bool = True,
        repaint_every: float = 0.1,
        export_output: str | None = None,
        export_key: str | None = None,
    ):
        super().__init__(id="main")
        self.session = session
        self.view = RunView(session.runbook, session.inventory, session.state)
        self.blink = blink
        self.repaint_every = repaint_every
        self.export_output = export_output
        self.export_key = export_key
        self.feed = Feed()
        self.announcer = Announcer()  # toasts in words, one per finished step
        self._said: list = []  # announcements due at the next repaint (after the screen shows it)
        self.rows: dict[str, StepRow] = {r.step_id: r for r in self.view.rows()}
        self.step_id: str | None = self.view.first_open_step()
        self.notes = self.view.resume_notes()
        self.repaints = 0  # how many timer repaints changed something (tests, benchmark)
        self._list_dirty: set[str] = set()
        self._list_shown = 0.0
        self._hinted: set[tuple[str, str]] = set()  # running hosts told their lines stream from now on

    # --- layout -----------------------------------------------------------
    def compose(self) -> ComposeResult:
        step = self.step_id
        hosts = self.view.hosts_of(step) if step else []
        yield HeaderBar(self.view.header(list(self.rows.values())), id="header")
        lines = [f"⚠ {n}" for n in self.notes] or ([f"→ {FIRST_START}"] if self.view.is_new() else [])
        yield Static("\n".join(lines), id="notice", classes="" if lines else "-hidden")
        with Horizontal(id="body"):
            yield StepList(list(self.rows.values()), id="steps")
            with Vertical(id="right"):
                yield StepDetail(
                    self.view.step_text(step, hosts[0] if hosts else None) if step else None,
                    job_of=getattr(self.session, "detached_job", None),
                    id="detail",
                )
                yield PairResults(id="pairs")
                with Vertical(id="hosts-pane"):
                    yield HostSummary(id="host-summary")
                    yield NodeGrid(hosts, self.view.statuses(step) if step else {}, id="grid")
                with Vertical(id="host-pane"):
                    yield HostReason(id="reason")
                    yield OutputLog(id="output")
        yield Footer()

    def on_mount(self) -> None:
        # The panes, looked up once: the repaint timer and the event handler use them often.
        self.grid = self.query_one(NodeGrid)
        self.output_log = self.query_one(OutputLog)
        self.reason = self.query_one(HostReason)
        self.detail = self.query_one(StepDetail)
        self.summary = self.query_one(HostSummary)
        self.header_bar = self.query_one(HeaderBar)
        steps = self.step_list = self.query_one(StepList)
        if self.step_id:
            steps.go_to(self.step_id)
        steps.focus()
        # Moving in the list or the grid shows the step / host within the same call:
        # watchers, not messages, so a busy event loop does not add a hop per DOM level.
        self.watch(steps, "highlighted", self._step_moved, init=False)
        self.watch(self.grid, "cursor_host", self._host_moved, init=False)
        # Only the host on show streams its lines (one host's output at a time): the
        # others' outputs arrive whole when their commands end, and stay in the store.
        self.session.stream_only(self.wants_lines)
        self._show_host()
        self.set_interval(self.repaint_every, self.repaint)
        heap.hold()  # what the screen holds from now on: out of the collector's walks

    def on_unmount(self) -> None:
        heap.release()

    # --- selection ----------------------------------------------------------
    @property
    def host(self) -> str | None:
        return self.grid.host

    def go_to_step(self, step_id: str) -> None:
        """Jump to a step (command palette)."""
        self.step_list.go_to(step_id)
        self._select_step(step_id)

    def _step_moved(self) -> None:
        step_id = self.step_list.step_id
        if step_id is not None:
            self._select_step(step_id)

    @on(StepList.StepChosen)
    def _step_chosen(self, event: StepList.StepChosen) -> None:
        self.grid.focus()

    def _select_step(self, step_id: str) -> None:
        if step_id == self.step_id and self.grid.total == len(self.view.hosts_of(step_id)):
            return
        self.step_id = step_id
        before = self.grid.host
        self.grid.show(self.view.hosts_of(step_id), self.view.statuses(step_id))
        if self.grid.host == before:  # else the grid's watcher has shown the host already
            self._show_host()

    def _host_moved(self) -> None:
        self._show_host()

    def wants_lines(self, step_id: str, host: str) -> bool:
        """Asked by the engine for every output line: is this host on show?"""
        return self.output_log.key == (step_id, host)

    def _show_host(self) -> None:
        step, host = self.step_id, self.host
        if step is None:
            return
        self.detail.show(self.view.step_text(step, host))
        self.query_one(PairResults).show(self.session, step)
        self.reason.show(self.view.host_facts(step, host) if host else None)
        key = (step, host) if host else None
        log = self.output_log
        fallback = None if key is None or log.has(key) else self.stored_output(step, host)
        log.show_key(key, fallback)
        if (
            key is not None
            and key not in self._hinted
            and self.session.state.raw_status(step, host) == Status.RUNNING
        ):
            self._hinted.add(key)
            log.add_lines(key, ["… live from here on; the whole output shows when the command ends"])
        self._show_summary()

    def _show_summary(self) -> None:
        grid = self.grid
        groups = tuple((status, folded(grid.hosts_with(statuses))) for status, statuses in ATTENTION)
        self.summary.show(grid.filter, len(grid.visible), grid.total, groups)

    def stored_output(self, step_id: str, host: str) -> list[str] | None:
        """The latest output of (step, host) from the store, for hosts not run in this session."""
        try:
            r = self.session.store.latest_result(step_id, host)
        except Exception as exc:
            return [f"(the stored output could not be read: {exc})"]
        if r is None:
            return None
        return output_lines(
            r.get("command") or "",
            r.get("stdout") or "",
            r.get("stderr") or "",
            str(r.get("status", "")),
            r.get("exit_status"),
            r.get("reason") or "",
        )

    def action_cycle_filter(self) -> None:
        names = list(FILTERS)
        self.grid.set_filter(names[(names.index(self.grid.filter) + 1) % len(names)])
        self._show_host()

    def on_screen_resume(self) -> None:
        """A dialog closed: the toasts it held back show now."""
        show = getattr(self.app, "show_held_toasts", None)
        if show is not None:
            show()

    def action_dismiss_notice(self) -> None:
        self.query_one("#notice").add_class("-hidden")

    # --- live events ----------------------------------------------------------
    def on_events(self, batch: list[Event]) -> None:
        """Called for every batch the engine yields, after the store has it. One pass:
        output lines (most of the events) are grouped per host, the rest noted."""
        log = self.output_log
        lines: dict[tuple[str, str], list[str]] = {}
        others: list[Event] = []
        for ev in batch:
            if type(ev) is HostOutput:
                key = (ev.step_id, ev.host)
                bucket = lines.get(key)
                if bucket is None:
                    bucket = lines[key] = []
                bucket.append(ev.line if ev.stream == "stdout" else f"[stderr] {ev.line}")
                continue
            others.append(ev)
            if isinstance(ev, HostStarted):
                self._hinted.discard((ev.step_id, ev.host))
                log.replace((ev.step_id, ev.host), [f"$ {ev.command}"])
            elif isinstance(ev, HostFinished):
                lines.pop((ev.step_id, ev.host), None)  # the full output below supersedes them
                make = partial(
                    output_lines, ev.command, ev.stdout, ev.stderr, ev.status, ev.exit_status, ev.reason
                )
                # made only if the host is shown; a long output at once (the log keeps its tail only)
                long = len(ev.stdout) + len(ev.stderr) > LAZY_MAX
                log.replace((ev.step_id, ev.host), make() if long else make)
        for key, chunk in lines.items():
            log.add_lines(key, chunk)
        self.feed.add(others)
        self._said += self.announcer.feed(others)
        self.feed.events_seen += len(batch) - len(others)

    def repaint(self, everything: bool = False, steps: tuple[str, ...] = ()) -> bool:
        """Redraw what changed since the last repaint, and `steps` whole (a run that
        ended: its steps, not every step of the runbook, which costs steps x hosts
        verdicts). Returns whether anything did."""
        ch = self.feed.take()
        activity = self.feed.activity()
        header = self.header_bar
        if not ch and not everything and not steps and header.facts.activity == activity:
            return False
        dirty = set(self.rows) if (everything or ch.interrupted) else set(ch.hosts)
        dirty.update(s for s in steps if s in self.rows)
        dirty.update(d.step_id for d in ch.decisions if d.step_id in self.rows)
        for step_id in dirty:
            self.rows[step_id] = self.view.row(step_id)
        # The step list redraws all its prompts on any change: while hosts stream in,
        # it is refreshed less often than the grid (a finished step or a decision: at once).
        self._list_dirty |= dirty
        now = time.monotonic()
        if self._list_dirty and (
            everything or steps or ch.decisions or ch.finished_steps or now - self._list_shown >= LIST_EVERY
        ):
            self.step_list.show([self.rows[s] for s in self._list_dirty])
            self._list_dirty.clear()
            self._list_shown = now
        step = self.step_id
        if step is not None and step in dirty:
            whole = everything or ch.interrupted or ch.decisions or step in steps
            changed = ch.hosts.get(step) if not whole else None
            hosts = changed if changed is not None else self.view.hosts_of(step)
            status = self.session.state.status
            self.grid.update_statuses({h: status(step, h).value for h in hosts})
            host = self.host
            if host and (changed is None or host in changed or ch.pending):
                self.reason.show(self.view.host_facts(step, host))
                self.detail.show(self.view.step_text(step, host))
            self._show_summary()
        header.show(self.view.header(list(self.rows.values()), activity))
        self._announce()
        self.repaints += 1
        return True
