"""Server stacks: manifests (stack.toml), builds and the launcher; each stack's code
in its folder (stacks/<language>/<name>/). In-process stacks are workload adapters,
catalogued in workloads/catalog.py."""
