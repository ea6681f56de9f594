"""`runbook run` and `runbook status`, `runs`, `skip|waive|note`.

Start-up matters here (bench/cold_start.py): `runbook run` starts the TCP connects a
run with the same arguments made first before it imports or loads anything
(workspace/dial_plan.py), imports what it needs before its first SSH connection and the
rest (rich, the summary, the explanations) after the connections are under way; what
only other commands use is imported in them."""

from __future__ import annotations

import json
import signal
import sys
import time
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import EXIT_OK, UsageError
from .collector import fewer_collections

if TYPE_CHECKING:
    from rich.console import Console

    from ..workspace.session import Session
    from .progress import RunProgress


def print_reasons(console: Console, doc: dict, runbook) -> None:
    """Why hosts are unknown or blocked, and what to run next (cli/explain.py)."""
    from .explain import explain

    for line in explain(
        doc, {s.id: s.phase for s in runbook.steps}, {s.id for s in runbook.steps if s.apply}
    ):
        console.print(line, highlight=False, markup=False, soft_wrap=True)


def _confirm_factory(args, console: Console, progress: RunProgress | None = None):
    from ..inventory.load import fold

    async def confirm(step, action: str, hosts: list[str], commands: dict[str, str]) -> bool:
        import asyncio

        ask = not args.yes and sys.stdin.isatty()
        by_cmd: dict[str, list[str]] = {}
        for h, c in commands.items():
            by_cmd.setdefault(c, []).append(h)
        with progress.paused() if progress else nullcontext():
            n = f"{len(hosts)} host{'' if len(hosts) == 1 else 's'}"
            console.print(f"[bold]{action}[/] {step.id} on {fold(hosts)} ({n}):", highlight=False)
            for c, hs in by_cmd.items():
                # the person who confirms reads every line; a log (--yes, no terminal) gets the gist
                shown = c if ask else command_gist(c, step.id)
                console.print(f"  {fold(hs)}: {shown}", highlight=False, markup=False)
            if step.apply and action == "apply" and step.apply.then:
                console.print(f"  then: {step.apply.then}", highlight=False, markup=False)
            if args.yes:
                return True
            if not ask:
                console.print(f"[red]not confirmed[/]: {action} needs --yes when there is no terminal to ask")
                return False
            # the question on stderr (stdout is data), its [y/N] as literal text, the bar stopped meanwhile
            console.print(f"{action} {step.id} on {n}? [y/N] ", end="", markup=False, highlight=False)
            answer = await asyncio.to_thread(sys.stdin.readline)
        return answer.strip().lower() in ("y", "yes")

    return confirm


def command_gist(command: str, step_id: str, width: int = 100) -> str:
    """The first line of a command, and how much was left out."""
    lines = command.strip().splitlines() or [""]
    first = lines[0] if len(lines[0]) <= width else lines[0][: width - 1] + "…"
    if len(lines) == 1 and first == lines[0]:
        return first
    return f"{first}  … ({len(lines)} lines; `runbook plan --step {step_id}` shows them all)"


def _open(args, project, **kw) -> Session:
    from ..workspace.session import Session

    return Session.open(
        project.runbook,
        project.inventory,
        args.state,
        operator=args.operator,
        run_id=getattr(args, "run", None),
        new=getattr(args, "new_run", False),
        trust_new_hosts=getattr(args, "trust_new_hosts", False),
        **kw,
    )


def cmd_run(args) -> int:
    from ..workspace.connecting import makes_new_run

    new_run = (
        _says_what_to_run(args)
        and not args.rerun_failed
        and makes_new_run(Path(args.state), getattr(args, "run", None), getattr(args, "new_run", False))
    )
    plan_key, planned, early = _dial_early(args) if new_run else (None, [], None)
    try:
        project, steps, hosts, first, predialed = _load_and_dial(args, new_run, plan_key, planned, early)
    except BaseException:
        if early is not None:
            early.close()
        raise
    from .. import event_loop  # after the connects above: they need only the standard library

    try:
        commands = len(steps) * len(hosts if hosts is not None else project.inventory.hosts)
        return event_loop.run(_cmd_run(args, project, steps, hosts, first, predialed), commands)
    finally:
        if predialed is not None:
            predialed.close()  # the sockets no connect took


def _says_what_to_run(args) -> bool:
    return bool(args.step or args.phase or args.all or args.rerun_failed or args.resume)


def _dial_early(args):
    """(the dial plan's key, its addresses, their connects) when an earlier run with the
    same arguments and files left a plan (workspace/dial_plan.py), before anything else
    is imported or loaded."""
    from ..transport.predial import PreDialed, ssh_config_present
    from ..workspace import dial_plan

    key = dial_plan.plan_key(args)
    planned = dial_plan.recall(args.state, key)
    early = PreDialed(planned) if planned and not ssh_config_present() else None
    return key, planned, early


def _load_and_dial(args, new_run: bool, plan_key, planned, early):
    """Load the project, choose the steps and hosts, and start the TCP connects to the
    first step's hosts (transport/predial.py), keeping the early ones still wanted."""
    from ..transport.predial import PreDialed, first_addresses
    from ..workspace import dial_plan
    from ..workspace.project import load_project
    from ..workspace.selection import first_hosts

    project = load_project(args.steps, args.inventory, state=args.state)
    if not _says_what_to_run(args):
        raise UsageError("say what to run: --step ID, --phase P, --all, --resume or --rerun-failed")
    steps, hosts = _selection(project, args)  # before a run is created or locked
    first = (
        []
        if args.rerun_failed
        else first_hosts(project.runbook, project.inventory, steps, args.action, hosts)
    )
    addresses = first_addresses(project.inventory, first, args.max_handshakes) if first and new_run else []
    if early is not None:
        early.want(addresses)
        predialed = early
    else:
        # their TCP connects now, while asyncssh is imported
        predialed = PreDialed(addresses)
    if new_run and addresses != planned:
        dial_plan.remember(args.state, plan_key, addresses)
    if not predialed:
        predialed.close()
        predialed = None
    return project, steps, hosts, first, predialed


async def _cmd_run(args, project, steps, hosts, first: list[str], predialed=None) -> int:
    # A new run connects to the hosts of its first step before the session's own
    # modules are imported and while its store is created (workspace/connecting.py);
    # the output's modules are imported meanwhile, off the loop.
    from ..workspace.connecting import open_connecting

    session = await open_connecting(
        project.runbook,
        project.inventory,
        args.state,
        first,
        operator=args.operator,
        run_id=getattr(args, "run", None),
        new=getattr(args, "new_run", False),
        trust_new_hosts=getattr(args, "trust_new_hosts", False),
        max_handshakes=args.max_handshakes,
        meanwhile=_import_output_modules,
        predialed=predialed,
        **(
            {"verify_retries": args.verify_retries}
            if getattr(args, "verify_retries", None) is not None
            else {}
        ),
    )
    try:
        project.remember_caches(args.state)  # a site's first run: its state directory exists now
        from rich.console import Console

        from ..inventory.load import fold
        from ..run.summary import run_summary
        from .progress import RunProgress, summary_table
        from .summary_json import summary_json

        console = Console(stderr=True, soft_wrap=True)
        interrupted = {s: hs for s, hs in _interrupted(session).items()}
        for why in session.stale.values():
            console.print(f"[yellow]stale: {why}; those hosts are re-verified[/]", highlight=False)
        for step_id, hs in interrupted.items():
            console.print(
                f"[yellow]{len(hs)} host(s) were interrupted in {step_id} ({fold(hs)}); re-verifying[/]"
            )
        progress = RunProgress(console, job_of=_detached_job_of(session, session.runbook))
        code = await _run(session, steps, args, hosts, progress, console)
        _say_pinned(session, console)
        if code is not None:
            return code
        doc = session.finished_summary(steps, hosts) or run_summary(
            session.state, steps, project.inventory, hosts, with_exit_code=True
        )
        rc = doc["exit_code"]
        console.print(summary_table(doc))
        print_reasons(console, doc, project.runbook)
        if session.state.pending:
            for action, hs in doc["pending_actions"].items():
                console.print(f"[yellow]{action} owed: {hs}[/]")
        if args.json:
            # one write: json.dump writes piece by piece (~2.5x the CPU on a large run)
            sys.stdout.write(summary_json(doc) + "\n")
        return rc
    finally:
        try:
            await session.transport.close()  # also when set-up failed before _run
        finally:
            session.close_store()


def _detached_job_of(session, runbook):
    """session.detached_job, asked only for the steps that have a detached action:
    it is asked at every host's start, and for the others it always says None."""
    detached = {
        s.id
        for s in runbook.steps
        if any(getattr(getattr(s, a, None), "detach", False) for a in ("verify", "apply", "rollback"))
    }

    def job_of(step_id: str, host: str):
        return session.detached_job(step_id, host) if step_id in detached else None

    return job_of


def _import_output_modules() -> None:
    """What the run's output needs (rich, the progress bar, the summary): ~0.1 s of
    imports, done in a worker thread while the loop goes on with the handshakes
    (workspace/connecting.py)."""
    import rich.console  # noqa: F401

    from ..run import summary  # noqa: F401
    from . import progress  # noqa: F401


def _say_pinned(session: Session, console: Console) -> None:
    """--trust-new-hosts: every key it pinned, so the operator can check them."""
    if session.pinned:
        where = session.transport.policy.pin_file
        console.print(f"pinned {len(session.pinned)} new host key(s) into {where}:", highlight=False)
        for host, fp in session.pinned:
            console.print(f"  {host} {fp}", highlight=False, markup=False)


def _selection(project, args):
    from ..workspace.selection import choose_hosts, choose_steps
    from .suggest import check_step_ids

    check_step_ids(project.runbook, args.step or [])
    return (
        choose_steps(project.runbook, args.step or None, args.phase),
        choose_hosts(project.inventory, args.hosts),
    )


def _interrupted(session: Session) -> dict[str, list[str]]:
    return session.store.interrupted()


async def _run(session: Session, steps, args, hosts, progress: RunProgress, console: Console) -> int | None:
    import asyncio

    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    stopped = []

    def stop(terminated: bool = False) -> None:
        stopped.append(time.time())
        if terminated:  # SIGTERM: the process is killed, the work is not stopped
            session.leave_detached_running()
        console.print("[yellow]stopping: commands in flight are recorded as interrupted[/]")
        task.cancel()

    # Ctrl-C is the operator's stop: it also ends detached jobs on the nodes;
    # SIGTERM leaves them running for a resume (docs/long-running-steps.md).
    loop.add_signal_handler(signal.SIGINT, stop)
    loop.add_signal_handler(signal.SIGTERM, stop, True)
    try:
        with progress, fewer_collections():
            await session.execute(
                steps,
                args.action,
                hosts=hosts,
                again=args.again,
                rerun_failed=args.rerun_failed,
                confirm=_confirm_factory(args, console, progress),
                on_events=progress,
            )
    except asyncio.CancelledError:
        if not stopped:
            raise
        # the engine already recorded the in-flight commands as interrupted
        console.print("[yellow]stopped; progress is saved — `runbook run --resume` continues[/]")
        return 130
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        await session.transport.close()
    return None


def cmd_status(args) -> int:
    from rich.console import Console

    from ..run.summary import run_summary
    from ..store.store import Store
    from ..workspace.project import eprint
    from ..workspace.run_project import project_of_run
    from .progress import summary_table
    from .summary_json import summary_json

    store = Store.open(args.state, getattr(args, "run", None), read_only=True)
    try:
        # the outputs' hashes are checked as export checks them (the journal's lines
        # and, at open, the chain from its last checkpoint); a damaged one is an error
        store.check_outputs()
        # the run's own steps and inventory: status works anywhere with only --state
        project = project_of_run(store, args.steps, args.inventory, check=True)
        for note in project.notes:
            eprint(f"runbook status: {note}")
        state = store.state  # read-only: nothing else feeds it, no copy needed
        state.manual_steps = {s.id for s in project.runbook.steps if s.manual}
        steps = project.runbook.steps
        doc = run_summary(state, steps, project.inventory, with_exit_code=True)
        rc = doc["exit_code"]
        if args.json:
            # one write: json.dump writes piece by piece (~2.5x the CPU on a large run)
            sys.stdout.write(summary_json(doc) + "\n")
        else:
            Console().print(summary_table(doc))
            print_reasons(Console(), doc, project.runbook)
            for action, hs in doc["pending_actions"].items():
                Console().print(f"[yellow]{action} owed: {hs}[/]")
        return rc
    finally:
        store.close()


def cmd_runs(args) -> int:
    from ..store.store import Store
    from ..workspace.project import eprint
    from .human import runs_table, wide_console

    runs = Store.list_runs(args.state)
    rows = [r if isinstance(r, dict) else dict(vars(r)) for r in runs]
    if getattr(args, "json", False):
        for r in rows:  # one JSON object per run: data for scripts
            print(json.dumps(r, default=str))
        return EXIT_OK
    if not rows:
        eprint(f"no runs in {args.state} yet: `runbook run` starts one")
        return EXIT_OK
    wide_console().print(runs_table(rows, args.state, time.time()))
    return EXIT_OK


def cmd_decide(args) -> int:
    from ..workspace.project import eprint, load_project
    from .suggest import check_step_ids

    project = load_project(args.steps, args.inventory, state=args.state)
    check_step_ids(project.runbook, [args.step])
    session = _open(args, project)
    try:
        expires = None
        if getattr(args, "expires_days", None):
            expires = time.time() + float(args.expires_days) * 86400
        ev = session.decide(args.command, args.step, args.hosts or "", args.reason, expires)
        eprint(f"{args.command} recorded for {ev.step_id} on {ev.hosts or 'all its hosts'} by {ev.operator}")
        return EXIT_OK
    finally:
        session.close_store()
