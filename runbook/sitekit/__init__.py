"""What `runbook init DIR` writes into a new site directory (docs/site-workflow.md)."""
