"""asyncssh builds its log messages before asking whether anyone wants them.

Every packet sent or received is described (`SSHPacketLogger._log_packet`
names its type and formats its size) and every channel logs its opening,
exit status and close (`SSHLogger.log` converts each argument to text) even
when its logger drops the message: in a run that is ~4% of the client's CPU
(bench/README.md, issue 18 goal 1). `skip_unwanted_messages()` puts the
logger's own question first: a message that would be emitted is built and
emitted exactly as before; one that would be dropped is not built.
"""

from __future__ import annotations

import functools
import logging

from asyncssh.logging import SSHLogger
from asyncssh.packet import SSHPacketLogger

_done = False


def skip_unwanted_messages() -> None:
    """Wrap the two asyncssh methods once per process (idempotent)."""
    global _done
    if _done:
        return
    _done = True
    # These are asyncssh's internals (pyproject allows any asyncssh >= 2.24): an
    # asyncssh without them is left as it is, never broken.
    build_and_log = getattr(SSHLogger, "log", None)
    describe_packet = getattr(SSHPacketLogger, "_log_packet", None)
    if build_and_log is None or describe_packet is None:
        return

    @functools.wraps(build_and_log)
    def log(self, level: int, msg: object, *args, **kwargs) -> None:
        if self.logger.isEnabledFor(level):
            build_and_log(self, level, msg, *args, **kwargs)

    @functools.wraps(describe_packet)
    def log_packet(self, *args, **kwargs) -> None:
        # packets are logged at DEBUG, and only from debug level 3 (SSHLogger.packet)
        logger = self.logger
        inner = getattr(logger, "logger", None)
        if getattr(logger, "_debug_level", 3) >= 3 and (inner is None or inner.isEnabledFor(logging.DEBUG)):
            describe_packet(self, *args, **kwargs)

    SSHLogger.log = log
    SSHPacketLogger._log_packet = log_packet
