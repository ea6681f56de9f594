"""Screens own the layout and the flow; widgets draw."""
