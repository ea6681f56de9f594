"""Item 1 of issue 16: a hostile inventory value in every position of a
template runs nothing, on the simulator's SSH server and on a real OpenSSH
sshd; a placeholder where quoting cannot protect it is refused by lint and by
the renderer."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from runbook.definition.loader import load_runbook
from runbook.definition.model import Host
from runbook.definition.template import TemplateError, render_command, unsafe_placeholders
from runbook.errors import InputError
from runbook.transport import HostKeyPolicy, Transport
from tests.sim.conftest import make_lab  # noqa: F401 - the simulated lab fixture
from tests.sshd_server import sshd_server  # noqa: F401 - the real sshd fixture

MARK = "/tmp/runbook-pwned"  # where an injected command would leave a file

HOSTILE = [
    f"$(touch {MARK})",
    f"`touch {MARK}`",
    f"'; touch {MARK}; '",
    f'"; touch {MARK}; "',
    f"; touch {MARK}",
    f"a\ntouch {MARK}",
    f"a\\'; touch {MARK} #",
    f"\\$(touch {MARK})",
    f"| touch {MARK}",
    f"&& touch {MARK}",
    f"a[$(touch {MARK})]",
    f"$((1)) $(touch {MARK})",
    "*",
    "/*",
    "?",
    "[a-z]*",
    "~",
    "$HOME",
    "${PATH}",
    "-x",
    "",
    " ",
    "a b",
    f"ünïcødé ’ ; touch {MARK}",
    "\u200b$(true)",
    f"x\r\ntouch {MARK}",
    f"{{{{ y }}}} $(touch {MARK})",
]

# Every position the renderer allows: plain word, glued to text, option value,
# list loop, inside $(...) at top level and inside "...", assignment.
SAFE = [
    "echo {{ x }}",
    "echo pre{{ x }}post",
    "echo --opt={{ x }}",
    'for d in {{ x }}; do echo "$d"; done',
    "echo $(echo {{ x }})",
    'echo "$(echo {{ x }})"',
    'v={{ x }}; echo "$v"',
    "[ {{ x }} = never ] || echo {{ x }}",
    "echo {{ x }} | cat",
]
EXPECTED = {
    "echo {{ x }}": "{v}",
    "echo pre{{ x }}post": "pre{v}post",
    "echo --opt={{ x }}": "--opt={v}",
    'v={{ x }}; echo "$v"': "{v}",
    "echo {{ x }} | cat": "{v}",
}

UNSAFE = [
    "echo '{{ x }}'",
    'echo "{{ x }}"',
    'echo "a {{ x }} b"',
    "echo $'{{ x }}'",
    "echo `echo {{ x }}`",
    "cat <<EOF\n{{ x }}\nEOF",
    "cat <<'EOF'\n{{ x }}\nEOF",
    "echo $(( {{ x }} + 1 ))",
    "(( {{ x }} > 1 ))",
    "[[ {{ x }} -eq 1 ]]",
    "echo \"$(echo '{{ x }}')\"",
    "echo ok # {{ x }}",
    'echo {{ x }}; echo "{{ y }}"',
]


@pytest.mark.parametrize("template", UNSAFE)
def test_renderer_refuses_unsafe_positions(template: str) -> None:
    assert unsafe_placeholders(template)
    with pytest.raises(TemplateError, match="refused to build the command"):
        render_command(template, {"x": "1", "y": "2"})


@pytest.mark.parametrize("template", SAFE)
def test_safe_positions_are_accepted(template: str) -> None:
    assert unsafe_placeholders(template) == ()
    render_command(template, {"x": "1"})


def test_lint_rejects_a_quoted_placeholder_with_file_line(tmp_path: Path) -> None:
    (tmp_path / "10-a.yaml").write_text(
        "phase: a\ntitle: A\nsteps:\n  - id: s\n    title: S\n    why: w\n    hosts: all\n"
        '    verify:\n      run: echo "{{ x }}"\n  - id: t\n    title: T\n    why: w\n'
        "    hosts: all\n    verify:\n      run: |\n        echo ok\n        echo '{{ y }}'\n"
    )
    with pytest.raises(InputError) as info:
        load_runbook(tmp_path)
    text = str(info.value)
    assert (
        f"{tmp_path / '10-a.yaml'}:9: step s: verify.run: {{{{ x }}}} is inside double quotes: "
        "drop the quotes, the value is quoted for you"
    ) in text
    assert (
        f"{tmp_path / '10-a.yaml'}:15: step t: verify.run: {{{{ y }}}} is inside single quotes "
        "(line 2 of the command): drop the quotes"
    ) in text


def test_shipped_steps_lint_clean() -> None:
    book = load_runbook(Path(__file__).resolve().parents[2] / "steps")
    for step in book.steps:
        for action in (step.verify, step.apply, step.rollback):
            if action:
                assert unsafe_placeholders(action.run) == (), step.id


async def _run_corpus(transport: Transport, host: str) -> None:
    await transport.run(host, f"rm -f {MARK}", timeout=10)
    values = HOSTILE + [HOSTILE[:4], {"k": HOSTILE[0]}]
    for template, value in itertools.product(SAFE, values):
        cmd = render_command(template, {"x": value})
        r = await transport.run(host, cmd, timeout=10)
        assert r.unknown_reason is None, (cmd, r.unknown_reason)
        if template in EXPECTED and isinstance(value, str):
            # the value arrived as one word, byte for byte
            assert r.stdout == EXPECTED[template].format(v=value) + "\n", (cmd, r.stdout)
    r = await transport.run(host, f"test -e {MARK} && echo INJECTED || echo clean", timeout=10)
    assert r.stdout == "clean\n"


async def test_hostile_values_run_nothing_on_the_simulator(make_lab) -> None:
    lab = await make_lab(1)
    node = lab.node(lab.names()[0])
    hosts = {
        "n1": Host(
            "n1",
            {
                "ansible_host": node.address,
                "ansible_port": node.port,
                "ansible_user": "root",
                "ansible_ssh_private_key_file": str(lab.client_key),
            },
        )
    }
    t = Transport(hosts, policy=HostKeyPolicy([lab.known_hosts]), ssh_config=[], connect_timeout=5)
    try:
        await _run_corpus(t, "n1")
    finally:
        await t.close()


@pytest.mark.sshd
async def test_hostile_values_run_nothing_on_a_real_sshd(sshd_server) -> None:
    srv = sshd_server
    hosts = {
        "n1": Host(
            "n1",
            {
                "ansible_host": srv.addr,
                "ansible_port": srv.port,
                "ansible_user": srv.user,
                "ansible_ssh_private_key_file": str(srv.client_key),
            },
        )
    }
    t = Transport(hosts, policy=HostKeyPolicy([srv.known_hosts]), ssh_config=[], connect_timeout=5)
    try:
        await _run_corpus(t, "n1")
        assert not Path(MARK).exists()
    finally:
        await t.close()
