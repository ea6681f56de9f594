"""Opening a session that connects while it opens (`runbook run`): the SSH
connections to the first step's hosts start before the store, the engine and the
output's modules are even imported, so a cold start reaches its first handshake
after asyncssh, the inventory and the steps and nothing else (bench/cold_phases.py);
their TCP connects may have started even before asyncssh (transport/predial.py).

Order for a new run: the transport (known_hosts, pins) and the connects ahead;
then, once the first host answered TCP (Transport.first_contact, bounded), the
session's own modules imported and the store created, in worker threads, while
the loop goes on with the handshakes. Both the store and the recorded definitions
are durable before anything is run or recorded, as Session.open has them."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..definition.model import Inventory, Runbook
    from ..transport import Transport
    from ..transport.predial import PreDialed
    from .session import Session

# How long store creation waits for the first TCP contact before it starts anyway
# (it only keeps a worker thread from competing with the first handshakes).
FIRST_CONTACT_WAIT = 1.0


def known_hosts_files(inventory: Inventory) -> list[Path]:
    files = []
    user = Path.home() / ".ssh" / "known_hosts"
    if user.exists():
        files.append(user)
    named: set[str] = set()  # as written: every host of an inventory names the same file
    for host in inventory.hosts.values():
        # a path or a list of paths; from the merged vars (host_vars would copy all of
        # them, per host, to add magic vars that never have this name)
        kh = host.vars.get("runbook_known_hosts")
        for f in kh if isinstance(kh, (list, tuple)) else [kh] if kh else []:
            if str(f) in named:
                continue
            named.add(str(f))
            path = Path(str(f)).expanduser()
            if path not in files:
                files.append(path)
    return files


class KeyRelay:
    """Host keys seen by connections started before the session exists: held, then
    handed to the session's recorder once it is there (in the order they came)."""

    def __init__(self) -> None:
        self.target: Callable[[str, str, str], None] | None = None
        self.held: list[tuple[str, str, str]] = []

    def __call__(self, host: str, fingerprint: str, how: str) -> None:
        if self.target is None:
            self.held.append((host, fingerprint, how))
        else:
            self.target(host, fingerprint, how)

    def attach(self, target: Callable[[str, str, str], None]) -> None:
        self.target = target
        for args in self.held:
            target(*args)
        self.held.clear()


def make_transport(
    inventory: Inventory,
    state_dir: Path,
    trust_new_hosts: bool,
    max_handshakes: int | None,
    on_host_key,
    predialed: PreDialed | None = None,
) -> Transport:
    from ..transport.library_probe import import_asyncssh

    import_asyncssh(state_dir)  # before the transport's modules import it
    from ..transport import HostKeyPolicy, Transport
    from ..transport.hostkeys import site_pins

    pin_file, older_pins = site_pins(state_dir)  # the site's, not the run's
    policy = HostKeyPolicy(
        known_hosts_files(inventory) + older_pins, trust_new=trust_new_hosts, pin_file=pin_file
    )
    kwargs: dict[str, Any] = {}
    if max_handshakes:
        kwargs["max_handshakes"] = max_handshakes
    return Transport(inventory.hosts, policy=policy, on_host_key=on_host_key, predialed=predialed, **kwargs)


def makes_new_run(state_dir: Path, run_id: str | None, new: bool) -> bool | None:
    """Whether opening makes a new run, when that is known without the store: True
    with --new-run or when there is no state directory yet, else None (ask the store)."""
    if new:
        return True
    if run_id is None and not state_dir.exists():
        return True
    return None


async def open_connecting(
    runbook: Runbook,
    inventory: Inventory,
    state_dir: str | Path,
    first: list[str],
    *,
    operator: str | None = None,
    run_id: str | None = None,
    new: bool = False,
    trust_new_hosts: bool = False,
    max_handshakes: int | None = None,
    meanwhile: Callable[[], Any] | None = None,
    predialed: PreDialed | None = None,
    **kw,
) -> Session:
    """Session.open for a client about to run, in its event loop. When this makes a
    new run, the SSH connections to `first` (the hosts its first step will certainly
    contact: session.first_hosts) start at once (see the module's docstring). An
    existing run is opened as Session.open does: its state says what is left to run.
    `meanwhile`: more work of the caller's (imports), done in a worker thread
    while another creates the store. `predialed`: TCP connects to `first` the
    caller started (transport/predial.py), taken over by the connections to them."""
    import asyncio  # here, not above: `runbook run` asks makes_new_run before asyncio is imported

    state_dir = Path(state_dir)
    making = makes_new_run(state_dir, run_id, new)
    if not making or not first:
        session = importlib.import_module("runbook.workspace.session")
        if making is None:
            making = not session.Store.list_runs(state_dir) and run_id is None
        if not making or not first:
            if predialed is not None:
                predialed.close()  # only a new run's first connects take them
            if meanwhile is not None:
                meanwhile()
            return session.Session.open(
                runbook,
                inventory,
                state_dir,
                operator=operator,
                run_id=run_id,
                new=new,
                trust_new_hosts=trust_new_hosts,
                max_handshakes=max_handshakes,
                **kw,
            )
    relay = KeyRelay()
    try:
        transport = make_transport(inventory, state_dir, trust_new_hosts, max_handshakes, relay, predialed)
    except BaseException:
        if predialed is not None:
            predialed.close()
        raise
    transport.connect_ahead(first)
    try:
        try:  # the first handshake goes out before a thread competes with it
            await asyncio.wait_for(transport.first_contact.wait(), FIRST_CONTACT_WAIT)
        except TimeoutError:
            pass
        # off the loop, in a worker thread: the handshakes go on meanwhile
        session = await asyncio.to_thread(importlib.import_module, "runbook.workspace.session")
        operator = session.operator_name(operator)
        # The store's creation mostly waits for the disk (fsync), the caller's imports are
        # CPU: in two threads at once. Only now, with the session's modules (the store's
        # among them) imported: imports in two threads at once could meet in a circular
        # import, and the two have no module left to import in common.
        extra = asyncio.ensure_future(asyncio.to_thread(meanwhile)) if meanwhile is not None else None
        try:
            store = await asyncio.to_thread(
                session.Session._create_store, runbook, inventory, state_dir, operator, run_id
            )
        except BaseException:
            if extra is not None:
                await asyncio.gather(extra, return_exceptions=True)
            raise
        try:
            if extra is not None:
                await extra
        except BaseException:
            store.close()
            raise
        try:
            return session.Session(
                runbook,
                inventory,
                store,
                store.state,
                operator=operator,
                trust_new_hosts=trust_new_hosts,
                max_handshakes=max_handshakes,
                transport=transport,
                key_relay=relay,
                **kw,
            )
        except BaseException:
            store.close()
            raise
    except BaseException:
        await transport.close()
        raise
