"""SSH transport: one pooled asyncssh connection per host, bounded handshakes,
verified host keys, per-command timeouts, streamed output.

    policy = HostKeyPolicy([Path("~/.ssh/known_hosts").expanduser()])
    t = Transport(inventory.hosts, policy=policy)
    result = await t.run("gpu07", "ofed_info -s", timeout=30)
"""

from runbook.transport.hostkeys import HostKeyPolicy
from runbook.transport.result import CommandResult
from runbook.transport.transport import Transport

__all__ = ["CommandResult", "HostKeyPolicy", "Transport"]
