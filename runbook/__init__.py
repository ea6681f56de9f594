"""runbook: a terminal runbook for delivering GPU / InfiniBand clusters."""

__version__ = "0.1.0"
