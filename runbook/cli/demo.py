"""`runbook demo`: the simulated lab in the background and the runbook on it.

With a terminal it opens the TUI on the lab; `--headless` walks the whole
runbook instead (verify everything, apply every fix the tool can make, show
what is left, export the signed completion log with a key made for the
demo). Lab and run live under state/demo/ (or --dir), so a second `runbook
demo` continues where the first one stopped."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import RunbookError
from ..shipped import steps_dir
from ..sim.procs import SimProcess
from ..sim.scenario import DEFAULT
from ..workspace.project import eprint
from .lab_address import lab_address, new_lab_address


def demo_paths(args) -> tuple[Path, Path, Path]:
    base = Path(args.dir or "state/demo")
    return base, base / "lab", base / "state"


def ensure_demo_key(base: Path) -> Path:
    """An ed25519 key made for the demo, to sign the demo's completion log."""
    import asyncssh

    key_path = base / "demo_signing_key"
    if not key_path.exists():
        key = asyncssh.generate_private_key("ssh-ed25519", comment="demo@runbook")
        key.write_private_key(str(key_path))
        key.write_public_key(str(key_path) + ".pub")
        key_path.chmod(0o600)
    return key_path


def start_demo_lab(args) -> SimProcess:
    """The demo's lab, started, on the addresses this demo directory always uses
    (lab_address.py): a restarted demo writes the same inventory, so its run goes
    on with the same inventory version."""
    base, lab_dir, _state = demo_paths(args)
    lab_dir.mkdir(parents=True, exist_ok=True)
    eprint(f"runbook demo: starting the simulated lab ({args.nodes} nodes) in {lab_dir}")
    address, port = lab_address(base)

    def lab(address: str) -> SimProcess:
        return SimProcess(
            lab_dir,
            nodes=args.nodes,
            scenario=args.scenario or DEFAULT,
            base_address=address,
            port=port,
            lifetime=6 * 3600,
            reboot_seconds=3.0,
            slow_seconds=4.0,
            ready_timeout=120,
            extra=["--sm-on", getattr(args, "sm_on", "hosts")],
        )

    try:
        try:
            return lab(address).start()
        except RuntimeError as exc:
            if "in use" not in str(exc):
                raise
        # the addresses are taken (another lab listens there): move, once
        address = new_lab_address(base)
        eprint(
            f"runbook demo: the lab's addresses are in use; moving it to {address} port {port} "
            "(the run records the new inventory as a new version)"
        )
        return lab(address).start()
    except (RuntimeError, TimeoutError) as exc:
        raise RunbookError(f"the simulated lab did not start: {exc}") from None


def cmd_demo(args) -> int:
    base, lab_dir, state_dir = demo_paths(args)
    sim = start_demo_lab(args)
    try:
        eprint(
            f"runbook demo: lab up (pid {sim.pid}); plain OpenSSH works too: "
            f"ssh -F {sim.ssh_config} {sim.info.get('first', {}).get('name', 'gpu01')} ibstat"
        )
        # the shipped runbook, from the wheel or the checkout: the demo works from any directory
        run_args = argparse.Namespace(
            steps=str(steps_dir()),
            inventory=str(sim.inventory),
            state=str(state_dir),
            operator=None,
            run=None,
            trust_new_hosts=False,
        )
        if args.headless or not sys.stdout.isatty():
            return _headless(run_args, base)
        from ..tui.launch import run_tui

        # the export dialog (e) comes filled in with a key made for the demo
        run_args.sign_key = str(ensure_demo_key(base))
        run_args.export_output = str(base / "completion-log.json")
        return run_tui(run_args)
    finally:
        sim.stop()  # by its pid


def _headless(run_args: argparse.Namespace, base: Path) -> int:
    from . import cmd_run

    common = dict(
        vars(run_args),
        step=None,
        phase=None,
        all=True,
        hosts=None,
        json=False,
        resume=False,
        rerun_failed=False,
        again=False,
        new_run=False,
        max_handshakes=None,
        yes=True,
    )
    eprint("\n== 1. verify every step")
    cmd_run.cmd_run(argparse.Namespace(**common, action="verify"))
    eprint("\n== 2. apply every fix the tool can make (confirmed with --yes), then verify again")
    rc = cmd_run.cmd_run(argparse.Namespace(**common, action="apply"))
    eprint("\n== 3. the signed completion log")
    from .cmd_signed_log import cli_export

    out = base / "completion-log.json"
    key = ensure_demo_key(base)
    export_args = argparse.Namespace(
        state=run_args.state,
        steps=run_args.steps,
        inventory=run_args.inventory,
        run=None,
        sign_key=str(key),
        output=str(out),
        identity="demo@runbook",
        agent_path=None,
        snapshot_file=None,
    )
    from .cmd_export import load_snapshot

    export_rc = cli_export(export_args, load_snapshot)
    eprint(
        f"\nrunbook demo: done. What is still failing above is what no apply can fix (a dead node, a "
        f"wrong cable, ...): waive or note it with `runbook waive STEP --hosts H --reason ... "
        f"--state {run_args.state} --inventory {run_args.inventory}`."
    )
    eprint(f"runbook demo: the run's verdict exit code is {rc}; report: {out.with_suffix('.html')}")
    return rc if export_rc == 0 else export_rc  # the verdict, as `runbook run` would exit
