"""Tests of kubetaint.speed: the reference-mode switch and the bounded memo."""
