"""The small shell behaves like sh for the forms runbook steps use."""

import pytest


@pytest.fixture
def gpu01(machine_of):
    return machine_of(2)("gpu01")


@pytest.mark.parametrize(
    "command, out, status",
    [
        ("echo hello world | wc -w", "2\n", 0),
        ("false || echo ok && echo yes", "ok\nyes\n", 0),
        ("true && false; echo $?", "1\n", 0),
        ("foo; echo $?", "127\n", 0),
        ("exit 3", "", 3),
        ("! false", "", 0),
        ("x=3; echo $((x + 1)) ${x}", "4 3\n", 0),
        ("echo 'a  b' \"c $HOSTNAME\" d\\ e", "a  b c gpu01 d e\n", 0),
        ("echo $(echo a; echo b)", "a b\n", 0),
        ("echo \"$(printf 'x\\ny')\"", "x\ny\n", 0),
        ("set -e; false; echo not-reached", "", 1),
        ("set -o pipefail; false | true; echo $?", "1\n", 0),
        ("false | true; echo $?", "0\n", 0),
        (
            "if [ -f /etc/hostname ]; then echo file; elif true; then echo no; else echo never; fi",
            "file\n",
            0,
        ),
        ("for d in a b c; do printf '%s-' $d; done; echo", "a-b-c-\n", 0),
        ("n=0; while [ $n -lt 3 ]; do n=$((n+1)); done; echo $n", "3\n", 0),
        ("{ echo a; echo b; } | sort -r | head -1", "b\n", 0),
        ("(exit 4); echo $?", "4\n", 0),
        ("printf '%s %d\\n' a 1 b 2", "a 1\nb 2\n", 0),
        ("printf 'b\\na\\nb\\n' | sort | uniq -c", "      1 a\n      2 b\n", 0),
        ("printf 'x 1\\ny 2\\n' | awk '{s += $2} END {print s}'", "3\n", 0),
        ("printf 'x:1\\ny:2\\n' | awk -F: '$2 > 1 {print $1}'", "y\n", 0),
        ("printf 'a\\nb\\nc\\n' | tail -n 2 | head -1", "b\n", 0),
        ("echo abc | grep -q b && echo found", "found\n", 0),
        ("echo abc | grep -c z; echo $?", "0\n1\n", 0),
        ("echo a,b,c | cut -d, -f2", "b\n", 0),
        ("[ 3 -gt 2 ] && [ x = x ] && test -n y && echo yes", "yes\n", 0),
        ("ls /nonexistent 2>/dev/null; echo $?", "2\n", 0),
        ("echo err >&2 2>/dev/null", "", 0),
        ("cat /nope 2>&1", "cat: /nope: No such file or directory\n", 1),
    ],
)
async def test_shell_semantics(gpu01, sh, command, out, status):
    stdout, stderr, code = await sh(gpu01, command)
    assert (stdout, code) == (out, status), stderr


async def test_unknown_command_answers_like_bash(gpu01, sh):
    out, err, code = await sh(gpu01, "frobnicate --now")
    assert (out, err, code) == ("", "bash: frobnicate: command not found\n", 127)


async def test_syntax_error_is_status_2(gpu01, sh):
    out, err, code = await sh(gpu01, "if true; then echo")
    assert code == 2 and "syntax error" in err


async def test_heredoc_write_and_read_back(gpu01, sh):
    out, err, code = await sh(
        gpu01,
        "cat > /tmp/x.conf <<EOF\nhost $HOSTNAME\nliteral \\$HOME\nEOF\ncat /tmp/x.conf; wc -l < /tmp/x.conf",
    )
    assert out == "host gpu01\nliteral $HOME\n2\n", err
    out, _, _ = await sh(gpu01, "cat <<'EOF'\n$HOSTNAME stays\nEOF\n")
    assert out == "$HOSTNAME stays\n"


async def test_append_tee_and_printf_redirect(gpu01, sh):
    await sh(gpu01, "printf 'a\\n' > /tmp/f; echo b >> /tmp/f; echo c | tee -a /tmp/f > /dev/null")
    out, _, _ = await sh(gpu01, "cat /tmp/f")
    assert out == "a\nb\nc\n"


async def test_redirect_into_missing_directory_fails_before_running(gpu01, sh):
    out, err, code = await sh(gpu01, "echo hi > /etc/nope/file; echo $?")
    assert out == "1\n" and "No such file or directory" in err


async def test_glob_expansion_over_sysfs(gpu01, sh):
    out, _, _ = await sh(gpu01, "echo /sys/class/infiniband/*/ports/1/link_layer")
    assert out.split() == [f"/sys/class/infiniband/mlx5_{i}/ports/1/link_layer" for i in range(7)]
    out, _, _ = await sh(gpu01, "for f in /proc/irq/*/smp_affinity_list; do echo $f $(cat $f); done | wc -l")
    assert int(out) == len(gpu01.state.irqs)
    out, _, _ = await sh(gpu01, "echo /nomatch/*")
    assert out == "/nomatch/*\n"


async def test_stdin_reaches_the_first_command(gpu01, sh):
    out, _, code = await sh(gpu01, "sort | head -1", stdin="b\na\n")
    assert (out, code) == ("a\n", 0)


async def test_background_job_and_wait(gpu01, sh):
    out, _, code = await sh(gpu01, "(sleep 0.05; echo late) & echo early; wait")
    assert out == "early\nlate\n" and code == 0


async def test_a_shell_whose_session_is_gone_stops_before_its_next_command(gpu01):
    """A real shell whose SSH client went away dies at its next write (SIGPIPE);
    the simulated one stops before its next command (sim/session.py sets
    `hung_up`), so a killed client's loop cannot meet the next run's servers."""
    from runbook.sim.session import run_line
    from runbook.sim.shell.interp import Shell

    shell = Shell(gpu01)
    gone = {"now": False}
    shell.hung_up = lambda: gone["now"]
    out, _err, status = await run_line(gpu01, "echo one; echo two", shell=shell)
    assert (out, status) == ("one\ntwo\n", 0)  # a live session runs everything

    shell = Shell(gpu01)
    seen = []

    def hung_up():
        seen.append(1)
        return len(seen) > 2  # the client goes away after the second command started

    shell.hung_up = hung_up
    out, _err, status = await run_line(gpu01, "echo one; echo two; echo three; echo four", shell=shell)
    assert out == "one\ntwo\n" and status == 141
