"""The event loop `runbook run` and the simulator run on: uvloop where it is
installed (a dependency, pyproject.toml) and the work is large enough to pay for
it, asyncio's own otherwise; RUNBOOK_UVLOOP=0 or =1 decides instead.

uvloop is the asyncio event loop on libuv: the same API, the loop's turns and
the sockets' reads and writes in C instead of asyncio's Python selector loop.
A run spends much of its CPU there: ~10 % of the client's and 11-16 % of the
simulator's for the whole runbook (bench/loop_paired.py). It also costs ~15 ms
at start (its import and its loop; cold `runbook run --step` on 48 nodes, a
new state every run, 20 alternating pairs): more than it saves on a run of a
few dozen commands, which `runbook run` then makes on asyncio's loop
(MIN_COMMANDS; bench/README.md, "After session 13"). Nothing of runbook
depends on which loop it is: both are asyncio event loops.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
ENV = "RUNBOOK_UVLOOP"


# Host-commands a run may make (steps x hosts, at most) from which uvloop's start
# is worth it: a whole runbook on 48 nodes is ~2,600, one step on 1,000 nodes 1,000;
# one step on 48 nodes (50) is not.
MIN_COMMANDS = 200


def loop_factory(environ=os.environ, commands: int | None = None) -> Callable[[], Any] | None:
    """uvloop's new_event_loop, or None (asyncio's default loop). `commands`: how
    many host-commands the run may make at most (None: unknown, many)."""
    chosen = environ.get(ENV, "").strip().lower()
    if chosen in ("0", "off", "no", "false"):
        return None
    if not chosen and commands is not None and commands < MIN_COMMANDS:
        return None
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def run(main: Coroutine[Any, Any, T], commands: int | None = None) -> T:
    """asyncio.run(main) on the loop loop_factory() chooses."""
    import asyncio

    with asyncio.Runner(loop_factory=loop_factory(commands=commands)) as runner:
        return runner.run(main)
