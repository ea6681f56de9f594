"""Steps that are more than one command per host (docs/step-kinds.md).

Each kind turns its commands' results into ordinary per-host events
(HostStarted / HostFinished, with the optional `via`, `peer`, `link`), so the
run state judges them like any other step. The runner calls `run_kind` from
its verify; nothing else of the engine changes."""

from __future__ import annotations

import asyncio
import inspect

from ...definition.model import Step


async def run_kind(engine, step: Step, hosts: list[str], *, on_host=None) -> None:
    """`on_host(host)`: an async context held around each command the step runs
    on a host (a sweep beside a pipelined segment, engine/nodeuse.py)."""
    from .common import Ctx

    ctx = Ctx(engine, step, on_host)
    await _maybe(getattr(engine, "_settle", None))  # statuses read below are durable ones
    runnable = ctx.start(hosts)
    try:
        if runnable:
            if step.kind == "one":
                from .run_on_one import run_on_one

                await run_on_one(ctx, runnable)
            elif step.kind == "pairs":
                from .pairs import run_pairs

                await run_pairs(ctx, runnable)
            elif step.kind == "launch":
                from .launch import run_launch

                await run_launch(ctx, runnable)
            else:
                raise ValueError(f"unknown step kind {step.kind!r}")
    except asyncio.CancelledError:
        raise  # the runner records the hosts still running as interrupted
    ctx.unfinished_unknown()
    done = engine._step_finished(step, "verify", hosts)
    if inspect.isawaitable(done):
        await done


async def _maybe(func) -> None:
    if func is not None:
        r = func()
        if inspect.isawaitable(r):
            await r
