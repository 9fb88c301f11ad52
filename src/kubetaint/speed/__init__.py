"""Speed machinery shared by every layer: the reference-mode switch and the bounded memo.

Everything that exists only to make kubetaint faster consults `reference_mode()`; with
`KUBETAINT_REFERENCE=1` in the environment every shortcut is off (store batches of one, no memo
answers), and the suite still passes. See docs/performance.md.
"""
