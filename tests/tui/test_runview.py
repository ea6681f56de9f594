"""The numbers the screen shows, computed from a fixed run (no terminal)."""

from runbook.run.events import HostFinished, StepStarted
from runbook.run.state import RunState
from runbook.tui.feed import Feed
from runbook.tui.runview import RunView, restored_values

from .events_fixture import FAILING_LINK, INTERRUPTED, fixed_events, fixed_project


def view_of(events, project):
    state = RunState()
    for ev in events:
        state.apply(ev)
    state.mark_interrupted()  # what reopening a store does
    state.manual_steps = {s.id for s in project.runbook.steps if s.manual}
    return RunView(project.runbook, project.inventory, state)


def test_counts_and_status_per_step():
    project = fixed_project()
    view = view_of(fixed_events(project), project)
    rows = {r.step_id: r for r in view.rows()}
    assert rows["ssh-reachable"].status == "unknown"
    assert dict(rows["ssh-reachable"].counts) == {"unknown": 1, "pass": 49}
    assert dict(rows["link-type-ib"].counts) == {"fail": 2, "interrupted": 3, "pending": 1, "pass": 42}
    assert rows["link-type-ib"].counts[0] == ("fail", 2)  # what needs attention comes first
    assert dict(rows["cabling-walked"].counts) == {"pending": 46, "pass": 4}  # a note confirms a manual step


def test_header_facts():
    project = fixed_project()
    view = view_of(fixed_events(project), project)
    h = view.header()
    assert (h.site, h.run, h.operator, h.hosts) == ("test-hall", "run-0001", "alice", 50)
    assert (h.steps_passed, h.steps_total) == (0, 4)  # ofed-version: gpu12 never ran
    assert h.pending == ("reboot owed: gpu07",)


def test_resume_puts_cursor_on_first_step_not_passed_and_names_interrupted_hosts():
    project = fixed_project()
    view = view_of(fixed_events(project), project)
    assert view.first_open_step() == "ssh-reachable"
    notes = view.resume_notes()
    assert notes[0].startswith(f"{len(INTERRUPTED)} hosts were interrupted in link-type-ib (gpu[40-42])")


def test_first_open_step_skips_passed_steps():
    project = fixed_project()
    events = fixed_events(project) + [
        HostFinished(s, "verify", "gpu12", "pass", "") for s in ("ssh-reachable", "ofed-version")
    ]
    view = view_of(events, project)
    assert view.first_open_step() == "link-type-ib"


def test_step_text_renders_commands_for_the_selected_host_and_the_recorded_before():
    project = fixed_project()
    view = view_of(fixed_events(project), project)
    text = view.step_text("link-type-ib", "gpu07")
    commands = dict(text.commands)
    assert commands["verify"] == "mlxconfig -d mlx5_0 q LINK_TYPE_P1"
    assert commands["apply"] == "mlxconfig -y -d mlx5_0 set LINK_TYPE_P1=1"
    assert "<before>" in commands["rollback"]  # nothing recorded yet for gpu07
    assert text.criteria == ["LINK_TYPE_P1 eq IB(1)"] and text.then == "reboot"
    view.state.befores[("link-type-ib", "gpu07")] = {"LINK_TYPE_P1": "2"}
    assert (
        dict(view.step_text("link-type-ib", "gpu07").commands)["rollback"]
        == "mlxconfig -y -d mlx5_0 set LINK_TYPE_P1=2"
    )


def test_host_facts_say_expected_vs_found():
    project = fixed_project()
    view = view_of(fixed_events(project), project)
    f = view.host_facts("link-type-ib", FAILING_LINK[0])
    assert f.status == "fail" and "expected 'IB(1)', found 'ETH(2)'" in f.reason
    assert f.pending == ("reboot owed",)
    assert view.host_facts("link-type-ib", "gpu40").status == "interrupted"


def test_feed_notes_changed_hosts_and_progress():
    project = fixed_project()
    feed = Feed()
    feed.add(fixed_events(project)[:6])
    ch = feed.take()
    assert ch.hosts == {"ssh-reachable": {"gpu01", "gpu02"}}
    assert feed.activity() == "verify ssh-reachable 2/50"
    assert not feed.take()  # taken: nothing left


def test_restored_values_are_the_paths_the_rollback_uses():
    project = fixed_project()
    step = project.runbook.step("link-type-ib")
    record = {"LINK_TYPE_P1": "ETH(2)", "device": "mlx5_0", "configurations": {"LINK_TYPE_P1": "ETH(2)"}}
    assert restored_values(step, record) == {"LINK_TYPE_P1": "ETH(2)"}
    assert restored_values(step, None) is None


def test_a_step_changed_since_its_results_were_recorded_is_called_stale():
    project = fixed_project()
    events = [
        StepStarted(e.step_id, e.action, e.hosts, "0" * 64, e.time)
        if isinstance(e, StepStarted) and e.step_id == "ofed-version"
        else e
        for e in fixed_events(project)
    ]
    view = view_of(events, project)
    assert view.stale_steps() == ["ofed-version"]
    assert view.step_text("ofed-version", "gpu01").stale
    assert any("changed since their results were recorded: ofed-version" in n for n in view.resume_notes())
    assert view_of(fixed_events(project), project).stale_steps() == []


def test_one_list_of_keys_feeds_the_footer_the_help_and_the_palette():
    from runbook.tui.commands import ACTIONS
    from runbook.tui.keys import HELP, KEYS, check_help_rows
    from runbook.tui.screens.main import MainScreen

    assert [(b.key, b.action) for b in MainScreen.BINDINGS] == [(k.key, k.action) for k in KEYS]
    assert {a for _t, _h, a in ACTIONS} <= {k.action for k in KEYS}
    assert MainScreen.HELP_ROWS is HELP and check_help_rows() == []


def test_header_counts_passes_only_and_shows_skipped_and_waived_beside():
    from runbook.run.events import OperatorDecision
    from runbook.tui.widgets.header_bar import header_text

    project = fixed_project()
    events = fixed_events(project) + [
        HostFinished("ofed-version", "verify", "gpu12", "pass", ""),
        OperatorDecision("waive", "ssh-reachable", "gpu12", "alice", "PSU swap tomorrow"),
        OperatorDecision("skip", "link-type-ib", "", "alice", "cards on order"),
    ]
    view = view_of(events, project)
    statuses = {r.step_id: r.status for r in view.rows()}
    assert statuses["ssh-reachable"] == "waived" and statuses["ofed-version"] == "pass"
    assert statuses["link-type-ib"] == "skipped"
    h = view.header()
    assert (h.steps_passed, h.steps_skipped, h.steps_waived) == (1, 1, 1)  # passes only
    assert "1/4 steps passed · 1 skipped · 1 waived" in header_text(h).plain
    # nothing skipped or waived: nothing said about them
    assert "skipped" not in header_text(view_of(fixed_events(project), project).header()).plain


def test_a_launch_step_shows_the_job_over_every_target():
    """nccl-inter-node checks the job's rank count (launch_ranks): the step view
    shows it filled in for the whole job, as the plan does, never a placeholder."""
    from runbook.workspace.project import load_project
    from tests.steps.helpers import INVENTORY, STEPS

    project = load_project(STEPS, INVENTORY)
    view = RunView(project.runbook, project.inventory, RunState())
    text = view.step_text("nccl-inter-node", "gpu01")
    assert "rank_count eq 384" in " | ".join(text.criteria), text.criteria
    assert not [c for c in text.criteria if "{{" in c or "launch_ranks" in c]
    assert "{{" not in dict(text.commands)["verify"]
