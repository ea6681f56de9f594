"""asyncssh's log messages are built only when its logger would emit them
(transport/quiet_log.py), and emitted as before when it would."""

from __future__ import annotations

import logging

from asyncssh.logging import logger as asyncssh_logger

import runbook.transport.session  # noqa: F401  (applies the wrapper, as the transport does)


class _Unprintable:
    def __str__(self) -> str:
        raise AssertionError("a dropped message was built")


def test_a_dropped_message_is_not_built():
    chan = asyncssh_logger.get_child(context="chan=1")
    level = logging.getLogger("asyncssh").getEffectiveLevel()
    assert level > logging.DEBUG  # asyncssh's debug messages are dropped by default
    chan.debug1("Set write buffer limits: %s", [_Unprintable()])  # would raise if built


def test_a_wanted_message_is_emitted_as_before(caplog):
    chan = asyncssh_logger.get_child(context="chan=7")
    with caplog.at_level(logging.INFO, logger="asyncssh"):
        chan.info("Received exit status %d", 3)
        chan.info("Opening %s", [b"a", "b"])
    assert [r.getMessage() for r in caplog.records] == [
        "[chan=7] Received exit status 3",
        "[chan=7] Opening a,b",
    ]
