"""The transport's defaults that are read before asyncssh is imported (predial.py),
so kept apart from the modules that import it."""

# Handshakes at once unless --max-handshakes says otherwise: the Transport's
# default, and how many TCP connects a new run starts early (predial.py).
DEFAULT_MAX_HANDSHAKES = 64
