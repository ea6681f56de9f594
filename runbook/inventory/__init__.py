"""Ansible YAML inventories: loading, the group graph, variables, host selection."""
