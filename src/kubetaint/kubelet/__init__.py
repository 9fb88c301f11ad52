"""Hollow kubelets: leases, node status, pod admission and node-pressure eviction (mirrors pkg/kubelet)."""
