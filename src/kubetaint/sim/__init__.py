"""The virtual-time simulator: scenarios, timelines, what-if runs and reports."""
