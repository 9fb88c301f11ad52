"""Name, label and annotation format checks with upstream's messages
(mirrors staging/src/k8s.io/apimachinery/pkg/util/validation/validation.go and
pkg/api/validation/generic.go's NameIs* helpers)."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from kubetaint.speed.memo import Memo

_QNAME_CHAR = "[A-Za-z0-9]"
_QNAME_EXT_CHAR = "[-A-Za-z0-9_.]"
QUALIFIED_NAME_FMT = f"({_QNAME_CHAR}{_QNAME_EXT_CHAR}*)?{_QNAME_CHAR}"
_QUALIFIED_NAME_ERR = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)
QUALIFIED_NAME_MAX_LENGTH = 63
LABEL_VALUE_FMT = f"({QUALIFIED_NAME_FMT})?"
_LABEL_VALUE_ERR = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
LABEL_VALUE_MAX_LENGTH = 63
DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_ERR = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character"
)
DNS1123_LABEL_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_FMT = f"{DNS1123_LABEL_FMT}(\\.{DNS1123_LABEL_FMT})*"
_DNS1123_SUBDOMAIN_ERR = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
DNS1123_SUBDOMAIN_MAX_LENGTH = 253

_QUALIFIED_NAME_RE = re.compile(QUALIFIED_NAME_FMT)
_LABEL_VALUE_RE = re.compile(LABEL_VALUE_FMT)
_DNS1123_LABEL_RE = re.compile(DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN_RE = re.compile(DNS1123_SUBDOMAIN_FMT)


def empty_error() -> str:
    """validation.EmptyError."""
    return "must be non-empty"


def max_len_error(length: int) -> str:
    """validation.MaxLenError."""
    return f"must be no more than {length} characters"


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """validation.RegexError, including upstream's `'a',  or 'b', ` spacing."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    text = msg + " (e.g. "
    for i, example in enumerate(examples):
        if i > 0:
            text += " or "
        text += f"'{example}', "
    return text + f"regex used for validation is '{fmt}')"


def _memo(check: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    """`check` remembered per string (a pure function of an immutable value), up to 65,536 values;
    each call returns a fresh list."""
    results: Memo[str, tuple[str, ...]] = Memo(f"api.validation.names.{check.__name__}", limit=1 << 16)

    @functools.wraps(check)
    def remembered(value: str) -> list[str]:
        found = results.get(value)
        if found is None:
            found = results.put(value, tuple(check(value)))
        return list(found)

    return remembered


def _full(pattern: re.Pattern[str], value: str) -> bool:
    # Go's regexp with ^...$ anchors; `$` there does not accept a trailing newline.
    return pattern.fullmatch(value) is not None


@_memo
def is_dns1123_subdomain(value: str) -> list[str]:
    """validation.IsDNS1123Subdomain."""
    errs = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _full(_DNS1123_SUBDOMAIN_RE, value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_ERR, DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


@_memo
def is_dns1123_label(value: str) -> list[str]:
    """validation.IsDNS1123Label (a valid subdomain that is not a label fails for its dots)."""
    errs = []
    if len(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _full(_DNS1123_LABEL_RE, value):
        if _full(_DNS1123_SUBDOMAIN_RE, value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_DNS1123_LABEL_ERR, DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


@_memo
def is_qualified_name(value: str) -> list[str]:
    """validation.IsQualifiedName: an optional DNS-subdomain prefix and '/', then a 63-char name."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part " + empty_error())
        else:
            errs.extend("prefix part " + msg for msg in is_dns1123_subdomain(prefix))
    else:
        return [
            "a qualified name "
            + regex_error(_QUALIFIED_NAME_ERR, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part " + empty_error())
    elif len(name) > QUALIFIED_NAME_MAX_LENGTH:
        errs.append("name part " + max_len_error(QUALIFIED_NAME_MAX_LENGTH))
    if not _full(_QUALIFIED_NAME_RE, name):
        errs.append(
            "name part "
            + regex_error(_QUALIFIED_NAME_ERR, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
        )
    return errs


def is_valid_label_value(value: str) -> list[str]:
    """validation.IsValidLabelValue. A valid value (many are an object's own, as a node's
    hostname label) is told by one match."""
    if len(value) <= LABEL_VALUE_MAX_LENGTH and _LABEL_VALUE_RE.fullmatch(value):
        return []  # what _label_value_errors finds: neither too long nor off the pattern
    return _label_value_errors(value)


@_memo
def _label_value_errors(value: str) -> list[str]:
    """validation.IsValidLabelValue's messages (remembered)."""
    errs = []
    if len(value) > LABEL_VALUE_MAX_LENGTH:
        errs.append(max_len_error(LABEL_VALUE_MAX_LENGTH))
    if not _full(_LABEL_VALUE_RE, value):
        errs.append(regex_error(_LABEL_VALUE_ERR, LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def _mask_trailing_dash(name: str) -> str:
    # Generated names get a random suffix, so a trailing dash is fine in a prefix.
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def name_is_dns_subdomain(name: str, prefix: bool = False) -> list[str]:
    """apimachinery NameIsDNSSubdomain. A valid name (most of them, each object's own: a
    remembered result would seldom be asked for again) is told by one match."""
    if not prefix and len(name) <= DNS1123_SUBDOMAIN_MAX_LENGTH and _DNS1123_SUBDOMAIN_RE.fullmatch(name):
        return []  # what is_dns1123_subdomain finds: neither too long nor off the pattern
    return is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool = False) -> list[str]:
    """apimachinery NameIsDNSLabel (also ValidateNamespaceName); a valid name by one match."""
    if not prefix and len(name) <= DNS1123_LABEL_MAX_LENGTH and _DNS1123_LABEL_RE.fullmatch(name):
        return []  # what is_dns1123_label finds: neither too long nor off the pattern
    return is_dns1123_label(_mask_trailing_dash(name) if prefix else name)


#: Strings found to be valid DNS subdomains / labels (names).
_VALID_SUBDOMAINS: Memo[str, bool] = Memo("api.validation.names.valid_subdomains", limit=1 << 16)
_VALID_LABELS: Memo[str, bool] = Memo("api.validation.names.valid_labels", limit=1 << 16)


def _remembering_valid(
    errors_of: Callable[[str], list[str]], valid: Memo[str, bool]
) -> Callable[[str], bool]:
    """`not errors_of(name)` (a pure function of the string), each valid name remembered in
    `valid`: for names asked about again and again, a node name in each of its pods' nodeName,
    a namespace in each of its objects. Invalid names are checked afresh."""

    def is_valid(name: str) -> bool:
        if valid.get(name):
            return True
        if errors_of(name):
            return False
        valid.put(name, True)
        return True

    is_valid.__doc__ = f"`not {errors_of.__name__}(name)`, a valid name remembered."
    return is_valid


is_valid_subdomain_name = _remembering_valid(name_is_dns_subdomain, _VALID_SUBDOMAINS)
is_valid_label_name = _remembering_valid(name_is_dns_label, _VALID_LABELS)


DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_ERR = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character"
)
DNS1035_LABEL_MAX_LENGTH = 63
_DNS1035_LABEL_RE = re.compile(DNS1035_LABEL_FMT)
CONFIG_MAP_KEY_FMT = "[-._a-zA-Z0-9]+"
_CONFIG_MAP_KEY_ERR = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"
_CONFIG_MAP_KEY_RE = re.compile(CONFIG_MAP_KEY_FMT)


def is_dns1035_label(value: str) -> list[str]:
    """validation.IsDNS1035Label."""
    errs = []
    if len(value) > DNS1035_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1035_LABEL_MAX_LENGTH))
    if not _full(_DNS1035_LABEL_RE, value):
        errs.append(regex_error(_DNS1035_LABEL_ERR, DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


def name_is_dns1035_label(name: str, prefix: bool = False) -> list[str]:
    """apimachinery NameIsDNS1035Label (ValidateServiceName)."""
    return is_dns1035_label(_mask_trailing_dash(name) if prefix else name)


def is_config_map_key(value: str) -> list[str]:
    """validation.IsConfigMapKey: a file name in a volume (also a Secret's data keys)."""
    errs = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _full(_CONFIG_MAP_KEY_RE, value):
        errs.append(regex_error(_CONFIG_MAP_KEY_ERR, CONFIG_MAP_KEY_FMT, "key.name", "KEY_NAME", "key-name"))
    if value == ".":
        errs.append("must not be '.'")
    elif value == "..":
        errs.append("must not be '..'")
    elif value.startswith(".."):
        errs.append("must not start with '..'")
    return errs
