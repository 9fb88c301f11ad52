"""Pure rules: toleration matching, taint strings, eviction decisions, condition→taint mapping.

Nothing here does I/O or reads a clock; every function is a decision on Kubernetes JSON.
"""
