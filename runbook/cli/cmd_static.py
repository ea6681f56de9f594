"""`runbook lint`, `plan`, `inventory`, `parse`: commands that read files and run nothing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .. import parsers
from ..definition.plan import build_plan
from ..definition.plan_render import to_markdown, to_text
from ..errors import EXIT_OK, InputError, Problem, UsageError
from ..inventory.load import ansible_host, ansible_list, dumps, load_inventory, select_hosts
from ..workspace.project import eprint, load_project
from .human import record_table, wide_console
from .suggest import check_step_ids


def cmd_lint(args) -> int:
    project = load_project(args.steps, args.inventory)
    n = len(project.runbook.steps)
    eprint(
        f"ok: {n} steps in {len(project.runbook.phases)} phases, "
        f"{len(project.inventory.hosts)} hosts in the inventory"
    )
    return EXIT_OK


def cmd_plan(args) -> int:
    project = load_project(args.steps, args.inventory)
    limit = select_hosts(project.inventory, args.hosts) if args.hosts else None
    check_step_ids(project.runbook, args.step or [])
    try:
        plan = build_plan(project.runbook, project.inventory, step_ids=args.step or None, limit=limit)
    except KeyError as exc:
        raise UsageError(exc.args[0]) from None
    if args.format == "json":
        json.dump(plan, sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif args.format == "md":
        sys.stdout.write(to_markdown(plan))
    else:
        sys.stdout.write(to_text(plan))
    return EXIT_OK


def cmd_inventory(args) -> int:
    inv = load_inventory(args.inventory)
    if args.host:
        if args.host not in inv.hosts:
            raise UsageError(f"no host {args.host!r} in {args.inventory}")
        out = ansible_host(inv, args.host)
    else:
        out = ansible_list(inv)
    sys.stdout.write(dumps(out) + "\n")  # byte for byte what ansible-inventory prints
    return EXIT_OK


def cmd_parse(args) -> int:
    if args.list:
        for name in parsers.names():
            parser = parsers.get(name)
            sys.stdout.write(f"{name:24} {parser.description or parser.reads}\n")
        return EXIT_OK
    if not args.parser:
        raise UsageError("parse: name a parser (runbook parse --list shows them)")
    try:
        parser = parsers.get(args.parser)
    except KeyError as exc:
        raise UsageError(exc.args[0]) from None
    if args.file and args.file != "-":
        try:
            text = Path(args.file).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise InputError(Problem(args.file, None, f"cannot read: {exc.strerror}")) from None
        where = args.file
    else:
        text = sys.stdin.read()
        where = "<stdin>"
    try:
        # Lenient unless --strict: an engineer pastes fragments; a step's verify
        # (criteria/host.py) calls the strict parsers.parse.
        reading = parser.read(text, lenient=not args.strict)
    except parsers.ParseError as exc:
        raise InputError(Problem(where, None, f"not readable as {args.parser} output: {exc}")) from None
    if args.json:
        json.dump(reading.record, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    else:
        # a person reads key=value lines and tables, never a Python repr (--json is for scripts)
        wide_console().print(record_table(reading.record, title=f"{args.parser}: {where}"))
    for what in reading.missing:
        eprint(f"{where}: partial {args.parser} output, missing: {what}")
    return EXIT_OK
