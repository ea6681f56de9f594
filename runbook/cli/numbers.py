"""argparse types for every number on the command line: finite and in range,
or exit 2 with `argument --x: ...` (argparse's own usage error). Without them
`--expires-days inf` was accepted and broke every later export of the run
(docs/security.md)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def integer(low: int, high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is out of range ({low} to {high})")
        return value

    parse.__name__ = "integer"  # argparse names the type in its message
    return parse


def number(low: float, high: float, *, low_open: bool = False) -> Callable[[str], float]:
    """A finite float in [low, high] (or (low, high] with low_open)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        too_low = value <= low if low_open else value < low
        if not math.isfinite(value) or too_low or value > high:
            bound = f"more than {low:g}" if low_open else f"at least {low:g}"
            raise argparse.ArgumentTypeError(
                f"{text!r}: must be a finite number, {bound} and at most {high:g}"
            )
        return value

    parse.__name__ = "number"
    return parse


MAX_HANDSHAKES = integer(1, 1024)
VERIFY_RETRIES = integer(0, 10)  # each retry can cost a connect timeout: kept small
EXPIRES_DAYS = number(0, 3650, low_open=True)  # ten years: a waiver is not forever
SIM_NODES = integer(1, 4096)
PORT = integer(0, 65535)
SECONDS = number(0, 7 * 86400)
