"""A working session on one run: the project (runbook + inventory) and the session wiring store, transport and engine."""
