"""PodTolerationRestriction: namespace and cluster default tolerations and whitelists."""

from kubetaint.admission.podtolerationrestriction.admission import PodTolerationRestriction
from kubetaint.admission.podtolerationrestriction.config import ConfigError, Configuration, load_configuration

__all__ = ["ConfigError", "Configuration", "PodTolerationRestriction", "load_configuration"]
