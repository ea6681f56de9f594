"""A transport double for engine unit tests: each host is a small dict of
settings; commands are matched by prefix. The real SSH paths are tested
against the simulator and a real sshd elsewhere; this isolates the engine's
decisions (gating, apply-only-on-failures, before, reboot, rollback)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from runbook.definition.loader import load_runbook
from runbook.inventory.load import load_inventory
from runbook.transport.result import CommandResult


def load_world(directory, steps: str, inventory: str):
    """(runbook, inventory) written to `directory` from YAML texts: one steps
    file and one inventory, loaded as the CLI loads them."""
    (directory / "steps").mkdir(parents=True)
    (directory / "steps" / "10-p.yaml").write_text(steps)
    (directory / "inv.yaml").write_text(inventory)
    return load_runbook(directory / "steps"), load_inventory(directory / "inv.yaml")


@dataclass
class FakeHost:
    link: str = "IB(1)"
    next_link: str | None = None
    version: str = "23.10"
    reachable: bool = True
    delay: float = 0.0
    slow: dict[str, float] = field(default_factory=dict)  # command prefix -> extra delay
    reboots: int = 0
    log: list[str] = field(default_factory=list)
    digest: str = "a" * 64  # what `sha256sum` prints for /etc/x


class FakeTransport:
    def __init__(self, hosts: dict[str, FakeHost]):
        self.hosts = hosts

    async def run(self, host, command, *, timeout, on_line=None, retries=0):
        h = self.hosts[host]
        started = time.time()
        if not h.reachable:
            return CommandResult(
                host=host,
                command=command,
                exit_status=None,
                stdout="",
                stderr="",
                started=started,
                ended=time.time(),
                unknown_reason="unreachable: connection refused",
                started_remote=False,
                attempts=1,
            )
        delay = h.delay + sum(d for prefix, d in h.slow.items() if command.startswith(prefix))
        if delay:
            await asyncio.sleep(delay)
        h.log.append(command)
        out, code = "", 0
        if command.startswith("query-link"):
            out = f"LINK_TYPE_P1 {h.link}\n"
        elif command.startswith("set-link "):
            h.next_link = command.split()[1].strip("'")
        elif command.startswith("version"):
            out = h.version + "\n"
        elif command.startswith("sha256sum"):
            out = f"{h.digest}  /etc/x\n"
        elif command.startswith("fail"):
            code = 1
        if on_line:
            for line in out.splitlines():
                on_line("stdout", line)
        return CommandResult(
            host=host,
            command=command,
            exit_status=code,
            stdout=out,
            stderr="",
            started=started,
            ended=time.time(),
            unknown_reason=None,
            started_remote=True,
            attempts=1,
        )

    async def reboot(self, host, command="reboot"):
        h = self.hosts[host]
        h.reboots += 1
        if h.next_link:
            h.link, h.next_link = h.next_link, None

    async def wait_back(self, host, *, timeout, interval=1.0):
        return self.hosts[host].reachable

    async def close(self):
        pass
