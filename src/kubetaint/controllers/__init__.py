"""Controllers (taint eviction, node lifecycle, workloads), one folder each (mirrors pkg/controller)."""
