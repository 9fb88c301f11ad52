"""Admission plugin tests."""
