"""The README's first screen stays true: the Quick start's two commands exist,
the TUI paragraph names keys the app binds, the fix mark the step list draws
and the waiver's default lifetime, and the screenshot shows both."""

import re
import tomllib
from pathlib import Path

from runbook.tui.keys import KEYS
from runbook.tui.screens.reason import WAIVE_DAYS
from runbook.tui.widgets.step_list import FIX_MARK

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()
KEY_NAMES = {"?": "question_mark"}


def section(title: str) -> str:
    return README.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def tui_paragraph() -> str:
    text = section("Quick start")
    return text[text.index("In the TUI:") :].split("\n\n", 1)[0]


def test_quick_start_is_two_commands_that_exist():
    block = re.search(r"```sh\n(.*?)```", section("Quick start"), re.S).group(1)
    lines = [line.split("#", 1)[0].strip() for line in block.strip().splitlines()]
    assert lines == ["pip install -e . && runbook demo", "bash .ci/run"]
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["runbook"] == "runbook.cli.main:main"
    assert (REPO / ".ci" / "run").is_file()


def test_the_tui_paragraph_names_keys_the_app_binds():
    bound = {k.key for k in KEYS}
    named = re.findall(r"`([^`]+)`", tui_paragraph())
    keys = [k for part in named for k in part.split("/") if len(k) == 1]
    assert set(keys) >= {"c", "p", "v", "a", "r", "s", "w", "n", "e", "?"}
    for key in keys:
        assert KEY_NAMES.get(key, key) in bound, key


def test_the_tui_paragraph_says_the_fix_mark_and_the_waiver_expiry():
    text = " ".join(tui_paragraph().split())
    assert f"marked {FIX_MARK} has a fix" in text
    assert f"lapses after {WAIVE_DAYS} days" in text
    assert "failing hosts only" in text


def test_the_screenshot_shows_the_fix_mark_and_a_waiver_with_its_expiry():
    svg = (REPO / "docs" / "screenshot.svg").read_text()
    assert "](docs/screenshot.svg)" in README
    assert FIX_MARK in svg
    assert re.search(r"\(until&#160;\d{4}-\d\d-\d\d", svg), "no waiver expiry in the screenshot"
