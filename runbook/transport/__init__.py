"""SSH transport: one pooled asyncssh connection per host, bounded handshakes,
verified host keys, per-command timeouts, streamed output.

    policy = HostKeyPolicy([Path("~/.ssh/known_hosts").expanduser()])
    t = Transport(inventory.hosts, policy=policy)
    result = await t.run("gpu07", "ofed_info -s", timeout=30)

The names below are imported when first asked for (PEP 562): a module of this
package that needs only the standard library (predial.py) can be imported
without asyncssh, which a new run starts its TCP connects ahead of.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from runbook.transport.hostkeys import HostKeyPolicy
    from runbook.transport.result import CommandResult
    from runbook.transport.transport import Transport

__all__ = ["CommandResult", "HostKeyPolicy", "Transport"]

_WHERE = {
    "CommandResult": "runbook.transport.result",
    "HostKeyPolicy": "runbook.transport.hostkeys",
    "Transport": "runbook.transport.transport",
}


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value
