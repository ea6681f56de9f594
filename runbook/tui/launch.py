"""`runbook tui`: load the project, open the session, run the app, close.

    run_tui(args) -> exit code
    args: steps, inventory, state, and optionally operator, run, trust_new_hosts,
          sign_key and export_output (pre-filled in the export dialog)

Problems with the step or inventory files are raised as InputError before
the terminal is taken over, so they print as FILE:LINE: messages."""

from __future__ import annotations

import asyncio

from ..errors import EXIT_OK


def run_tui(args) -> int:
    from ..workspace.project import load_project
    from ..workspace.session import Session
    from .app import make_app

    project = load_project(args.steps, args.inventory)
    session = Session.open(
        project.runbook,
        project.inventory,
        args.state,
        operator=getattr(args, "operator", None),
        run_id=getattr(args, "run", None),
        trust_new_hosts=bool(getattr(args, "trust_new_hosts", False)),
        stream_output=True,
    )

    async def main() -> int | None:
        app = make_app(
            session,
            export_output=getattr(args, "export_output", None),
            export_key=getattr(args, "sign_key", None),
        )
        try:
            await app.run_async()
        finally:
            # SSH connections live on this loop: close them here, not after it ends.
            await session.close()
        return app.return_code

    code = asyncio.run(main())
    return EXIT_OK if code is None else code
