"""The `kubetaint` command line."""
