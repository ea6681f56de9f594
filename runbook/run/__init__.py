"""The run: its events and the state they fold into (the one rulebook), and the summary."""
