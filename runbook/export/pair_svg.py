"""The pair and launch pictures as inline SVG (data: pair_view.py).

Pairs: one row per host, one column per rail; each cell the host's NIC on that
rail with each test it was in (partner and measured value), marked by a glyph
*and* a colour so it reads printed in grey: ✓ at the threshold, ✗✗ the end the
verdict names (the slow link), ✗ slow and not settled, ~ slow with one partner
but fast with another (cleared), ? not measured.
Launch: one row per split round, each job a box with its hosts (NodeSet) and
its verdict; the hosts named slow below. Every name goes through html.escape."""

from __future__ import annotations

from html import escape

from .pair_view import GLYPH, MEANING, LaunchPicture, PairPicture

CHAR_W, ROW, HEAD = 7, 18, 32
FILL = {
    "pass": "#e8f5e9",
    "named": "#ef9a9a",
    "slow": "#ffcdd2",
    "cleared": "#fff9c4",
    "unknown": "#ffe0b2",
    "none": "#ffffff",
}
JOB_FILL = {"pass": "#c8e6c9", "fail": "#ffcdd2"}


def _svg_open(cls: str, width: int, height: int, label: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="{cls}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(label)}" '
        f'font-family="DejaVu Sans Mono, monospace" font-size="11">'
    )


def render_pair_svg(pic: PairPicture) -> str:
    if not pic.hosts or not pic.rails:
        return ""
    label_w = 12 + CHAR_W * max(len(h) for h in pic.hosts)
    devs = {r: _dev_of(pic, r) for r in pic.rails}
    widths = [
        10
        + CHAR_W
        * max(
            [len(c.text()) for row in pic.cells.values() for rr, c in row.items() if rr == r]
            + [len(f"rail {r} {devs[r]}"), 10]
        )
        for r in pic.rails
    ]
    width = label_w + sum(widths) + 8
    height = HEAD + ROW * len(pic.hosts) + 8
    out = [_svg_open("pairs", width, height, f"pair results of {pic.step_id}: hosts by rails")]
    x = label_w
    for r, w in zip(pic.rails, widths):
        out.append(f'<text x="{x + 4}" y="14">{escape(f"rail {r}")}</text>')
        out.append(f'<text x="{x + 4}" y="27" fill="#555">{escape(devs[r])}</text>')
        x += w
    for i, host in enumerate(pic.hosts):
        y = HEAD + i * ROW
        out.append(f'<text x="{label_w - 6}" y="{y + ROW - 5}" text-anchor="end">{escape(host)}</text>')
        x = label_w
        for r, w in zip(pic.rails, widths):
            cell = pic.cells.get(host, {}).get(r)
            if cell is not None:
                tip = f"{host} {cell.dev} (rail {r}): {MEANING[cell.mark]} — {cell.text()}"
                weight = ' font-weight="bold"' if cell.mark in ("named", "slow") else ""
                stroke = ' stroke="#b71c1c" stroke-width="2"' if cell.mark == "named" else ' stroke="#9e9e9e"'
                out.append(
                    f'<g class="{cell.mark}"><title>{escape(tip)}</title><rect x="{x + 1}" y="{y + 1}" '
                    f'width="{w - 2}" height="{ROW - 2}" fill="{FILL[cell.mark]}"{stroke}/>'
                    f'<text x="{x + 4}" y="{y + ROW - 5}"{weight}>{escape(cell.text())}</text></g>'
                )
            x += w
    out.append("</svg>")
    return "".join(out)


def _dev_of(pic: PairPicture, rail: str) -> str:
    devs = [row[rail].dev for row in pic.cells.values() if rail in row and row[rail].dev]
    return max(set(devs), key=devs.count) if devs else ""


def render_launch_svg(pic: LaunchPicture) -> str:
    if not pic.rounds:
        return ""
    label_w = 12 + CHAR_W * len(f"round {len(pic.rounds)}")
    rows = []
    for jobs in pic.rounds:
        rows.append([(hosts, status, 14 + CHAR_W * (len(hosts) + 2)) for hosts, status in jobs])
    width = label_w + max(sum(w + 4 for *_x, w in row) for row in rows) + 8
    height = 8 + ROW * len(rows) + 4
    out = [_svg_open("launch", width, height, f"split rounds of {pic.step_id}: jobs by round")]
    for i, row in enumerate(rows):
        y = 4 + i * ROW
        out.append(f'<text x="{label_w - 6}" y="{y + ROW - 5}" text-anchor="end">round {i + 1}</text>')
        x = label_w
        for hosts, status, w in row:
            glyph = "✓" if status == "pass" else "✗" if status == "fail" else "?"
            fill = JOB_FILL.get(status, FILL["unknown"])
            out.append(
                f'<g class="job-{escape(status)}"><title>{escape(f"round {i + 1}: job over {hosts}: {status}")}'
                f'</title><rect x="{x}" y="{y + 1}" width="{w}" height="{ROW - 2}" fill="{fill}" '
                f'stroke="#9e9e9e"/><text x="{x + 4}" y="{y + ROW - 5}">{escape(f"{glyph} {hosts}")}</text></g>'
            )
            x += w + 4
    out.append("</svg>")
    return "".join(out)


def pair_legend() -> str:
    items = "".join(
        f'<span class="key"><span class="swatch" style="background:{FILL[m]}">{escape(GLYPH[m])}</span> '
        f"{escape(MEANING[m])}</span>"
        for m in ("pass", "named", "slow", "cleared", "unknown")
    )
    return f'<p class="legend">{items}</p>'
