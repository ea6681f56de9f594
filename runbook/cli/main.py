"""`runbook` command line (docs/architecture.md and README.md are the contract: commands, exit codes,
stdout for data and stderr for progress)."""

from __future__ import annotations

import argparse
import sys

from .. import __version__
from ..errors import EXIT_USAGE, InputError, RunbookError, os_error
from . import numbers


def _common(p: argparse.ArgumentParser, *, state: bool = True) -> None:
    p.add_argument("--steps", default="steps", help="steps directory (default: steps/)")
    p.add_argument(
        "--inventory", default="inventory", help="inventory file or directory (default: inventory/)"
    )
    if state:
        p.add_argument("--state", default="state", help="state directory (default: state/)")
        p.add_argument("--operator", help="who is doing this (default: $RUNBOOK_OPERATOR or the login name)")
        p.add_argument("--run", help="run id (default: the latest run in the state directory)")


COMMANDS = (
    "lint", "plan", "inventory", "parse", "run", "status", "runs", "skip", "waive", "note", "tui",
    "export", "verify-log", "merge-logs", "sim", "demo", "init", "bundle",
)  # fmt: skip


def command_of(argv: list[str]) -> str | None:
    """The command named on the command line (the first word that is not an option:
    the top-level parser has no option that takes a value), or None."""
    for word in argv:
        if not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


class _Unbuilt:
    """Stands for a command that is not the one being run: takes its arguments, builds nothing."""

    def add_argument(self, *args, **kwargs) -> None:
        pass

    def add_mutually_exclusive_group(self, *args, **kwargs) -> _Unbuilt:
        return self

    def set_defaults(self, **kwargs) -> None:
        pass


_UNBUILT = _Unbuilt()


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """Every command with its help line and its arguments. With `only`, that command alone:
    a `runbook run` neither builds the others (a parser and a help formatter for each of
    their arguments: ~4 ms of a cold run) nor imports the modules where some of them live
    (export, verify-log, sim, bundle; bench/cold_start.py). `runbook --help` and a command
    that does not exist (`only` is None) get every command."""
    parser = argparse.ArgumentParser(
        prog="runbook", description="Deliver GPU / InfiniBand clusters step by step."
    )
    parser.add_argument("--version", action="version", version=f"runbook {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def wanted(name: str) -> bool:
        return only is None or only == name

    def command(name: str, **kw):
        # `runbook --help` (no command named: `only` is None) builds every one
        return sub.add_parser(name, **kw) if wanted(name) else _UNBUILT

    p = command("lint", help="check every step and inventory file")
    _common(p, state=False)

    p = command("plan", help="what would run, per host")
    _common(p, state=False)
    p.add_argument("--step", action="append", help="only this step (repeatable)")
    p.add_argument("--hosts", help="only these hosts (NodeSet / group expression)")
    p.add_argument(
        "--format",
        choices=("text", "md", "json"),
        default="text",
        help="text for a terminal, md for the customer's acceptance plan, json for scripts",
    )

    p = command("inventory", help="hosts, groups, merged vars as ansible-inventory prints them")
    p.add_argument(
        "--inventory", default="inventory", help="inventory file or directory (default: inventory/)"
    )
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--list", action="store_true", default=True, help="every host, group and var (the default)"
    )
    g.add_argument("--host", help="the merged vars of this one host")

    p = command(
        "parse",
        help="read a saved or pasted tool output",
        description="Read a saved or pasted tool output with one of the parsers (`runbook parse --list` "
        "lists them, one line each). A fragment is read as far as it goes: what is missing "
        "is said on stderr, exit 0 when something was read, 2 when nothing was.",
    )
    p.add_argument(
        "parser", nargs="?", help="parser name, e.g. mlxconfig, ibstat, nvidia-smi-topo (see --list)"
    )
    p.add_argument("file", nargs="?", help="file with the output (default: stdin)")
    p.add_argument("--json", action="store_true", help="print the record as JSON")
    p.add_argument("--list", action="store_true", help="list the parsers, one line each, and exit")
    p.add_argument(
        "--strict",
        action="store_true",
        help="require the complete output, as a step's verify does (exit 2 on a fragment)",
    )

    p = command("run", help="verify / apply / rollback steps over SSH")
    _common(p)
    p.add_argument("--step", action="append", help="step id (repeatable)")
    p.add_argument("--phase", help="every step of this phase (e.g. nic-mode)")
    p.add_argument("--all", action="store_true", help="every step of the runbook, in order")
    p.add_argument(
        "--action",
        choices=("verify", "apply", "rollback"),
        default="verify",
        help="verify (default); apply fixes on failing hosts; rollback what apply changed",
    )
    p.add_argument("--hosts", help="limit to these hosts (NodeSet / group expression)")
    p.add_argument("--yes", action="store_true", help="confirm apply/rollback without asking")
    p.add_argument("--json", action="store_true", help="one JSON document on stdout")
    p.add_argument("--resume", action="store_true", help="continue with what has not passed yet")
    p.add_argument("--rerun-failed", action="store_true", help="only failed / unknown / interrupted hosts")
    p.add_argument("--again", action="store_true", help="re-verify hosts that already passed too")
    p.add_argument("--new-run", action="store_true", help="start a new run instead of continuing the latest")
    p.add_argument(
        "--trust-new-hosts",
        action="store_true",
        help="trust on first use: pin unknown host keys into the state directory's "
        "known_hosts (a changed key is still refused)",
    )
    p.add_argument(
        "--max-handshakes",
        type=numbers.MAX_HANDSHAKES,
        help="concurrent SSH handshakes (default suits sshd MaxStartups)",
    )
    p.add_argument(
        "--verify-retries",
        type=numbers.VERIFY_RETRIES,
        default=None,
        metavar="N",
        help="tries more of a verify whose connection dropped or whose handshake timed out "
        "(default 3; 0: none; apply/rollback are never retried; docs/steps.md)",
    )

    p = command("status", help="the state of the run")
    _common(p)
    p.add_argument("--json", action="store_true", help="one JSON document on stdout")
    # the run's own steps and inventory (recorded in --state) are shown; the files
    # are read only for a run recorded before runs kept them (default steps/, inventory/)
    p.set_defaults(steps=None, inventory=None)

    p = command("runs", help="list the runs in the state directory")
    p.add_argument("--state", default="state", help="state directory (default: state/)")
    p.add_argument("--json", action="store_true", help="one JSON object per run, one per line")

    for kind, what in (
        ("skip", "skip a step on hosts"),
        ("waive", "accept a failure, with a reason"),
        ("note", "add a note (confirms a manual step)"),
    ):
        p = command(kind, help=what)
        _common(p)
        p.add_argument("step", help="step id")
        p.add_argument("--hosts", help="NodeSet (default: every host of the step)")
        p.add_argument("--reason", required=True, help="why, in words: recorded with your name")
        if kind == "waive":
            p.add_argument(
                "--expires-days", type=numbers.EXPIRES_DAYS, help="the waiver lapses after this many days"
            )

    p = command("tui", help="the terminal UI")
    _common(p)
    p.add_argument(
        "--trust-new-hosts",
        action="store_true",
        help="trust on first use: pin unknown host keys into the run's known_hosts",
    )

    p = command("export", help="signed completion log + report")
    p.add_argument("--state", default="state", help="state directory (default: state/)")
    p.add_argument(
        "--steps",
        default=None,
        help="only for a run recorded before runs kept their step definitions "
        "(default steps/); the log holds what the run used",
    )
    p.add_argument(
        "--inventory",
        default=None,
        help="only for a run recorded before runs kept their inventory (default inventory/)",
    )
    p.add_argument("--run", help="run id (default: the latest)")
    if wanted("export"):
        from .cmd_signed_log import add_export_arguments

        add_export_arguments(p)

    p = command("verify-log", help="check a signed completion log")
    if wanted("verify-log"):
        from .cmd_signed_log import add_verify_arguments

        add_verify_arguments(p)

    p = command("merge-logs", help="merge the pods' signed logs into one signed site log")
    if wanted("merge-logs"):
        from .cmd_signed_log import add_merge_arguments

        add_merge_arguments(p)

    p = command("sim", help="start the simulated lab on loopback")
    if wanted("sim"):
        from ..sim.main import add_arguments as add_sim_arguments

        add_sim_arguments(p)

    p = command("demo", help="the simulated lab + the runbook on it")
    p.add_argument("--headless", action="store_true", help="run the whole runbook with run's progress output")
    p.add_argument(
        "--nodes", type=numbers.SIM_NODES, default=48, help="compute nodes in the lab (default 48)"
    )
    p.add_argument("--scenario", help="fault scenario (default: the shipped demo scenario)")
    p.add_argument("--dir", help="where the lab and the run live (default: state/demo)")
    p.add_argument(
        "--sm-on",
        choices=("hosts", "switch"),
        default="hosts",
        help="where the lab's subnet managers run: hosts (OpenSM on sm01/sm02) or switch (on leaf01/leaf02)",
    )

    p = command("init", help="create a site directory: inventory template, steps, README, .gitignore")
    p.add_argument("dir", metavar="DIR", help="the new site directory")

    p = command("bundle", help="one archive with runbook and every dependency wheel, for air-gapped sites")
    if wanted("bundle"):
        from .cmd_bundle import add_arguments as add_bundle_arguments

        add_bundle_arguments(p)
    return parser


# command -> (module of runbook.cli, function): only the command's own module is imported
SIMPLE = {
    "lint": ("cmd_static", "cmd_lint"),
    "plan": ("cmd_static", "cmd_plan"),
    "inventory": ("cmd_static", "cmd_inventory"),
    "parse": ("cmd_static", "cmd_parse"),
    "run": ("cmd_run", "cmd_run"),
    "status": ("cmd_run", "cmd_status"),
    "runs": ("cmd_run", "cmd_runs"),
    "skip": ("cmd_run", "cmd_decide"),
    "waive": ("cmd_run", "cmd_decide"),
    "note": ("cmd_run", "cmd_decide"),
    "init": ("cmd_init", "cmd_init"),
    "bundle": ("cmd_bundle", "cmd_bundle"),
}


def dispatch(args) -> int:
    if args.command in SIMPLE:
        from importlib import import_module

        module, func = SIMPLE[args.command]
        return getattr(import_module(f"{__package__}.{module}"), func)(args)
    if args.command == "export":
        from .cmd_export import load_snapshot
        from .cmd_signed_log import cli_export

        return cli_export(args, load_snapshot)
    if args.command == "verify-log":
        from .cmd_signed_log import cli_verify_log

        return cli_verify_log(args)
    if args.command == "merge-logs":
        from .cmd_signed_log import cli_merge_logs

        return cli_merge_logs(args)
    if args.command == "sim":
        from ..sim.main import run as run_sim

        return run_sim(args)
    if args.command == "tui":
        from ..tui.launch import run_tui

        return run_tui(args)
    if args.command == "demo":
        from .demo import cmd_demo

        return cmd_demo(args)
    raise RunbookError(f"unknown command {args.command}")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser(command_of(sys.argv[1:] if argv is None else argv))
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    if argv is None and args.command == "run":  # the program, not a caller in-process
        # the collector held back from here (cli/collector.py), not only while the
        # work runs: the imports, the project's load and the first handshakes before
        # it took ~35 ms of full and middle collections at 48 hosts (raw asyncssh's
        # whole run: ~12 ms; bench/README.md, goal 2, branch cold3)
        from .collector import fewer_collections

        with fewer_collections():
            rc = _main(args)
        _leave_now(rc)
        return rc
    return _main(args)


def _leave_now(rc: int) -> None:
    """End `runbook run` without the interpreter's teardown of every object the run made
    (hundreds of connections, the run's state: ~0.2-0.4 s at 384 hosts, more at 1,000;
    bench/cold_phases.py), after what an exit does that matters: the atexit handlers
    (logging's flush, finalizers) and stdout/stderr flushed. When a thread is still
    running or a flush fails, the ordinary exit does it all (and reports the failure)."""
    import atexit
    import os
    import threading

    if threading.active_count() > 1:
        return
    try:
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        return
    os._exit(rc)


def _main(args) -> int:
    try:
        return dispatch(args)
    except InputError as exc:
        for p in exc.problems:
            print(str(p), file=sys.stderr)
        print(f"{len(exc.problems)} problem(s)", file=sys.stderr)
        return exc.exit_code
    except RunbookError as exc:
        print(f"runbook: {exc}", file=sys.stderr)
        return exc.exit_code
    except OSError as exc:  # a file we could not read or write: one line, exit 2
        print(f"runbook: {os_error(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("runbook: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
