#!/usr/bin/env python3
"""Where the CPU of one `runbook run` goes, without a profiler's distortion:
the CLI is run in this process with timers (CPU time of the calling thread)
around its parts. Sequential parts are timed directly; the synchronous calls
made while the hosts run concurrently (store appends -- in a worker thread
since the session moved them off the event loop --, parse, judge) are summed;
what remains of the step on the main thread is the transport, the engine and
the event loop. (cProfile sees only the main thread: use these timers for the
store.)

  python bench/stack_costs.py -- run --steps steps --inventory LAB/inventory.yaml \
      --state DIR --new-run --json --step ofed-version

Prints one JSON object on stderr's last line (stdout is runbook's own).
"""

from __future__ import annotations

import time

C0, W0 = time.process_time(), time.perf_counter()

import functools  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402

import runbook.cli.main as cli_main  # noqa: E402

C_MAIN = time.process_time()
parts: dict[str, float] = {}
calls: dict[str, int] = {}


def timed(owner, name: str, label: str, is_async: bool = False) -> None:
    orig = getattr(owner, name)

    if is_async:

        @functools.wraps(orig)
        async def wrapper(*a, **kw):
            c = time.thread_time()
            try:
                return await orig(*a, **kw)
            finally:
                parts[label] = parts.get(label, 0.0) + time.thread_time() - c
                calls[label] = calls.get(label, 0) + 1
    else:

        @functools.wraps(orig)
        def wrapper(*a, **kw):
            c = time.thread_time()
            try:
                return orig(*a, **kw)
            finally:
                parts[label] = parts.get(label, 0.0) + time.thread_time() - c
                calls[label] = calls.get(label, 0) + 1

    setattr(owner, name, wrapper)


def install() -> None:
    # imported here, after the CLI module itself, as `runbook run` imports them; each
    # function is timed where it is defined: `runbook run` imports most of them inside
    # its functions, so it finds the timed one at call time
    from runbook.cli import main as m
    from runbook.cli import progress
    from runbook.engine import hostrun
    from runbook.run import summary
    from runbook.store.store import Store
    from runbook.workspace import connecting, project
    from runbook.workspace.session import Session

    timed(m, "build_parser", "1 argparse set-up (imports what it names)")
    timed(project, "load_project", "2 load runbook + inventory + lint")
    timed(
        connecting,
        "open_connecting",
        "3 open session (store create, transport; the first handshakes meanwhile)",
        is_async=True,
    )
    timed(
        Session,
        "execute",
        "4 the step, main thread (transport, engine, parse, judge, asyncio)",
        is_async=True,
    )
    timed(Store, "append_many", "4a the step, store appends (durable; worker thread)")
    timed(hostrun, "parse_output", "4b  of 4: parse output")
    timed(hostrun, "judge_host", "4c  of 4: judge (criteria)")
    timed(summary, "run_summary", "5 summary document")
    timed(progress, "summary_table", "6 summary table (rich)")


def main() -> None:
    argv = sys.argv[1:]
    if argv and argv[0] == "--":
        argv = argv[1:]
    c = time.thread_time()
    install()
    parts["0b import the rest of `runbook run` (cmd_run, session, store, engine, transport, asyncssh)"] = (
        time.thread_time() - c
    )
    rc = 0
    try:
        rc = cli_main.main(argv)
    except SystemExit as e:
        rc = e.code or 0
    total = time.process_time()
    doc = {
        "argv": argv,
        "rc": rc,
        "total_cpu": round(total, 4),
        "wall": round(time.perf_counter() - W0, 4),
        "0 interpreter start-up": round(C0, 4),
        "0a import runbook.cli.main": round(C_MAIN - C0, 4),
        **{k: round(v, 4) for k, v in sorted(parts.items())},
        "calls": calls,
    }
    known = C_MAIN + sum(v for k, v in parts.items() if not k.startswith(("4b", "4c")))
    doc["rest (cmd_run glue, JSON output, exit)"] = round(total - known, 4)
    print(json.dumps(doc), file=sys.stderr)


if __name__ == "__main__":
    main()
