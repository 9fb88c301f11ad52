"""Admission plugins that write and police tolerations (mirrors plugin/pkg/admission).

Build an `AdmissionChain` from `AdmissionSettings` and an `ObjectLookup`, then call
`chain.admit(Attributes(...))`; rejections raise `AdmissionError` carrying a Kubernetes Status.
"""

from kubetaint.admission.attributes import CONNECT, CREATE, DELETE, UPDATE, Attributes
from kubetaint.admission.chain import AdmissionChain
from kubetaint.admission.errors import AdmissionError
from kubetaint.admission.lookup import DictLookup, ObjectLookup
from kubetaint.admission.settings import AdmissionSettings, SettingsError

__all__ = [
    "CONNECT",
    "CREATE",
    "DELETE",
    "UPDATE",
    "AdmissionChain",
    "AdmissionError",
    "AdmissionSettings",
    "Attributes",
    "DictLookup",
    "ObjectLookup",
    "SettingsError",
]
