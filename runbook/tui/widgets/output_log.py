"""One host's output at a time, fed without flooding the UI.

Lines are buffered per (step, host) as they stream and flushed into the Log
on a short timer, only for the host on show: 1,000 hosts talking at once
cost a dict append each, not a repaint each. The buffers keep a tail and are
evicted oldest-first; the full output stays in the store. A finished
command's lines are made only when its host is shown (`replace` takes a
function): 1,000 hosts finishing together do not split 1,000 outputs.

Lines written change the Log's virtual size, which Textual answers with a
layout of the whole screen (every pane re-arranged and redrawn: tens of ms
with a 1,000-host grid, more on a busy machine) on every flush and on every
start and end of the shown host's command. The pane's size does not depend on
its lines, so here a new virtual size only updates the scrollbars in place; a
layout happens only when a scrollbar appears or goes (that changes the room
left for the lines).
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Callable, Hashable

from textual.geometry import Size
from textual.reactive import Reactive
from textual.widgets import Log

Key = Hashable
Lines = Callable[[], list[str]]  # makes the lines when they are shown


class OutputLog(Log):
    # Widget's own virtual_size asks for a layout on every change (see the module's note).
    virtual_size = Reactive(Size(0, 0), layout=False)

    def watch_virtual_size(self, size: Size) -> None:
        # Scrollbar thumbs follow the new size; a scrollbar shown or hidden by it sets
        # show_*_scrollbar, reactives that do ask for the layout.
        if self.is_mounted and self.container_size:
            self._scroll_update(size)

    def __init__(
        self, *, max_lines: int = 1000, keep_keys: int = 4000, flush_every: float = 0.1, id: str | None = None
    ):
        super().__init__(max_lines=max_lines, highlight=False, auto_scroll=True, id=id)
        self.key: Key | None = None
        self._buffers: OrderedDict[Key, deque[str] | Lines] = OrderedDict()
        self._pending: list[str] = []
        self._tail = max_lines
        self._keep_keys = keep_keys
        self._flush_every = flush_every

    def on_mount(self) -> None:
        self.set_interval(self._flush_every, self.flush)

    def has(self, key: Key) -> bool:
        return key in self._buffers

    def _buffer(self, key: Key) -> deque[str] | None:
        buf = self._buffers.get(key)
        if callable(buf):  # made now, in place (the eviction order stays)
            buf = self._buffers[key] = deque(buf(), maxlen=self._tail)
        return buf

    def add_lines(self, key: Key, lines: list[str]) -> None:
        buf = self._buffer(key)
        if buf is None:
            buf = self._buffers[key] = deque(maxlen=self._tail)
            while len(self._buffers) > self._keep_keys:
                self._buffers.popitem(last=False)
        buf.extend(lines)
        if key == self.key:
            self._pending.extend(lines)

    def replace(self, key: Key, lines: list[str] | Lines) -> None:
        """The full output of a finished command replaces what streamed; `lines`
        may be a function making them, called only once the key is shown."""
        self._buffers.pop(key, None)
        self._buffers[key] = lines if callable(lines) else deque(lines, maxlen=self._tail)
        while len(self._buffers) > self._keep_keys:
            self._buffers.popitem(last=False)
        if key == self.key:
            self._show_buffer()

    def show_key(self, key: Key | None, fallback: list[str] | None = None) -> None:
        """Show another host's output: its buffer, else the fallback (e.g. from the store)."""
        self.key = key
        if key is not None and key not in self._buffers and fallback is not None:
            self._buffers[key] = deque(fallback, maxlen=self._tail)
        self._show_buffer()

    def _show_buffer(self) -> None:
        self._pending.clear()
        self.clear()
        buf = self._buffer(self.key) if self.key is not None else None
        if buf:
            self.write_lines(list(buf))

    def flush(self) -> None:
        if self._pending:
            lines, self._pending = self._pending, []
            self.write_lines(lines)
