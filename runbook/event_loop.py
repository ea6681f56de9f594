"""The event loop `runbook run` and the simulator run on: uvloop where it is
installed (a dependency, pyproject.toml), asyncio's own otherwise, or with
RUNBOOK_UVLOOP=0.

uvloop is the asyncio event loop on libuv: the same API, the loop's turns and
the sockets' reads and writes in C instead of asyncio's Python selector loop.
A run spends much of its CPU there: a command's SSH packets, a thousand
connections' reads, the simulator's answers (bench/README.md, "After session
13", measured both ways on the whole runbook). Nothing of runbook depends on
which loop it is: both are asyncio event loops (asyncio.AbstractEventLoop).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
ENV = "RUNBOOK_UVLOOP"


def loop_factory(environ=os.environ) -> Callable[[], Any] | None:
    """uvloop's new_event_loop, or None (asyncio's default loop)."""
    if environ.get(ENV, "1").strip().lower() in ("0", "off", "no", "false"):
        return None
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def run(main: Coroutine[Any, Any, T]) -> T:
    """asyncio.run(main) on the loop loop_factory() chooses."""
    import asyncio

    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(main)
