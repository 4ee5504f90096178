"""The `tablesight` command: one module per subcommand, wired in main.py."""
