"""Item 10 of issue 16: random input to the loader, the inventory, the
criteria, the templates and every parser gives a documented error (InputError,
ParseError, TemplateError, HostPatternError...) or a result, never a traceback.
Bounded: a few hundred examples per target, no deadline (2 shared cores)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runbook import parsers
from runbook.criteria.host import judge_host
from runbook.criteria.spec import parse_check
from runbook.definition.loader import load_runbook
from runbook.definition.model import Action, Status
from runbook.definition.template import TemplateError, render_command, render_value, unsafe_placeholders
from runbook.errors import InputError
from runbook.inventory.hostpattern import HostPatternError, expand_ranges
from runbook.inventory.load import load_inventory, select_hosts
from runbook.yamlsafe import load_text

FUZZ = settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(
        [
            "{{ x }}",
            "{{ x",
            "gpu[0:3]",
            "$(touch /tmp/x)",
            ">>1",
            "[z-a]",
            ".nan",
            "all",
            "compute",
            "-1",
            "99999",
        ]
    ),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=20,
)
KEYS = [
    "phase",
    "title",
    "steps",
    "id",
    "why",
    "hosts",
    "needs",
    "verify",
    "apply",
    "rollback",
    "run",
    "parse",
    "expect",
    "timeout",
    "then",
    "manual",
    "checklist",
    "hints",
    "path",
    "eq",
    "matches",
    "semver",
    "reference",
    "lower",
    "upper",
    "count",
    "contains",
    "exit",
    "ge",
    "design",
    "consistent",
    "all",
    "children",
    "vars",
    "ansible_port",
    "ansible_host",
]
shaped = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(KEYS), inner, max_size=5)
    ),
    max_leaves=25,
)


def _yaml(data) -> str:
    try:
        return yaml.safe_dump(data)
    except (yaml.YAMLError, ValueError, OverflowError):
        return "x: 1\n"


@FUZZ
@given(st.one_of(st.text(max_size=300), shaped.map(_yaml)))
def test_yaml_loader(text: str) -> None:
    try:
        load_text(text, "f.yaml")
    except InputError:
        pass


@FUZZ
@given(
    st.one_of(
        shaped.map(_yaml),
        st.text(max_size=200),
        shaped.map(lambda d: _yaml({"phase": "p", "title": "t", "steps": [d]})),
    )
)
def test_step_loader(text: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "10-p.yaml").write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            load_runbook(d)
        except InputError:
            pass


@FUZZ
@given(
    st.one_of(
        shaped.map(_yaml),
        st.text(max_size=200),
        shaped.map(lambda d: _yaml({"all": d})),
        st.text(max_size=40),
    )
)
def test_inventory(text: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "inv.yaml"
        f.write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            inv = load_inventory(f)
        except InputError:
            return
        for expr in ("all", "gpu[1-3]", "!x", "a,b&c"):
            try:
                select_hosts(inv, expr)
            except (KeyError, ValueError):
                pass


@FUZZ
@given(st.text(max_size=40))
def test_host_patterns(key: str) -> None:
    try:
        expand_ranges(key)
    except HostPatternError:
        pass


@FUZZ
@given(
    st.dictionaries(st.sampled_from(KEYS), values, max_size=4),
    values,
    st.text(max_size=200),
    st.one_of(st.none(), st.integers(-3, 300)),
)
def test_criteria(raw: dict, variables, stdout: str, exit_status) -> None:
    check, problems = parse_check(raw, 1)
    if check is None:
        assert problems
        return
    action = Action(
        run="x",
        parse="ibstat" if check.kind in ("path", "design") else None,
        expect=(check,),
        timeout=10,
        then=None,
        line=1,
    )
    record = variables if isinstance(variables, dict) else {"v": variables}
    vars_ = {"x": variables, "v": variables}
    verdict = judge_host(action, exit_status, stdout, vars_, record)
    assert verdict.status in (Status.PASS, Status.FAIL, Status.UNKNOWN)


@FUZZ
@given(st.text(max_size=120), values)
def test_templates(template: str, value) -> None:
    unsafe_placeholders(template)
    try:
        render_command(template, {"x": value})
    except TemplateError:
        pass
    try:
        render_value(template, {"x": value})
    except TemplateError:
        pass


OPS = ["eq", "ne", "lt", "le", "gt", "ge", "in", "matches", "semver", "count", "reference"]
templated = st.one_of(
    st.sampled_from(["contains", "not_contains", "matches", "not_matches"]).map(lambda k: {k: "{{ x }}"}),
    st.sampled_from(OPS).map(lambda op: {"path": "v", op: "{{ x }}"}),
    st.just({"path": "v", "reference": 10, "lower": "{{ x }}"}),
)
hostile = st.one_of(
    values,
    st.sampled_from(
        ["[z-a]", "(", ">>1", "nan", "inf", "-inf", "0", 0, 1e308, 10**400, "1e999", "*", "a,b", "??"]
    ),
)


@FUZZ
@given(templated, hostile, st.one_of(values, hostile))
def test_criteria_with_values_known_only_at_run_time(raw: dict, x, found) -> None:
    check, problems = parse_check(raw, 1)
    assert check is not None, problems
    action = Action(
        run="x",
        parse="ibstat" if check.kind == "path" else None,
        expect=(check,),
        timeout=10,
        then=None,
        line=1,
    )
    verdict = judge_host(action, 0, str(found), {"x": x}, {"v": found})
    assert verdict.status in (Status.PASS, Status.FAIL, Status.UNKNOWN)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.integers(1, 2000), st.sampled_from(["[", "{a: ", "- ", "a: &a [*a]\n"]))
def test_yaml_depth(n: int, piece: str) -> None:
    try:
        load_text(piece * n, "deep.yaml")
    except InputError:
        pass


PARSERS = parsers.names()


@FUZZ
@given(
    st.sampled_from(PARSERS),
    st.one_of(
        st.text(max_size=400),
        st.lists(
            st.sampled_from(
                [
                    "Port 1:",
                    "State: Active",
                    "CA 'mlx5_0'",
                    "Rate: 400",
                    "GUID 0x1",
                    "  ",
                    "\t",
                    ":",
                    "=",
                    "|",
                    "GPU0  X  NV18",
                    "# comment",
                    "0x",
                    "[1]",
                    "Device #1:",
                    "LINK_TYPE_P1  IB(1)",
                    "-----",
                    "1.0 2.0 3.0",
                    'Switch 36 "S-0002"',
                    "avg 10.5 GB/s",
                    "\u00a0",
                    "nan",
                    "inf",
                ]
            ),
            max_size=30,
        ).map("\n".join),
    ),
)
def test_parsers(name: str, text: str) -> None:
    try:
        parsers.parse(name, text)
    except parsers.ParseError:
        pass
