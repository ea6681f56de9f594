"""Export the signed log from the app, then check it with the verifier;
help and stop keys."""

import io

import asyncssh
from rich.console import Console

from runbook.export import verify_log
from runbook.tui.app import make_app
from runbook.tui.screens.export import ExportScreen
from runbook.tui.screens.help import HelpScreen


async def test_export_writes_a_log_that_verifies(fixed_session, tmp_path, monkeypatch):
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)  # sign with the file, not someone's agent
    key = asyncssh.generate_private_key("ssh-ed25519", comment="tester@example")
    key_path = tmp_path / "id_ed25519"
    key.write_private_key(str(key_path))
    out = tmp_path / "out" / "log.json"
    app = make_app(fixed_session, blink=False, export_output=str(out))
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, ExportScreen)
        assert app.screen.query_one("#export-output").value == str(out)
        app.screen.query_one("#export-key").value = str(key_path)
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
    report = verify_log(out)
    assert report.ok, report.problems
    assert report.signer_identity == "tester@example"
    for name in ("log.json.sig", "log.md", "log.html"):
        assert (tmp_path / "out" / name).exists()


async def test_export_failure_is_a_message_not_a_crash(fixed_session, tmp_path, monkeypatch):
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    app = make_app(fixed_session, blink=False, export_output=str(tmp_path / "log.json"))
    messages = []
    async with app.run_test(size=(160, 48)) as pilot:
        app.notify = lambda message, **kw: messages.append((message, kw.get("severity")))  # type: ignore
        app.main.notify = app.notify
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("#export-key").value = str(tmp_path / "no-such-key")
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.is_running and app.screen is app.main
    assert any("no such key file" in m and sev == "error" for m, sev in messages), messages
    assert not (tmp_path / "log.json").exists()


async def test_help_lists_keys_and_glyphs(fixed_session):
    app = make_app(fixed_session, blink=False)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        console = Console(width=100, record=True, file=io.StringIO())
        for static in app.screen.query("Static"):
            console.print(static.content)
        text = console.export_text()
        assert "re-run the failed" in text and "✖ fail" in text and "interrupted" in text
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.main
