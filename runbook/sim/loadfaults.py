"""Faults of an overloaded network or client, not of a node: the next N
commands lose their connection mid-command, the next N handshakes stall
until the client gives up. Unlike the scenario's node faults (a `hang` or
`unreachable` node stays so), these hit whichever connections come next,
as overload does, and are used up: tests and `runbook sim --drop-commands N
[--drop-every K] --stall-handshakes N` use them to tell load from a dead host.
`drop_every` K > 1 spreads the drops: every K-th command is cut until N are,
as load spread over a whole run would (bench/load_faults.py)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class LoadFaults:
    drop_commands: int = 0  # commands still to cut off mid-command (connection aborted)
    stall_handshakes: int = 0  # handshakes still to stall (no answer to the auth request)
    stall_seconds: float = 3600.0  # how long a stalled handshake waits (the client times out first)
    drop_every: int = 1  # cut every K-th command (1: the next N in a row)
    dropped: int = 0  # done so far (for the test and the log)
    stalled: int = 0
    _seen: int = 0  # commands counted while drops remain

    def take_drop(self) -> bool:
        if self.drop_commands > 0:
            self._seen += 1
            if self._seen % max(1, self.drop_every):
                return False
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
