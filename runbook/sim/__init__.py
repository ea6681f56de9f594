"""The simulated lab: an asyncssh server playing a whole GPU/InfiniBand cluster
on loopback, with stateful fake hardware and fault scenarios (see lab.py)."""
