"""Hollow kubelets: simulated nodes that register, heartbeat, admit and run pods, and fail on cue."""

from kubetaint.kubelet.kubelet import HollowKubelet, KubeletSettings
from kubetaint.kubelet.node_status import NodeConfig
from kubetaint.kubelet.pool import FAULTS, HollowNodePool

__all__ = ["FAULTS", "HollowKubelet", "HollowNodePool", "KubeletSettings", "NodeConfig"]
