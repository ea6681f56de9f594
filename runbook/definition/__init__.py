"""The runbook definition: steps and their model, loading, templates, lint, plan."""
