"""`runbook sim`: run a simulated lab until Ctrl-C, SIGTERM or --lifetime.

The CLI dispatcher calls add_arguments(parser) and run(args); until it exists,
`python -m runbook.sim` runs run_sim(sys.argv[1:]).
"""

from __future__ import annotations

import argparse
import ipaddress
import sys
from pathlib import Path

from ..errors import EXIT_OK, EXIT_USAGE, RunbookError
from .addresses import candidates, describe, in_use, loopback_aliases_work


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ..cli import numbers

    parser.add_argument(
        "--nodes", type=numbers.SIM_NODES, default=48, help="compute nodes gpu01..gpuNN (default 48)"
    )
    parser.add_argument(
        "--scenario",
        metavar="FILE",
        help="faults to inject (default: the built-in demo scenario; "
        "use runbook/sim/scenarios/empty.yaml for a compliant cluster)",
    )
    parser.add_argument(
        "--dir",
        metavar="DIR",
        default="sim-lab",
        help="where to write inventory.yaml, known_hosts, ssh_config, the client key, "
        "cached host keys and the saved state (default ./sim-lab)",
    )
    parser.add_argument(
        "--lifetime", type=numbers.SECONDS, metavar="SECONDS", help="stop by itself after this many seconds"
    )
    parser.add_argument(
        "--base-address",
        default=None,
        help="node N listens on this address + N (must be in 127.0.0.0/8; default 127.77.0.0, "
        "or a free range when that is taken)",
    )
    parser.add_argument(
        "--port",
        type=numbers.PORT,
        default=None,
        help="SSH port on every node address (0: any free port per node; default 2222, "
        "or another when that is taken)",
    )
    parser.add_argument(
        "--single-address",
        action="store_true",
        help="every node on 127.0.0.1 with its own port (automatic where 127.0.0.1 is the "
        "only loopback address, e.g. macOS)",
    )
    parser.add_argument(
        "--reboot-seconds", type=numbers.SECONDS, default=5.0, help="how long a rebooting node is down"
    )
    parser.add_argument(
        "--slow-seconds", type=numbers.SECONDS, default=8.0, help="delay of a node with the 'slow' fault"
    )
    parser.add_argument(
        "--time-scale",
        type=numbers.number(0, 1000),  # lab.py MAX_TIME_SCALE
        default=1.0,
        metavar="F",
        help="multiply the modelled durations of the long tests (dcgmi diag, gpu_burn, "
        "ib_write_bw, NCCL jobs) by F: 0 runs them at once, for benchmarks (default 1)",
    )
    parser.add_argument(
        "--design",
        metavar="INVENTORY",
        help="a seed-shaped inventory to take the design from (default: the bundled seed)",
    )
    parser.add_argument(
        "--sm-on",
        choices=("hosts", "switch"),
        default="hosts",
        help="where the subnet managers run: hosts (OpenSM on the SM nodes, default) or switch "
        "(leaf01 MASTER, leaf02 STANDBY; no SM node, the inventory's sm group has no hosts)",
    )
    parser.add_argument("--fresh", action="store_true", help="ignore a state saved in DIR by an earlier run")
    parser.add_argument(
        "--drop-commands",
        type=numbers.integer(0, 10**9),
        default=0,
        metavar="N",
        help="overload: the next N commands lose their connection mid-command (any node)",
    )
    parser.add_argument(
        "--drop-every",
        type=numbers.integer(1, 10**6),
        default=1,
        metavar="K",
        help="with --drop-commands: cut every K-th command instead of N in a row (default 1)",
    )
    parser.add_argument(
        "--stall-handshakes",
        type=numbers.integer(0, 10**9),
        default=0,
        metavar="N",
        help="overload: the next N SSH handshakes get no answer until the client times out",
    )


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


async def serve(args: argparse.Namespace) -> int:
    import asyncio
    import signal

    from .collector import settle_after_start
    from .scenario import DEFAULT

    scenario = args.scenario or DEFAULT
    lab = await _start_lab(args, scenario)
    settle_after_start()  # the lab's state out of the full collections' way (sim/collector.py)
    lab.load_faults.drop_commands = getattr(args, "drop_commands", 0) or 0
    lab.load_faults.stall_handshakes = getattr(args, "stall_handshakes", 0) or 0
    lab.load_faults.drop_every = getattr(args, "drop_every", 1) or 1
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        faulty = {n: s.faults for n, s in lab.cluster.nodes.items() if s.faults}
        faulty.update(lab.cluster.switch_faults)
        first = lab.node(lab.names()[0])
        where = describe([(n.address, n.port) for n in lab.nodes.values()])
        _say(
            f"runbook sim: {len(lab.nodes)} nodes on {where}"
            f" ({sum(len(f) for f in faulty.values())} faults from {Path(scenario).name})"
        )
        for name, flts in faulty.items():
            _say(f"  {name}: {', '.join(flts)}")
        # stdout is data: where the files are, one per line
        print(
            f"inventory   {lab.inventory}\nssh_config  {lab.ssh_config}\nknown_hosts {lab.known_hosts}\n"
            f"client_key  {lab.client_key}\nready       {lab.dir / 'ready'}",
            flush=True,
        )
        _say(f"try: ssh -F {lab.ssh_config} {first.name} ibstat     (Ctrl-C to stop)")
        try:
            await asyncio.wait_for(stop.wait(), args.lifetime)
        except TimeoutError:
            _say("runbook sim: lifetime over")
    finally:
        await lab.stop()
        lf = lab.load_faults
        if lf.dropped or lf.stalled:  # what overload was injected (bench/load_faults.py reads it)
            _say(f"runbook sim: load faults: dropped {lf.dropped} commands, stalled {lf.stalled} handshakes")
        _say("runbook sim: stopped")
    return EXIT_OK


async def _start_lab(args: argparse.Namespace, scenario):
    """Start on the default addresses, or on free ones when those are taken
    (sim/addresses.py); say where, when it is not where the user asked."""
    from .lab import Lab  # the simulator loads only when it runs, not for `runbook --help`

    single = getattr(args, "single_address", False)
    if not single and not loopback_aliases_work():
        single = True
        _say(
            "runbook sim: 127.0.0.1 is the only loopback address here: every node listens on it, "
            "each on its own port"
        )
    tried = []
    for base, port in candidates(args.base_address, args.port):
        try:
            lab = await Lab.start(
                args.dir,
                nodes=args.nodes,
                scenario=scenario,
                base_address=base,
                port=port,
                reboot_seconds=args.reboot_seconds,
                slow_seconds=args.slow_seconds,
                design=args.design,
                strict_scenario=_own_scenario(args.scenario),
                fresh=args.fresh,
                single_address=single,
                sm_on=getattr(args, "sm_on", "hosts"),
                time_scale=getattr(args, "time_scale", 1.0),
            )
        except OSError as exc:
            if not in_use(exc) or single:
                raise
            tried.append(f"{ipaddress.IPv4Address(base) + 1}.. port {port}")
            continue
        if tried:
            _say(
                f"runbook sim: {tried[0]} is in use (another lab?); using "
                f"{ipaddress.IPv4Address(base) + 1}.. port {port or 'any free'} instead"
            )
        return lab
    raise RunbookError(
        f"runbook sim: addresses in use: {', '.join(tried)}"
        + ("" if len(tried) > 1 else " (choose others with --base-address / --port)")
    )


def _own_scenario(path: str | None) -> bool:
    """A scenario the user wrote is checked strictly (a node it names must exist);
    the built-in demo scenario fits any size: faults on nodes beyond it are left out."""
    from .scenario import DEFAULT

    return bool(path) and Path(path).resolve() != DEFAULT.resolve()


def run(args: argparse.Namespace) -> int:
    # asyncio and logging load here, not at import: build_parser imports this module for
    # every `runbook` command, `--version` included
    import logging

    from .. import event_loop

    try:
        Path(args.dir).mkdir(parents=True, exist_ok=True)
        logging.basicConfig(filename=str(Path(args.dir) / "sim.log"), level=logging.WARNING)
        return event_loop.run(serve(args))
    except RunbookError as exc:
        _say(str(exc))
        return exc.exit_code
    except (ValueError, OSError) as exc:
        _say(f"runbook sim: {exc}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_OK


def run_sim(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="runbook sim", description="A simulated GPU/InfiniBand cluster on loopback."
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))
