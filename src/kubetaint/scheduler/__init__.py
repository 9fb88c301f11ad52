"""The scheduler: upstream framework, default plugins, queue and preemption (mirrors pkg/scheduler)."""
