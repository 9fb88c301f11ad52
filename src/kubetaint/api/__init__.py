"""The Kubernetes API surface kubetaint speaks: models, the resource table, quantities,
feature gates and validation (mirrors k8s.io/api and pkg/apis/core)."""
