"""The main screen's keys, one list: the footer bindings, the help screen's
rows and the command palette's entries are all drawn from it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Key:
    key: str
    action: str  # an action of the main screen
    label: str  # in the footer
    footer: bool = True  # shown in the footer (else the key works, unlisted)
    palette: tuple[str, str] | None = None  # (title, what it does) in the command palette
    order: int = 0  # place in the palette (the footer follows the list's order)


KEYS: list[Key] = [
    Key(
        "v", "verify", "Verify", palette=("Verify step", "verify the selected step on all its hosts"), order=1
    ),
    Key(
        "p",
        "verify_phase",
        "Phase",
        palette=("Verify phase", "verify every step of the selected step's phase (what has not passed yet)"),
        order=2,
    ),
    Key(
        "c",
        "verify_rest",
        "Continue",
        palette=("Continue the runbook", "verify every step, top to bottom, on what has not passed yet"),
        order=3,
    ),
    Key(
        "f",
        "rerun_failed",
        "Re-run failed",
        palette=("Re-run failed hosts", "verify again the failed, unknown and interrupted hosts"),
        order=5,
    ),
    Key(
        "a", "apply", "Apply", palette=("Apply", "apply the step on its failing hosts (asks first)"), order=7
    ),
    Key(
        "r",
        "rollback",
        "Rollback",
        palette=("Rollback", "restore the values recorded before apply (asks first)"),
        order=9,
    ),
    Key(
        "s",
        "decide('skip')",
        "Skip",
        palette=("Skip", "skip the step on some or all hosts (reason required)"),
        order=11,
    ),
    Key(
        "w",
        "decide('waive')",
        "Waive",
        palette=("Waive", "accept the failure on some hosts (reason required)"),
        order=12,
    ),
    Key(
        "n",
        "decide('note')",
        "Note",
        palette=("Note", "add a note; confirms a manual step (reason required)"),
        order=13,
    ),
    Key(
        "g",
        "cycle_filter",
        "Filter",
        palette=("Filter hosts", "grid filter: all → failing → unknown"),
        order=14,
    ),
    Key(
        "e",
        "export",
        "Export",
        palette=("Export signed log", "write the signed completion log and its report"),
        order=15,
    ),
    Key(
        "x",
        "stop",
        "Stop",
        palette=("Stop the run", "stop; hosts in flight are recorded as interrupted"),
        order=16,
    ),
    Key("question_mark", "help", "Help", palette=("Help", "keys and status glyphs"), order=17),
    Key("q", "quit", "Quit"),
    Key(
        "V",
        "verify_host",
        "Verify host",
        footer=False,
        palette=("Verify selected host", "verify the selected step on the selected host only"),
        order=4,
    ),
    Key(
        "A",
        "apply_host",
        "Apply on host",
        footer=False,
        palette=("Apply on selected host", "apply the step on the selected host (asks first)"),
        order=8,
    ),
    Key(
        "R",
        "rollback_host",
        "Rollback host",
        footer=False,
        palette=("Rollback selected host", "roll back the selected host (asks first)"),
        order=10,
    ),
    Key(
        "i",
        "reverify_interrupted",
        "Re-verify interrupted",
        footer=False,
        palette=(
            "Re-verify interrupted hosts",
            "resume: verify again what the last run cut off, in every step",
        ),
        order=6,
    ),
    Key("escape", "dismiss_notice", "Dismiss", footer=False),
]

# The help screen: keys that go together on one row, with what they do.
HELP: list[tuple[str, str]] = [
    ("v", "verify the step on all its hosts"),
    ("V", "verify the selected host only"),
    ("p / c", "verify the whole phase / continue the whole runbook (what has not passed yet)"),
    ("f", "re-run the failed / unknown / interrupted hosts"),
    ("i", "re-verify every host interrupted last time, in every step"),
    ("a / A", "apply on the failing hosts / the selected host (asks first)"),
    ("r / R", "roll back to the recorded values / on the selected host (asks first)"),
    ("s w n", "skip, waive, note (a reason is required)"),
    ("g", "grid filter: all → failing → unknown"),
    ("e", "export the signed completion log"),
    ("x", "stop the run (hosts in flight are recorded as interrupted)"),
    ("?", "this help"),
    ("q", "quit (progress is already saved)"),
]


def palette_entries() -> list[tuple[str, str, str]]:
    """(title, what it does, action) in palette order."""
    keyed = sorted((k for k in KEYS if k.palette), key=lambda k: k.order)
    return [(k.palette[0], k.palette[1], k.action) for k in keyed]


def check_help_rows() -> list[str]:
    """Keys named in HELP that are not bound (a row must not promise a key that does nothing)."""
    bound = {k.key for k in KEYS} | {"?"}
    return [part for row, _ in HELP for part in row.replace("/", " ").split() if part not in bound]
