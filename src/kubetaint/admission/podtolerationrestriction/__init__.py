"""PodTolerationRestriction: namespace and cluster default tolerations and whitelists."""

from kubetaint.admission.podtolerationrestriction.admission import (
    NS_DEFAULT_TOLERATIONS,
    NS_WL_TOLERATIONS,
    PodTolerationRestriction,
)
from kubetaint.admission.podtolerationrestriction.config import ConfigError, Configuration, load_configuration

__all__ = [
    "NS_DEFAULT_TOLERATIONS",
    "NS_WL_TOLERATIONS",
    "ConfigError",
    "Configuration",
    "PodTolerationRestriction",
    "load_configuration",
]
