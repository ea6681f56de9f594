"""Every targeted host as a compact cell: glyph + name, coloured by status.

Drawn with the line API: one cached strip per row, and a status change only
drops and repaints the rows whose cells changed, so 1,000 hosts reporting at
once cost a handful of line repaints per flush, not a relayout. The glyph
carries the status, so the grid reads in monochrome (NO_COLOR) and for
colour-blind readers; colour only helps.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.reactive import var
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...glyphs import glyph, style

# Which statuses each filter keeps (None = every host).
FILTERS: dict[str, frozenset[str] | None] = {
    "all": None,
    "failing": frozenset({"fail"}),
    "unknown": frozenset({"unknown", "interrupted", "blocked"}),
}


class NodeGrid(ScrollView, can_focus=True):
    BINDINGS = [
        Binding("left,h", "move(-1, 0)", "Left", show=False),
        Binding("right,l", "move(1, 0)", "Right", show=False),
        Binding("up,k", "move(0, -1)", "Up", show=False),
        Binding("down,j", "move(0, 1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "jump(0)", "First", show=False),
        Binding("end", "jump(-1)", "Last", show=False),
    ]

    # The host under the cursor, as a reactive: a screen `watch`es it and shows that
    # host at once (a message would wait for a queue hop per DOM level, which is
    # felt while 1,000 hosts keep the event loop busy).
    cursor_host: var[str | None] = var(None, init=False)

    def __init__(self, hosts: list[str], statuses: dict[str, str], *, id: str | None = None):
        super().__init__(id=id)
        self._hosts: list[str] = []
        self._status: dict[str, str] = {}
        self._visible: list[str] = []
        self._index: dict[str, int] = {}
        self._filter = "all"
        self._cursor = 0
        self._cols = 1
        self._cell = 4
        self._rows: dict[int, Strip] = {}
        self._styles: dict[tuple[str, bool], tuple[Style, Style]] = {}
        self._base: Style | None = None  # rich_style is costly (a CSS walk): once per style change
        self._load(hosts, statuses, keep=None)
        self.set_reactive(NodeGrid.cursor_host, self.host)

    # --- data -----------------------------------------------------------
    @property
    def filter(self) -> str:
        return self._filter

    @property
    def host(self) -> str | None:
        """The host under the cursor."""
        return self._visible[self._cursor] if self._visible else None

    @property
    def visible(self) -> list[str]:
        return list(self._visible)

    def status_of(self, host: str) -> str | None:
        return self._status.get(host)

    def hosts_with(self, statuses: frozenset[str] | set[str]) -> list[str]:
        return [h for h in self._hosts if self._status[h] in statuses]

    @property
    def total(self) -> int:
        return len(self._hosts)

    def show(self, hosts: list[str], statuses: dict[str, str]) -> None:
        """Another step: other hosts. The cursor stays on the same host if it is there."""
        before = self.host
        self._load(hosts, statuses, keep=before)
        self._relayout()
        if self.host != before:
            self.cursor_host = self.host

    def update_statuses(self, changes: dict[str, str]) -> int:
        """Apply status changes; repaint only what changed. Returns the cells changed."""
        changed = [h for h, st in changes.items() if h in self._status and self._status[h] != st]
        if not changed:
            return 0
        for h in changed:
            self._status[h] = changes[h]
        keep = FILTERS[self._filter]
        if keep is None:
            for row in {self._index[h] // self._cols for h in changed}:
                self._rows.pop(row, None)
                self.refresh_line(row)
        else:
            before = self.host
            visible = [h for h in self._hosts if self._status[h] in keep]
            if visible != self._visible:
                self._set_visible(visible, before)
                self._relayout()
                if self.host != before:
                    self.cursor_host = self.host
            else:
                for row in {self._index[h] // self._cols for h in changed if h in self._index}:
                    self._rows.pop(row, None)
                    self.refresh_line(row)
        return len(changed)

    def set_filter(self, name: str) -> None:
        if name not in FILTERS:
            raise ValueError(f"unknown filter {name!r}")
        before = self.host
        self._filter = name
        keep = FILTERS[name]
        self._set_visible([h for h in self._hosts if keep is None or self._status[h] in keep], before)
        self._relayout()
        if self.host != before:
            self.cursor_host = self.host

    def select(self, host: str) -> bool:
        if host not in self._index:
            return False
        self._move_to(self._index[host])
        return True

    def _load(self, hosts: list[str], statuses: dict[str, str], keep: str | None) -> None:
        self._hosts = list(hosts)
        self._status = {h: statuses.get(h, "pending") for h in hosts}
        self._cell = max((len(h) for h in hosts), default=1) + 3  # glyph, space, name, gap
        keep_set = FILTERS[self._filter]
        self._set_visible([h for h in hosts if keep_set is None or self._status[h] in keep_set], keep)

    def _set_visible(self, visible: list[str], keep: str | None) -> None:
        self._visible = visible
        self._index = {h: i for i, h in enumerate(visible)}
        self._cursor = self._index.get(keep, min(self._cursor, max(len(visible) - 1, 0))) if keep else 0

    # --- layout and drawing ----------------------------------------------
    def _relayout(self) -> None:
        width = self.scrollable_content_region.width or self.size.width or 80
        self._cols = max(1, width // self._cell)
        rows = (len(self._visible) + self._cols - 1) // self._cols
        self._rows.clear()
        self.virtual_size = Size(self._cols * self._cell, rows)
        self.refresh()

    def on_resize(self, _event: events.Resize) -> None:
        self._relayout()
        self._scroll_to_cursor()

    def on_focus(self, _event: events.Focus) -> None:
        self._rows.clear()
        self.refresh()

    def on_blur(self, _event: events.Blur) -> None:
        self._rows.clear()
        self.refresh()

    @property
    def base_style(self) -> Style:
        if self._base is None:
            self._base = self.rich_style
        return self._base

    def _cell_styles(self, status: str, cursor: bool) -> tuple[Style, Style]:
        key = (status, cursor)
        if key not in self._styles:
            base = self.base_style
            colour = base + Style.parse(style(status) or "none")
            name = base
            if cursor:
                colour, name = colour + Style(reverse=True), name + Style(reverse=True)
            self._styles[key] = (colour, name)
        return self._styles[key]

    def render_line(self, y: int) -> Strip:
        row = y + self.scroll_offset.y
        strip = self._rows.get(row)
        if strip is None:
            strip = self._render_row(row)
            self._rows[row] = strip
        width = self.scrollable_content_region.width
        return strip.crop_extend(self.scroll_offset.x, self.scroll_offset.x + width, self.base_style)

    def _render_row(self, row: int) -> Strip:
        start = row * self._cols
        cells = self._visible[start : start + self._cols]
        base = self.base_style
        if not cells:
            if row == 0 and not self._hosts:
                return Strip([Segment(" no hosts targeted", base + Style(dim=True))])
            if row == 0:
                return Strip([Segment(f" no host is {self._filter}", base + Style(dim=True))])
            return Strip.blank(self._cols * self._cell, base)
        focused = self.has_focus
        segments = []
        name_w = self._cell - 3
        for i, host in enumerate(cells, start):
            status = self._status[host]
            colour, name = self._cell_styles(status, i == self._cursor and focused)
            if i == self._cursor and not focused:
                name = name + Style(underline=True)
            segments.append(Segment(glyph(status), colour))
            segments.append(Segment(" ", base))
            segments.append(Segment(host.ljust(name_w), name))
            segments.append(Segment(" ", base))
        return Strip(segments)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._base = None
        self._styles.clear()
        self._rows.clear()

    # --- moving ---------------------------------------------------------
    def _move_to(self, index: int) -> None:
        if not self._visible:
            return
        index = max(0, min(index, len(self._visible) - 1))
        if index == self._cursor:
            return
        old_row, self._cursor = self._cursor // self._cols, index
        for row in {old_row, index // self._cols}:
            self._rows.pop(row, None)
            self.refresh_line(row)
        self._scroll_to_cursor()
        self.cursor_host = self.host

    def _scroll_to_cursor(self) -> None:
        row = self._cursor // self._cols
        top, height = self.scroll_offset.y, self.scrollable_content_region.height
        if height <= 0:
            return
        if row < top:
            self.scroll_to(y=row, animate=False)
        elif row >= top + height:
            self.scroll_to(y=row - height + 1, animate=False)

    def action_move(self, dx: int, dy: int) -> None:
        self._move_to(self._cursor + dx + dy * self._cols)

    def action_page(self, direction: int) -> None:
        page = max(1, self.scrollable_content_region.height) * self._cols
        self._move_to(self._cursor + direction * page)

    def action_jump(self, where: int) -> None:
        self._move_to(0 if where == 0 else len(self._visible) - 1)

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        col = (offset.x + self.scroll_offset.x) // self._cell
        row = offset.y + self.scroll_offset.y
        if col < self._cols:
            self._move_to(row * self._cols + col)
