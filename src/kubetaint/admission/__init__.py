"""Admission plugins that write and police tolerations (mirrors plugin/pkg/admission)."""
