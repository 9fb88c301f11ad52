"""The root CA certificate publisher: a `kube-root-ca.crt` ConfigMap in every namespace."""

from kubetaint.controllers.rootcacertpublisher.publisher import (
    DESCRIPTION,
    DESCRIPTION_ANNOTATION,
    ROOT_CA_CERT_CONFIG_MAP_NAME,
    Publisher,
)

__all__ = ["DESCRIPTION", "DESCRIPTION_ANNOTATION", "ROOT_CA_CERT_CONFIG_MAP_NAME", "Publisher"]
