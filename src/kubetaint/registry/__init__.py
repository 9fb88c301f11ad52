"""The write path every host shares: generateName, admission (mutating), validation, admission
(validating), then the store (mirrors k8s.io/apiserver/pkg/registry/generic/registry/store.go).

A `Registry` implements the Store protocol, so components write through it unchanged.
"""

from kubetaint.registry.registry import Registry, StoreLookup, api_validator

__all__ = ["Registry", "StoreLookup", "api_validator"]
