"""The leader-election defaults kube-scheduler and kube-controller-manager share
(k8s.io/component-base/config/v1alpha1 RecommendedDefaultLeaderElectionConfiguration), in
seconds: the defaults of their --leader-elect-lease-duration, --leader-elect-renew-deadline and
--leader-elect-retry-period flags."""

from __future__ import annotations

LEASE_DURATION = 15.0
RENEW_DEADLINE = 10.0
RETRY_PERIOD = 2.0
