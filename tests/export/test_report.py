"""The human reports: content, folding, the matrix, and no injection from outputs."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from runbook.export import export_run

from .snapshot_builder import SnapshotBuilder

PAYLOAD = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'
FENCE_BREAK = "```\n# Injected heading\n<iframe src=//evil>\n"
SAFE_TAGS = {
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "h1",
    "h2",
    "h3",
    "h4",
    "table",
    "tr",
    "th",
    "td",
    "p",
    "ul",
    "li",
    "span",
    "strong",
    "code",
    "pre",
    "br",
    "div",
    "svg",
    "g",
    "rect",
    "text",
}


def hostile_snapshot() -> dict:
    b = SnapshotBuilder(site="site <b>bold</b>")
    for h in ("gpu01", "gpu02", "gpu03", "gpu04"):
        b.host(h)
    b.step("link-type-ib", "nic-mode", "LINK_TYPE <i>IB</i>", why="Why & <because>")
    b.step("ofed", "software", "OFED")
    for h in ("gpu01", "gpu02"):
        b.result("link-type-ib", h)
    b.result(
        "link-type-ib",
        "gpu03",
        "fail",
        stdout=PAYLOAD + "\n" + FENCE_BREAK + "line\n" * 9,
        reason="found " + PAYLOAD,
        exit_status=1,
    )
    b.result("link-type-ib", "gpu04", "fail", stdout=PAYLOAD, reason="found " + PAYLOAD, exit_status=1)
    for h in ("gpu01", "gpu02"):
        b.result("ofed", h)
    # gpu03 fails too, under a waiver (on a passing host a waiver changes nothing, as in RunState)
    b.result(
        "ofed", "gpu03", "fail", stdout="MLNX_OFED_LINUX-5.8-1.0.1.1:\n", reason="expected 23.10, found 5.8"
    )
    b.result(
        "ofed", "gpu04", "fail", stdout="\x1b[31mMLNX_OFED 5.8\x1b[0m\n", reason="expected 23.10, found 5.8"
    )
    b.decide(
        "waive", "ofed", "gpu03", "ok by <a href=javascript:alert(3)>customer</a>", operator="bob | admin"
    )
    return b.finish().build()


@pytest.fixture
def reports(tmp_path: Path, keys: dict) -> tuple[str, str]:
    result = export_run(
        hostile_snapshot(), tmp_path / "log.json", sign_key=str(keys["ed25519"]), identity="alice@example.com"
    )
    return result.html.read_text(encoding="utf-8"), result.markdown.read_text(encoding="utf-8")


class TagCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attrs: set[str] = set()
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.add(tag)
        self.attrs.update(name for name, _ in attrs)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_html_output_cannot_inject_markup(reports: tuple[str, str]) -> None:
    page, _ = reports
    parsed = TagCollector()
    parsed.feed(page)
    assert parsed.tags <= SAFE_TAGS, parsed.tags - SAFE_TAGS
    assert not any(a.startswith("on") or a in ("src", "href") for a in parsed.attrs)
    assert "<script" not in page.lower() and "javascript:alert" not in html.unescape(
        "".join(re.findall(r"<[^>]*>", page))
    )
    text = "".join(parsed.text)
    assert PAYLOAD in text  # shown to the reader as text, not dropped
    assert "site <b>bold</b>" in text and "LINK_TYPE <i>IB</i>" in text


def test_html_is_self_contained(reports: tuple[str, str]) -> None:
    page, _ = reports
    assert not re.search(r"<(link|script|img|iframe|object)\b", page, re.I)
    assert "@import" not in page and "url(" not in page
    assert "@media print" in page and "<svg" in page


def test_html_matrix_has_a_cell_per_verdict_with_glyphs(reports: tuple[str, str]) -> None:
    page, _ = reports
    svg = page[page.index("<svg") : page.index("</svg>")]
    titles = re.findall(r"<title>(.*?)</title>", svg)
    assert len(titles) == 8  # 4 hosts x 2 steps
    assert html.unescape(titles[0]).startswith("gpu01 · link-type-ib: pass")
    assert svg.count(">✗</text>") == 3 and svg.count(">W</text>") == 1


def test_failing_hosts_are_folded_and_evidence_is_shown(reports: tuple[str, str]) -> None:
    page, md = reports
    for doc in (page, md):
        assert "gpu[03-04]" in doc or "gpu[03-04]" in html.unescape(doc)
    assert "gpu[01-02]" in md  # the passing hosts of link-type-ib
    assert re.search(r"… \(lines \d+-\d+ of \d+; the whole output is in the log\)", md)
    assert "\\x1b[31mMLNX_OFED 5.8\\x1b[0m" in md  # an ANSI escape is shown, not sent raw
    assert "\x1b" not in md and "\x1b" not in page


def test_markdown_escapes_inline_text_and_fences_outputs(reports: tuple[str, str]) -> None:
    _, md = reports
    in_fence: str | None = None
    for line in md.splitlines():
        fence = re.match(r"^(`{3,})", line)
        if fence and (in_fence is None or line == in_fence):
            in_fence = None if in_fence else fence.group(1)
            continue
        if in_fence:
            continue
        assert not re.search(r"(?<!\\)<", line), line  # every < outside code is escaped
        assert not line.startswith("# Injected"), line
    assert in_fence is None
    assert "````text" in md  # the output holds ``` so its fence is longer


def test_reports_say_how_to_verify(reports: tuple[str, str]) -> None:
    page, md = reports
    command = (
        "ssh-keygen -Y verify -f allowed_signers -I alice@example.com -n runbook "
        "-s log.json.sig &lt; log.json"
    )
    assert command in page and html.unescape(command) in md
    # the key comes from the signer (signer.pub), never from the log (issue 16, B3)
    assert "echo 'alice@example.com namespaces=\"runbook\"' \"$(cut -d' ' -f1,2 signer.pub)\"" in md
    assert 'namespaces="runbook" ssh-ed25519 ' not in md
    assert "does not prove that the commands really ran" in md
