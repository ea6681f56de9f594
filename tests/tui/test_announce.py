"""Toasts in words, from the engine's events (no terminal)."""

from runbook.run.events import HostFinished, StepFinished, StepStarted
from runbook.tui.announce import Announcer, change_words, verify_words


def finished(step, action, results):
    return [
        StepStarted(step, action, tuple(results), "sha"),
        *[HostFinished(step, action, h, s, "") for h, s in results.items()],
        StepFinished(step, action, "pass", {}),
    ]


def test_an_apply_and_its_reverify_read_as_one_sentence():
    a = Announcer()
    assert a.feed(finished("link-type-ib", "apply", {"gpu03": "pending"})) == []  # waits for the re-verify
    said = a.feed(finished("link-type-ib", "verify", {"gpu03": "pass"}))
    assert [(s.title, s.message, s.severity) for s in said] == [
        ("apply link-type-ib", "applied on 1 host; re-verify passed", "information")
    ]


def test_a_reverify_that_fails_and_an_apply_that_fails_say_where():
    assert change_words(
        "apply", {"gpu03": "pending", "gpu04": "pending"}, {"gpu03": "pass", "gpu04": "fail"}
    ) == ("applied on 2 hosts; re-verify failing on gpu04", False)
    a = Announcer()
    said = a.feed(finished("link-type-ib", "apply", {"gpu03": "fail", "gpu04": "unknown"}))
    assert [s.message for s in said] == ["apply failed on gpu03; apply unreachable on gpu04"]


def test_an_apply_whose_hosts_never_came_back_is_said_at_the_end():
    a = Announcer()
    assert a.feed(finished("link-type-ib", "apply", {"gpu03": "pending"})) == []
    [said] = a.flush()
    assert said.message == "applied on 1 host; not verified again yet" and said.severity == "warning"


def test_verify_words_fold_the_hosts_and_leave_out_what_is_not_there():
    results = {f"gpu{i:02d}": "pass" for i in range(1, 47)} | {
        "gpu07": "fail",
        "gpu31": "fail",
        "gpu12": "unknown",
    }
    assert verify_words(results) == ("43 passed; failing on gpu[07,31]; unknown on gpu12", False)
    assert verify_words({"gpu01": "pass"}) == ("1 passed", True)


def test_a_step_with_nothing_left_to_run_says_so():
    a = Announcer()
    [said] = a.feed(
        [
            StepStarted("ssh-reachable", "verify", (), "sha"),
            StepFinished("ssh-reachable", "verify", "pass", {"pass": 10}),
        ]
    )
    assert said.message == "nothing left to verify (10 pass)"
