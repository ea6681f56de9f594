import textwrap

import pytest

from runbook.definition.loader import load_runbook
from runbook.errors import InputError


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


GOOD = """\
phase: nic-mode
title: NIC mode
steps:
  - id: mst-started
    title: MST started
    why: mlxconfig needs the mst devices.
    hosts: compute
    verify:
      run: mst status
  - id: link-type-ib
    title: ConnectX ports in InfiniBand mode
    why: >
      A VPI card left in Ethernet mode still shows link,
      but never gets a LID.
    hosts: compute
    needs: [mst-started]
    verify:
      run: mlxconfig -d {{ dev }} q LINK_TYPE_P1
      parse: mlxconfig
      expect:
        - {path: LINK_TYPE_P1, eq: "IB(1)"}
      timeout: 30
    apply:
      run: mlxconfig -y -d {{ dev }} set LINK_TYPE_P1=1
      then: reboot
    rollback:
      run: mlxconfig -y -d {{ dev }} set LINK_TYPE_P1={{ before.LINK_TYPE_P1 }}
    hints:
      - Link up but no LID in ibstat: LINK_TYPE is the first suspect.
"""


def test_good_file_loads(tmp_path):
    write(tmp_path, "30-nic.yaml", GOOD)
    rb = load_runbook(tmp_path)
    s = rb.step("link-type-ib")
    assert s.needs == ("mst-started",) and s.apply.then == "reboot"
    assert s.why == "A VPI card left in Ethernet mode still shows link, but never gets a LID."
    assert s.hints == ("Link up but no LID in ibstat: LINK_TYPE is the first suspect.",)
    assert s.verify.expect[0].path == "LINK_TYPE_P1" and s.verify.timeout == 30
    assert len(rb.sha256) == 64 and len(s.sha256) == 64


def test_every_problem_of_every_file_with_lines(tmp_path):
    write(
        tmp_path,
        "10-a.yaml",
        """\
    phase: a
    title: A
    steps:
      - id: one
        title: One
        why: because
        hosts: all
        needs: [ghost]
        verify:
          run: echo
          parse: no-such-parser
          expect:
            - {path: x, eqq: 1}
        apply:
          run: fix
        colour: red
      - id: one
        title: dup
        why: w
        hosts: all
        verify: {run: x}
    """,
    )
    write(tmp_path, "20-b.yaml", "phase: b\nsteps:\n  - id: x\n    id: y\n")
    with pytest.raises(InputError) as err:
        load_runbook(tmp_path)
    text = str(err.value)
    for needle in [
        "10-a.yaml:11: step one: verify",
        "unknown parser 'no-such-parser'",
        "10-a.yaml:13: step one: verify.expect[0]: unknown operator 'eqq'",
        "10-a.yaml:14: step one: an apply without a rollback",
        "10-a.yaml:16: unknown key 'colour' in step",
        "duplicate step id 'one'",
        "needs unknown step 'ghost'",
        "20-b.yaml:4: YAML: duplicate key 'id'",
    ]:
        assert needle in text, (needle, text)


def test_cycles_are_found(tmp_path):
    body = "phase: p\ntitle: P\nsteps:\n"
    for a, b in (("a", "b"), ("b", "c"), ("c", "a")):
        body += f"  - {{id: {a}, title: {a}, why: w, hosts: all, needs: [{b}], verify: {{run: 'true'}}}}\n"
    write(tmp_path, "10-p.yaml", body)
    with pytest.raises(InputError, match="dependency cycle: a -> b -> c -> a"):
        load_runbook(tmp_path)


def test_yaml_syntax_error_has_a_line(tmp_path):
    write(tmp_path, "10-x.yaml", "phase: p\nsteps: [\n  - id: a\n")
    with pytest.raises(InputError) as err:
        load_runbook(tmp_path)
    assert "10-x.yaml:" in str(err.value) and "YAML" in str(err.value)


def test_yaml_tags_are_refused(tmp_path):
    write(tmp_path, "10-x.yaml", "phase: !!python/object/apply:os.system ['true']\n")
    with pytest.raises(InputError, match="10-x.yaml:1"):
        load_runbook(tmp_path)


def test_manual_steps_need_a_checklist(tmp_path):
    write(
        tmp_path,
        "90-h.yaml",
        """\
    phase: handover
    title: Handover
    steps:
      - id: walk
        title: Walkthrough
        why: the customer sees it
        hosts: all
        manual: true
    """,
    )
    with pytest.raises(InputError, match="checklist"):
        load_runbook(tmp_path)
