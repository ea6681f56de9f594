"""docs/steps.md (with docs/step-kinds.md for the kinds) names every key the
step loader accepts and every word of the criteria language, so a person who
writes steps finds each one described (issue 17, item 3). A new key fails here
until it is documented."""

import re
from pathlib import Path

from runbook.criteria.spec import PATH_OPS, STDOUT_KINDS
from runbook.definition.kinds import LAUNCH_KEYS, PAIRS_KEYS, RUN_ON_KEYS
from runbook.definition.loader import ACTION_KEYS, PENDING_ACTIONS, PHASE_KEYS, STEP_KEYS

DOCS = Path(__file__).resolve().parents[2] / "docs"
STEPS_MD = (DOCS / "steps.md").read_text()
KINDS_MD = (DOCS / "step-kinds.md").read_text()


def named(word: str, text: str) -> bool:
    """`word` as a key in code: in a code span (`word`, `{word: X}`) or a YAML example line."""
    w = re.escape(word)
    span = rf"`[^`\n]*(?<![\w-]){w}(?![\w-])[^`\n]*`"
    return re.search(rf"{span}|^\s*-?\s*\{{?{w}:", text, re.M) is not None


def test_the_checker_is_not_fooled():
    assert not named("no_such_key_xyz", STEPS_MD)
    assert named("verify", STEPS_MD)


def test_every_phase_step_and_action_key_is_in_steps_md():
    missing = [k for k in sorted(PHASE_KEYS | STEP_KEYS | ACTION_KEYS) if not named(k, STEPS_MD)]
    assert missing == []


def test_every_key_of_a_step_kind_is_in_the_kinds_doc():
    both = STEPS_MD + KINDS_MD
    missing = [k for k in sorted(RUN_ON_KEYS | PAIRS_KEYS | LAUNCH_KEYS) if not named(k, both)]
    assert missing == []


def test_every_word_of_the_criteria_language_is_in_steps_md():
    words = set(PATH_OPS) | set(STDOUT_KINDS) | {"exit", "path", "design", "consistent", "reference"}
    words |= {"lower", "upper"} | set(PENDING_ACTIONS)
    missing = [w for w in sorted(words) if not named(w, STEPS_MD)]
    assert missing == []
