"""Design comparators, one module per subject (see runbook.criteria.design)."""
