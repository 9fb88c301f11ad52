"""`chain_keeps_stored_specs` remembers its last answer for the plugin list it was asked about
(every pod a registry stores asks): it must answer what working it out afresh answers, for the
same chain again, another chain, a chain whose plugin list was replaced or changed in place."""

from __future__ import annotations

import pytest

from kubetaint.admission import AdmissionChain, AdmissionSettings
from kubetaint.registry.podtrust import _known_pod_plugins, chain_keeps_stored_specs


def _chain(*enabled: str) -> AdmissionChain:
    return AdmissionChain(AdmissionSettings(enable_admission_plugins=list(enabled)) if enabled else None)


def _asked(chain: AdmissionChain) -> bool:
    answer = chain_keeps_stored_specs(chain)
    assert answer is _known_pod_plugins(chain.plugins)
    return answer


def test_the_same_chain_asked_again_gets_the_same_answer() -> None:
    chain = _chain()
    assert _asked(chain) and _asked(chain)


def test_chains_asked_in_turn_each_get_their_own_answer() -> None:
    trusted, untrusted = _chain(), _chain("PodTolerationRestriction")
    assert [_asked(c) for c in (trusted, untrusted, trusted, untrusted)] == [True, False, True, False]


@pytest.mark.parametrize("in_place", [False, True], ids=["list replaced", "list changed in place"])
def test_a_chain_whose_plugins_changed_is_asked_afresh(in_place: bool) -> None:
    chain, unknown = _chain(), _chain("ExtendedResourceToleration")
    assert _asked(chain)
    extra = [p for p in unknown.plugins if p.name == "ExtendedResourceToleration"]
    if in_place:
        chain.plugins.extend(extra)
    else:
        chain.plugins = [*chain.plugins, *extra]
    assert not _asked(chain)
    if in_place:
        del chain.plugins[-1]
    else:
        chain.plugins = [p for p in chain.plugins if p not in extra]
    assert _asked(chain)


def test_no_chain_keeps_stored_specs() -> None:
    _asked(_chain("PodTolerationRestriction"))
    assert chain_keeps_stored_specs(None)
