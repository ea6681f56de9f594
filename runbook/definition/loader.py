"""steps/*.yaml -> Runbook, checking everything that can be checked without
an inventory (lint adds the inventory-dependent checks). Every problem of
every file is collected and raised together as FILE:LINE: message."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import parsers
from ..criteria.spec import parse_check
from ..errors import InputError, Problem
from ..yamlsafe import LineDict, LineList, load_file
from . import kinds
from .model import Action, Phase, Runbook, Step
from .template import fix_for, malformed_placeholder, placeholders, unsafe_placeholders

PHASE_KEYS = {"phase", "title", "steps"}
STEP_KEYS = {
    "id",
    "title",
    "why",
    "hosts",
    "needs",
    "verify",
    "apply",
    "rollback",
    "hints",
    "manual",
    "checklist",
    "run_on",
    "run_from",
    "judge_each",
    "pairs",
    "launch",
    "exclusive",
}
ACTION_KEYS = {"run", "parse", "expect", "timeout", "then", "detach", "expected_time"}
PENDING_ACTIONS = {"reboot"}
MAX_TIMEOUT = 7 * 86400  # a week: longer is a typo, not a test


def _strings(value: Any):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def plain(value: Any) -> Any:
    """LineDict/LineList -> dict/list (for hashing and JSON)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


class _Collector:
    def __init__(self, file: str):
        self.file = file
        self.problems: list[Problem] = []

    def add(self, line: int | None, message: str) -> None:
        self.problems.append(Problem(self.file, line, message))


def _line(node: Any, key: Any = None) -> int:
    if isinstance(node, LineDict) and key is not None:
        return node.line_of(key)
    return getattr(node, "line", 0)


def _unknown_keys(c: _Collector, node: LineDict, allowed: set[str], what: str) -> None:
    for key in node:
        if key not in allowed:
            c.add(node.line_of(key), f"unknown key {key!r} in {what} (allowed: {', '.join(sorted(allowed))})")


def _action(c: _Collector, node: Any, what: str, step_line: int) -> Action | None:
    if not isinstance(node, LineDict):
        c.add(step_line, f"{what} must be a mapping with at least `run:`")
        return None
    _unknown_keys(c, node, ACTION_KEYS, what)
    run = node.get("run")
    if not isinstance(run, str) or not run.strip():
        c.add(node.line, f"{what}.run must be a non-empty command string")
        return None
    for text in _strings(node):
        bad = malformed_placeholder(text)
        if bad:
            c.add(
                node.line,
                f"{what}: malformed placeholder {bad!r} (expected {{{{ name }}}} or "
                f"{{{{ name | default('x') }}}})",
            )
    for text, where, line in unsafe_placeholders(run):
        at = f" (line {line} of the command)" if "\n" in run.strip() else ""
        c.add(node.line_of("run"), f"{what}.run: {text} is {where}{at}: {fix_for(where)}")
    parse = node.get("parse")
    if parse is not None:
        try:
            if not parsers.known(parse):  # by name: imports no parser when an index is in use
                parsers.get(parse)
        except KeyError as exc:
            c.add(node.line_of("parse"), f"{what}: {exc.args[0]}")
    timeout = node.get("timeout", 60)
    if (
        not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not 0 < timeout <= MAX_TIMEOUT
    ):  # also .nan and .inf
        c.add(
            node.line_of("timeout"),
            f"{what}.timeout must be a number of seconds, more than 0 and "
            f"at most {MAX_TIMEOUT}, found {timeout!r}",
        )
        timeout = 60
    then = node.get("then")
    if then is not None and then not in PENDING_ACTIONS:
        c.add(node.line_of("then"), f"{what}.then must be one of {sorted(PENDING_ACTIONS)}, found {then!r}")
    detach = node.get("detach", False)
    if not isinstance(detach, bool):
        c.add(node.line_of("detach"), f"{what}.detach must be true or false, found {detach!r}")
        detach = False
    if detach and then is not None:
        c.add(
            node.line_of("detach"),
            f"{what}: a detached command cannot also owe a {then} (the job would die with it)",
        )
    expected_time = node.get("expected_time")
    if expected_time is not None:
        problem = expected_time_problem(expected_time)
        if not problem and not detach:
            problem = "is shown while a detached command runs: it needs `detach: true`"
        if problem:
            c.add(node.line_of("expected_time"), f"{what}.expected_time {problem}")
            expected_time = None
    checks = []
    expect = node.get("expect", [])
    if not isinstance(expect, list):
        c.add(node.line_of("expect"), f"{what}.expect must be a list of criteria")
        expect = []
    for i, raw in enumerate(expect):
        line = expect.line_of(i) if isinstance(expect, LineList) else node.line
        check, problems = parse_check(raw, line)
        for p in problems:
            c.add(line, f"{what}.expect[{i}]: {p}")
        if check:
            if check.kind == "path" and not parse:
                c.add(
                    line, f"{what}.expect[{i}]: a path check needs `parse:` (a parser that gives the record)"
                )
            checks.append(check)
    return Action(
        run=run,
        parse=parse,
        expect=tuple(checks),
        timeout=float(timeout),
        then=then,
        line=node.line,
        detach=detach,
        expected_time=expected_time,
    )


def _seconds(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < float("inf")


def expected_time_problem(value: Any) -> str | None:
    """What is wrong with an `expected_time:` (docs/long-running-steps.md), or None."""
    if _seconds(value):
        return None
    if isinstance(value, str):
        if placeholders(value) and not malformed_placeholder(value):
            return None
        return f"must be seconds or a {{{{ var }}}} giving seconds, found {value!r}"
    if isinstance(value, dict):
        times = value.get("times")
        if (
            set(value) != {"by", "times"}
            or not isinstance(value.get("by"), str)
            or not isinstance(times, dict)
        ):
            return "as a mapping is {by: VAR, times: {VALUE: seconds, ...}}"
        bad = [k for k, v in times.items() if not _seconds(v)]
        if bad or not times:
            return f"times must give seconds for each value of {value['by']}, found {dict(times)!r}"
        return None
    return f"must be seconds, a template or {{by: VAR, times: {{...}}}}, found {value!r}"


def _hints(c: _Collector, node: Any, line: int) -> tuple[str, ...]:
    if node is None:
        return ()
    if not isinstance(node, list):
        c.add(line, "hints must be a list of lines (the troubleshooting ladder)")
        return ()
    out = []
    for i, h in enumerate(node):
        # `- Link up but no LID: LINK_TYPE first` is a one-key mapping in YAML; read it as the line it looks like.
        if isinstance(h, dict) and len(h) == 1:
            k, v = next(iter(h.items()))
            out.append(f"{k}: {v}")
        elif isinstance(h, str):
            out.append(h)
        else:
            c.add(
                node.line_of(i) if isinstance(node, LineList) else line, f"hints[{i}] must be a line of text"
            )
    return tuple(out)


def _step(c: _Collector, node: Any, phase: str, phase_title: str) -> Step | None:
    if not isinstance(node, LineDict):
        c.add(getattr(node, "line", None), "a step must be a mapping")
        return None
    _unknown_keys(c, node, STEP_KEYS, "step")
    sid = node.get("id")
    if not isinstance(sid, str) or not sid:
        c.add(node.line, "step without an `id`")
        return None
    for key in ("title", "why", "hosts"):
        if not isinstance(node.get(key), str) or not node.get(key).strip():
            c.add(node.line_of(key) if key in node else node.line, f"step {sid}: `{key}` is required (text)")
    manual = node.get("manual", False)
    if not isinstance(manual, bool):
        c.add(node.line_of("manual"), f"step {sid}: manual must be true or false")
        manual = False
    verify = apply = rollback = None
    if manual:
        checklist = node.get("checklist")
        if not isinstance(checklist, list) or not checklist or not all(isinstance(x, str) for x in checklist):
            c.add(node.line, f"step {sid}: a manual step needs a `checklist:` of lines to confirm")
        for key in ("verify", "apply", "rollback"):
            if key in node:
                c.add(node.line_of(key), f"step {sid}: a manual step has no {key} (a person confirms it)")
    else:
        if "verify" not in node:
            c.add(node.line, f"step {sid}: `verify` is required (or `manual: true`)")
        else:
            verify = _action(c, node["verify"], f"step {sid}: verify", node.line_of("verify"))
        if "apply" in node:
            apply = _action(c, node["apply"], f"step {sid}: apply", node.line_of("apply"))
            if "rollback" not in node:
                c.add(
                    node.line_of("apply"),
                    f"step {sid}: an apply without a rollback (every change must be reversible)",
                )
        if "rollback" in node:
            rollback = _action(c, node["rollback"], f"step {sid}: rollback", node.line_of("rollback"))
            if "apply" not in node:
                c.add(node.line_of("rollback"), f"step {sid}: a rollback without an apply")
    needs = node.get("needs", [])
    if isinstance(needs, str):
        needs = [needs]
    if not isinstance(needs, list) or not all(isinstance(n, str) for n in needs):
        c.add(node.line_of("needs"), f"step {sid}: needs must be a list of step ids")
        needs = []
    run_on = pairs = launch = None
    present = [k for k in ("run_on", "pairs", "launch") if k in node]
    if len(present) > 1:
        c.add(
            node.line_of(present[1]),
            f"step {sid}: {' and '.join(present)} exclude each other (one kind per step)",
        )
    elif present:
        if manual:
            c.add(node.line_of(present[0]), f"step {sid}: a manual step has no {present[0]}")
        if "apply" in node or "rollback" in node:
            c.add(
                node.line_of(present[0]), f"step {sid}: a {present[0]} step verifies only (no apply/rollback)"
            )
        if present == ["run_on"]:
            run_on = kinds.run_on(c.add, sid, node["run_on"], node)
        elif present == ["pairs"]:
            pairs = kinds.pairs(c.add, sid, node["pairs"])
        else:
            launch = kinds.launch(c.add, sid, node["launch"])
    exclusive = node.get("exclusive", False)
    exclusive_scope = "fleet"
    if exclusive == "node":  # alone on each of its hosts, not on the fleet (docs/steps.md)
        exclusive, exclusive_scope = True, "node"
        if present:
            c.add(
                node.line_of("exclusive"),
                f"step {sid}: exclusive: node is for a step that runs on each host alone; "
                "run_on, pairs and launch steps run for the fleet",
            )
    elif not isinstance(exclusive, bool):
        c.add(
            node.line_of("exclusive"),
            f"step {sid}: exclusive must be true, false or node, found {exclusive!r}",
        )
        exclusive = False
    if exclusive and manual:
        c.add(node.line_of("exclusive"), f"step {sid}: a manual step runs nothing, so it cannot be exclusive")
    for key in ("run_from", "judge_each"):
        if key in node and "run_on" not in node:
            c.add(node.line_of(key), f"step {sid}: {key} is only read with run_on: one")
    return Step(
        id=sid,
        title=str(node.get("title", "")),
        phase=phase,
        phase_title=phase_title,
        why=" ".join(str(node.get("why", "")).split()),
        hosts=str(node.get("hosts", "all")),
        verify=verify,
        apply=apply,
        rollback=rollback,
        needs=tuple(needs),
        hints=_hints(c, node.get("hints"), node.line_of("hints")),
        manual=manual,
        checklist=tuple(str(x) for x in node.get("checklist", []) or []) if manual else (),
        file=c.file,
        line=node.line,
        definition={"phase": phase, **plain(node)},
        run_on=run_on,
        pairs=pairs,
        launch=launch,
        exclusive=exclusive,
        exclusive_scope=exclusive_scope,
    )


def _phase(path: Path, c: _Collector) -> Phase | None:
    try:
        doc = load_file(path)
    except InputError as exc:
        c.problems.extend(exc.problems)
        return None
    if not isinstance(doc, LineDict):
        c.add(1, "a steps file must be a mapping with `phase`, `title` and `steps`")
        return None
    _unknown_keys(c, doc, PHASE_KEYS, "phase file")
    name = doc.get("phase")
    if not isinstance(name, str) or not name:
        c.add(doc.line, "`phase:` (a name) is required")
        name = path.stem
    title = str(doc.get("title", name))
    raw_steps = doc.get("steps")
    if not isinstance(raw_steps, list) or not raw_steps:
        c.add(doc.line_of("steps") if "steps" in doc else doc.line, "`steps:` must be a non-empty list")
        raw_steps = []
    steps = [s for s in (_step(c, n, name, title) for n in raw_steps) if s]
    return Phase(name=name, title=title, file=str(path), steps=tuple(steps))


def _graph_problems(phases: list[Phase]) -> list[Problem]:
    problems: list[Problem] = []
    seen: dict[str, Step] = {}
    for step in (s for p in phases for s in p.steps):
        if step.id in seen:
            first = seen[step.id]
            problems.append(
                Problem(
                    step.file,
                    step.line,
                    f"duplicate step id {step.id!r} (first at {first.file}:{first.line})",
                )
            )
        else:
            seen[step.id] = step
    for step in seen.values():
        for need in step.needs:
            if need not in seen:
                problems.append(Problem(step.file, step.line, f"step {step.id}: needs unknown step {need!r}"))
    # cycles: depth-first search over `needs`
    state: dict[str, int] = {}

    def visit(sid: str, trail: list[str]) -> None:
        state[sid] = 1
        for need in seen[sid].needs:
            if need not in seen:
                continue
            if state.get(need) == 1:
                cycle = trail[trail.index(need) :] + [need] if need in trail else [sid, need]
                s = seen[sid]
                problems.append(Problem(s.file, s.line, f"dependency cycle: {' -> '.join(cycle)}"))
            elif need not in state:
                visit(need, trail + [need])
        state[sid] = 2

    for sid in seen:
        if sid not in state:
            visit(sid, [sid])
    return problems


def load_runbook(steps_dir: str | Path) -> Runbook:
    steps_dir = Path(steps_dir)
    if steps_dir.is_file():
        files = [steps_dir]
    else:
        if not steps_dir.is_dir():
            raise InputError(Problem(str(steps_dir), None, "no such steps directory"))
        files = sorted(list(steps_dir.glob("*.yaml")) + list(steps_dir.glob("*.yml")))
        if not files:
            raise InputError(Problem(str(steps_dir), None, "no *.yaml step files here"))
    problems: list[Problem] = []
    phases: list[Phase] = []
    digest = hashlib.sha256()
    names: dict[str, str] = {}
    for path in files:
        c = _Collector(str(path))
        phase = _phase(path, c)
        problems.extend(c.problems)
        if phase:
            if phase.name in names:
                problems.append(
                    Problem(str(path), 1, f"phase {phase.name!r} already defined in {names[phase.name]}")
                )
            names[phase.name] = str(path)
            phases.append(phase)
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    problems.extend(_graph_problems(phases))
    if problems:
        raise InputError(sorted(problems, key=lambda p: (p.file, p.line or 0)))
    return Runbook(phases=tuple(phases), sha256=digest.hexdigest())


def _with_lines(value: Any, line: int) -> Any:
    """Plain dict/list -> LineDict/LineList (every line `line`), as _step reads them."""
    if isinstance(value, dict):
        out = LineDict((k, _with_lines(v, line)) for k, v in value.items())
        out.line = line
        return out
    if isinstance(value, list):
        items = LineList(_with_lines(v, line) for v in value)
        items.line = line
        return items
    return value


def step_from_definition(
    definition: dict, phase_title: str = "", file: str = "", line: int = 0
) -> tuple[Step | None, list[Problem]]:
    """A Step rebuilt from a recorded `Step.definition` (a run's record of what it
    ran, runbook/store/definitions.py), read by the same rules as from YAML, so
    its sha256 is the recorded one. Returns the step and the problems found."""
    node = dict(definition)
    phase = str(node.pop("phase", ""))
    c = _Collector(file)
    step = _step(c, _with_lines(node, line), phase, phase_title or phase)
    if step is not None:
        step = replace(step, line=line)
    return step, c.problems
