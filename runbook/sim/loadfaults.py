"""Faults of an overloaded network or client, not of a node: the next N
commands lose their connection mid-command, the next N handshakes stall
until the client gives up. Unlike the scenario's node faults (a `hang` or
`unreachable` node stays so), these hit whichever connections come next,
as overload does, and are used up: tests and `runbook sim --drop-commands N
--stall-handshakes N` use them to tell load from a dead host."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class LoadFaults:
    drop_commands: int = 0  # commands still to cut off mid-command (connection aborted)
    stall_handshakes: int = 0  # handshakes still to stall (no answer to the auth request)
    stall_seconds: float = 3600.0  # how long a stalled handshake waits (the client times out first)
    dropped: int = 0  # done so far (for the test and the log)
    stalled: int = 0

    def take_drop(self) -> bool:
        if self.drop_commands > 0:
            self.drop_commands -= 1
            self.dropped += 1
            return True
        return False

    def take_stall(self) -> bool:
        if self.stall_handshakes > 0:
            self.stall_handshakes -= 1
            self.stalled += 1
            return True
        return False
