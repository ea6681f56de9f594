"""Start and stop a simulated lab from Python:

lab = await Lab.start(tmp_path, nodes=8, scenario=path_or_None, port=0, reboot_seconds=0.2)
lab.node("gpu07").state            # the fake hardware, for assertions
await lab.node("gpu07").run("ibstat")   # (stdout, stderr, status) without SSH
lab.ssh_config, lab.inventory, lab.known_hosts, lab.client_key
await lab.stop()
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import logging
import time
from pathlib import Path

import asyncssh

from . import keys, naming, persist, writer
from . import scenario as scenarios
from .cluster import Cluster
from .design import Design, load_design, sm_on_switches
from .loadfaults import LoadFaults
from .machine import Machine
from .server import CIPHERS, SimNode

log = logging.getLogger("runbook.sim")
MAX_TIME_SCALE = 1000.0  # `runbook sim --time-scale`: 0 (no modelled waits) to 1000


class Lab:
    def __init__(self, directory: Path, cluster: Cluster, reboot_seconds: float, slow_seconds: float):
        self.dir = directory
        self.cluster = cluster
        self.reboot_seconds = reboot_seconds
        self.slow_seconds = slow_seconds
        self.nodes: dict[str, SimNode] = {}
        self.ssh_options: asyncssh.SSHServerConnectionOptions | None = None
        self.inventory = directory / "inventory.yaml"
        self.known_hosts = directory / "known_hosts"
        self.ssh_config = directory / "ssh_config"
        self.client_key = directory / "id_ed25519"
        self.state_file = directory / "state.json"
        self._state_key: dict | None = None
        self._save_task: asyncio.Task | None = None
        self._save_seconds = 0.0  # CPU of the last debounced save (save_delay)
        self._texts = persist.NodeTexts()  # each node's JSON, kept between saves
        self._full_save_at: float | None = None  # time.monotonic() of the last save of every node
        self.save_state = True
        self.load_faults = LoadFaults()  # overload, not node faults (loadfaults.py)

    # ---- lifecycle ------------------------------------------------------------
    @classmethod
    async def start(
        cls,
        directory: str | Path,
        nodes: int = 48,
        scenario: str | Path | None = None,
        base_address: str = "127.77.0.0",
        port: int = 0,
        reboot_seconds: float = 5.0,
        slow_seconds: float = 8.0,
        design: Design | str | Path | None = None,
        strict_scenario: bool = True,
        fresh: bool = False,
        save_state: bool = True,
        single_address: bool = False,
        sm_on: str = "hosts",
        time_scale: float = 1.0,
    ) -> Lab:
        """Build the cluster, inject the scenario, start one SSH listener per node,
        write inventory/known_hosts/ssh_config/key, then DIR/ready. With
        `single_address` every node listens on 127.0.0.1 on its own port (macOS).
        `sm_on`: "hosts" (the design's SM nodes run OpenSM) or "switch" (the
        subnet managers run on managed switches, no SM node: design.sm_on_switches).
        `time_scale` multiplies the modelled durations of the long tests (dcgmi diag,
        gpu_burn, the bandwidth tests, NCCL jobs: commands/base.py modelled_wait);
        0 runs them at once, e.g. for a benchmark of the whole runbook."""
        if nodes < 1:
            raise ValueError("--nodes must be at least 1")
        if not 0 <= time_scale <= MAX_TIME_SCALE:  # NaN too
            raise ValueError(f"--time-scale must be from 0 to {MAX_TIME_SCALE:g}, not {time_scale!r}")
        directory = Path(directory).resolve()
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "ready").unlink(missing_ok=True)
        design = design if isinstance(design, Design) else load_design(design)
        if sm_on == "switch":
            design = sm_on_switches(design)
        elif sm_on != "hosts":
            raise ValueError(f"--sm-on must be hosts or switch, not {sm_on!r}")
        names = naming.compute_names(nodes) + list(design.sm_hosts)
        if single_address:
            addresses, port = ["127.0.0.1"] * len(names), 0  # told apart by their ports
        else:
            addresses = naming.addresses(base_address, len(names))
        key = {
            "nodes": nodes,
            "design": _digest(Path(design.source)),
            "scenario": _digest(Path(scenario)) if scenario else "",
            **({"sm_on": sm_on} if sm_on != "hosts" else {}),  # a saved hosts lab keeps its key
        }
        saved = None if fresh else persist.load(directory / "state.json", key)
        if saved is not None:
            cluster = Cluster(design, saved)
            if scenario:  # the switch faults live in the fabric, not in the saved nodes
                scenarios.apply(cluster, scenario, strict=strict_scenario, switches_only=True)
        else:
            cluster = Cluster.build(design, nodes)
            if scenario:
                scenarios.apply(cluster, scenario, strict=strict_scenario)
        cluster.time_scale = float(time_scale)
        lab = cls(directory, cluster, reboot_seconds, slow_seconds)
        lab._state_key = key
        lab.save_state = save_state
        await lab._listen(names, addresses, port)
        lab._write_files(names)
        if save_state:
            lab.save()
        return lab

    async def _listen(self, names: list[str], addresses: list[str], port: int) -> None:
        host_keys = await asyncio.to_thread(keys.host_keys, self.dir, names)
        key_path, client = keys.client_key(self.dir)
        self.ssh_options = asyncssh.SSHServerConnectionOptions(
            server_host_keys=[host_keys[names[0]]],
            authorized_client_keys=asyncssh.import_authorized_keys(client.export_public_key().decode()),
            encryption_algs=CIPHERS,
            allow_scp=False,
            agent_forwarding=False,
            x11_forwarding=False,
            login_timeout=30,
            # asyncssh's line editor only where a terminal is asked for (sim/exec_session.py)
            line_editor=False,
            keepalive_interval=0,
            # no GSS (Kerberos) on a simulated node; asyncssh's default would look up
            # this machine's FQDN (socket.getfqdn) for every connection it accepts
            gss_host=None,
        )
        machines: dict[str, Machine] = {}
        for name in names:
            machine = Machine(self.cluster, self.cluster.nodes[name], peers=machines.get)
            machine.on_change = functools.partial(self.mark_dirty, name)
            machines[name] = machine
        try:
            for name, addr in zip(names, addresses):
                state = self.cluster.nodes[name]
                presented = host_keys[name]
                if "host_key_changed" in state.faults:
                    presented = keys.changed_key(self.dir, name)
                node = SimNode(self, machines[name], addr, port, host_keys[name], presented)
                self.nodes[name] = node
                await node.start()
        except BaseException:
            await self.stop()
            raise

    def _write_files(self, names: list[str]) -> None:
        endpoints = {n: (self.nodes[n].address, self.nodes[n].port) for n in names}
        kinds = {n: self.cluster.nodes[n].kind for n in names}
        public = {n: self.nodes[n].host_key.export_public_key().decode().strip() for n in names}
        writer.known_hosts(self.known_hosts, endpoints, public)
        writer.ssh_config(self.ssh_config, endpoints, self.client_key, self.known_hosts)
        writer.inventory(
            self.inventory,
            self.cluster.design,
            endpoints,
            kinds,
            self.client_key,
            self.known_hosts,
            self.cluster.design_partitions(),
            self.cluster.design_port_guids(),
            self._sm_master_guid(),
        )
        first = self.nodes[names[0]]
        writer.ready(
            self.dir,
            {
                "nodes": len([k for k in kinds.values() if k == "compute"]),
                "names": len(names),
                "inventory": str(self.inventory),
                "ssh_config": str(self.ssh_config),
                "known_hosts": str(self.known_hosts),
                "client_key": str(self.client_key),
                "first": {"name": first.name, "address": first.address, "port": first.port},
            },
        )

    def _sm_master_guid(self) -> str | None:
        """The designed master switch's GUID when the SMs run on switches: the
        design names the master by its port GUID (sm_master_guid), since no SM
        node's inventory entry can say which SM is the master."""
        fab = self.cluster.fabric
        master = str(self.cluster.design.var("sm_master", ""))
        if master in fab.switch_sms:
            return f"0x{fab.switches[master].guid:016x}"
        return None

    async def stop(self) -> None:
        (self.dir / "ready").unlink(missing_ok=True)
        await asyncio.gather(*(n.stop() for n in self.nodes.values()), return_exceptions=True)
        if self._save_task and not self._save_task.done():
            self._save_task.cancel()
        if self.save_state and self._state_key is not None:
            self.save(full=True)

    # ---- access ---------------------------------------------------------------------
    def node(self, name: str) -> SimNode:
        return self.nodes[name]

    def names(self, kind: str | None = None) -> list[str]:
        return [n for n, s in self.cluster.nodes.items() if kind is None or s.kind == kind]

    # ---- persistence --------------------------------------------------------------
    def save(self, full: bool = False) -> None:
        """Write the lab's state: the nodes marked changed encoded again, or every node
        when `full` or when the last full save is FULL_SAVE_SECONDS old (a change made
        without Machine.changed() is saved by then, as it was by the next save before)."""
        now = time.monotonic()
        if full or self._full_save_at is None or now - self._full_save_at >= FULL_SAVE_SECONDS:
            self._texts.mark(None)
            self._full_save_at = now
        try:
            self._texts.save(self.state_file, self._state_key or {}, self.cluster.nodes)
        except OSError as exc:  # a full disk must not take the lab down
            log.warning("could not save %s: %s", self.state_file, exc)

    def mark_dirty(self, name: str | None = None) -> None:
        """Save soon (debounced): a restarted sim continues from the last state.
        `name`: the node that changed (None: any may have)."""
        self._texts.mark(name)
        if not self.save_state or (self._save_task and not self._save_task.done()):
            return
        try:
            self._save_task = asyncio.get_running_loop().create_task(self._save_later())
        except RuntimeError:
            self.save()

    async def _save_later(self) -> None:
        await asyncio.sleep(save_delay(self._save_seconds))
        started = time.process_time()
        self.save()  # on the loop: the state must not change while it is serialised
        self._save_seconds = time.process_time() - started


SAVE_DELAY = 1.0  # s after the first change; a sim killed meanwhile loses at most that
# Of the sim's CPU at most, spent in saves. At 1,000 nodes a save of the whole lab
# is ~0.14 s (persist.py), so a busy lab saves every ~2.7 s: as often as it did
# at a tenth with the standard library's encoder, for half the CPU (the sim and
# the client share the machine's cores in every benchmark).
SAVE_SHARE = 0.05
FULL_SAVE_SECONDS = 30.0  # every node encoded again at least this often (Lab.save)


def save_delay(last_save_seconds: float) -> float:
    """How long a change waits before the lab is saved: a second, or longer when the
    last save took long (the whole lab's JSON was 0.3 s of CPU at 1,000 nodes, where
    saves every second were 9% of the sim's CPU under the whole runbook)."""
    return max(SAVE_DELAY, last_save_seconds * (1 - SAVE_SHARE) / SAVE_SHARE)


def _digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    except OSError:
        return str(path)
