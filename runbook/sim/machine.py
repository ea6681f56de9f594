"""One simulated machine as its commands see it: state, file system, cluster,
and the hooks through which a command reaches outside (reboot, peers)."""

from __future__ import annotations

from collections.abc import Callable

from .cluster import Cluster
from .hardware import NodeState
from .vfs import NodeFs


class Machine:
    def __init__(
        self, cluster: Cluster, state: NodeState, peers: Callable[[str], Machine | None] | None = None
    ):
        self.cluster = cluster
        self.state = state
        self.fs = NodeFs(cluster, state)
        self._peers = peers
        self.reboot_requested = False
        self.on_change: Callable[[], None] | None = None
        self.rendezvous: dict = {}  # ib_write_bw servers waiting on this machine
        self.is_up: Callable[[], bool] = lambda: True  # the lab says whether the node answers
        self.detached: dict[
            int, object
        ] = {}  # pid -> asyncio task of a job started with setsid or systemd-run (commands/jobs.py)
        self.units: dict[str, object] = {}  # transient units of systemd-run, by name (commands/jobs.py)

    @property
    def name(self) -> str:
        return self.state.name

    def peer(self, name: str) -> Machine | None:
        if name in ("localhost", "127.0.0.1", self.name):
            return self
        return self._peers(name) if self._peers else None

    def reachable(self) -> bool:
        return self.is_up()

    def changed(self) -> None:
        if self.on_change:
            self.on_change()

    def request_reboot(self) -> None:
        """The session ends after this command; the lab then takes the node down."""
        self.reboot_requested = True
        self.changed()
