"""The script that runs several commands in one channel, and the split of its
output back per command (runbook/transport/batch_script.py): byte-exact, each
command isolated, markers that output cannot forge. Checked against the real
bash of this machine: each command alone (`bash -c CMD`, as sshd runs it) and
inside the script must give the same stdout, stderr and exit status."""

import os
import shutil
import subprocess

import pytest

from runbook.transport.batch_script import BatchScript

TRICKY = [
    "echo hi",
    "printf 'no newline'",
    "exit 3",
    "set -e; false; echo never",
    "cd /tmp && pwd",
    "pwd",  # the cd above stayed in its own command
    "echo err >&2; echo out",
    "nosuchtool_xyz",
    "echo 'unbalanced",  # a syntax error stays in its own command
    "echo a )",
    "printf '\\n\\n'",
    "printf ''",
    "printf '\\xff\\xfe'",  # not UTF-8: replaced as the lone channel's decoder does
    "echo $0",
    "# only a comment",
    "echo x # a trailing comment",
    "for i in 1 2 3; do echo $i; done | tail -1",
    "cat <<EOF\nheredoc\nEOF",
    "true",
]


def _split(script: BatchScript, out: bytes, err: bytes, chunk: int | None = None) -> BatchScript:
    step = chunk or max(len(out), len(err), 1)
    for k in range(0, max(len(out), len(err)), step):
        script.feed(0, out[k : k + step])
        script.feed(1, err[k : k + step])
    return script


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash here")
@pytest.mark.parametrize("chunk", [None, 1, 7])
def test_each_command_comes_back_as_from_its_own_shell(tmp_path, chunk):
    env = dict(os.environ, SHELL=shutil.which("bash"))

    def bash(text: str):
        return subprocess.run(
            ["bash", "-c", text], capture_output=True, env=env, cwd=tmp_path, stdin=subprocess.DEVNULL
        )

    script = BatchScript(TRICKY)
    whole = bash(script.text)
    assert whole.returncode == 0
    _split(script, whole.stdout, whole.stderr, chunk)
    assert script.done == len(TRICKY) and not script.broken
    for i, command in enumerate(TRICKY):
        alone = bash(command)
        expected = (
            alone.stdout.decode("utf-8", "replace"),
            alone.stderr.decode("utf-8", "replace"),
            alone.returncode,
        )
        assert script.result(i) == expected, command


def test_the_token_is_never_one_word_of_the_script():
    script = BatchScript(["echo a", "echo b"])
    assert len(script.token) == 32
    assert script.token not in script.text  # a `ps` of the script cannot print a marker
    assert BatchScript(["echo a"]).token != script.token  # from secrets


def test_a_marker_out_of_place_stops_the_split():
    script = BatchScript(["a", "b", "c"], token="0" * 32)
    mark = b"\n" + b"0" * 32
    script.feed(0, b"one" + mark + b" 0 0\n" + b"two" + mark + b" 2 0\n")  # index 1 skipped
    script.feed(1, mark + b" 0\n" + mark + b" 1\n")
    assert script.done == 1 and script.broken
    assert script.result(0) == ("one", "", 0)


def test_a_marker_missing_on_stderr_holds_the_command():
    script = BatchScript(["a", "b"], token="1" * 32)
    mark = b"\n" + b"1" * 32
    script.feed(0, b"x" + mark + b" 0 0\n" + mark + b" 1 0\n")
    script.feed(1, mark + b" 0\n")
    assert script.done == 1 and not script.broken


def test_output_that_looks_like_a_marker_without_the_token_is_output():
    script = BatchScript(["a"], token="2" * 32)
    mark = b"\n" + b"2" * 32
    text = b"\n" + b"2" * 31 + b" 0 0\nreal\n"
    script.feed(0, text + mark + b" 0 5\n")
    script.feed(1, mark + b" 0\n")
    assert script.result(0) == (text.decode(), "", 5)


def test_what_a_command_in_flight_wrote_so_far():
    script = BatchScript(["a", "b"], token="3" * 32)
    mark = b"\n" + b"3" * 32
    script.feed(0, b"first" + mark + b" 0 0\nhalf of the sec")
    script.feed(1, mark + b" 0\nwarn")
    assert script.done == 1
    assert script.partial(1) == ("half of the sec", "warn")
