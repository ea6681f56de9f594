"""`runbook COMMAND` builds only COMMAND's arguments (cli/main.py build_parser(only)):
what it parses and the help it prints are those of the whole parser."""

import io
from contextlib import redirect_stdout

import pytest

from runbook.cli.main import COMMANDS, build_parser, command_of

LINES = [
    "run --steps s --inventory i --state x --new-run --json --step a --step b --max-handshakes 8",
    "run --phase nic-mode --action apply --yes --hosts gpu[01-04]",
    "waive ib-link-speed --hosts gpu07 --reason cable --expires-days 3",
    "lint --steps s --inventory i",
    "status --json",
    "export --state x",
]


@pytest.mark.parametrize("line", LINES)
def test_the_command_alone_parses_as_the_whole_parser(line):
    argv = line.split()
    assert vars(build_parser(command_of(argv)).parse_args(argv)) == vars(build_parser().parse_args(argv))


def _help(parser, argv) -> str:
    out = io.StringIO()
    with redirect_stdout(out), pytest.raises(SystemExit):
        parser.parse_args(argv)
    return out.getvalue()


@pytest.mark.parametrize("command", COMMANDS)
def test_the_command_alone_prints_the_same_help(command):
    assert _help(build_parser(command), [command, "--help"]) == _help(build_parser(), [command, "--help"])


def test_runbook_help_lists_every_command():
    text = _help(build_parser(command_of(["--help"])), ["--help"])
    assert all(f"    {c} " in text or f"    {c}\n" in text for c in COMMANDS)
