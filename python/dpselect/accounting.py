# SPDX-License-Identifier: Apache-2.0
"""Privacy accounting: what a sequence of releases spends, and how to split a budget.

Composition of k releases on one dataset, with their privacy parameters fixed in advance:

* ``basic_composition``: the sums of the epsilons and deltas (Dwork & Roth 2014, Thm 3.16);
* ``advanced_composition``: Dwork, Rothblum & Vadhan 2010 (Dwork & Roth 2014, Thm 3.20);
* ``optimal_composition_delta`` / ``optimal_composition_epsilon``: the exact privacy profile of k
  epsilon-DP releases (Kairouz, Oh & Viswanath 2015, Thm 3.3);
* zCDP: ``zcdp_of_pure`` (Bun & Steinke 2016, Prop 1.4), ``zcdp_of_exponential_mechanism``
  (Cesar & Rogers 2021), rhos add, then ``delta_from_zcdp`` / ``epsilon_from_zcdp_tight``
  (Canonne, Kamath & Steinke 2020, Cor 13) or ``epsilon_from_zcdp`` (Bun & Steinke 2016);
* ``compose_homogeneous``: the best of them, as a PrivacyAccountant reports it.

Every bound is an upper bound of the exact value (rounded up where the computation is long).
``split_evenly``, ``split_by_weights`` and ``per_release_epsilon`` split a budget;
``PrivacyAccountant.charge([PrivacyCharge, ...])`` charges several releases at once, all or nothing.

Example::

    import dpselect
    each = dpselect.per_release_epsilon(100, 1.0, 1e-6, dpselect.ReleaseKind.EXPONENTIAL_MECHANISM)
    dpselect.compose_homogeneous(100, each, dpselect.ReleaseKind.EXPONENTIAL_MECHANISM, 1e-6)  # <= 1
"""

from __future__ import annotations

from ._checks import check_module as _check_module
from ._dpselect import (
    PrivacyCharge,
    advanced_composition,
    basic_composition,
    compose_homogeneous,
    delta_from_zcdp,
    epsilon_from_zcdp,
    epsilon_from_zcdp_tight,
    optimal_composition_delta,
    optimal_composition_epsilon,
    per_release_epsilon,
    release_kind,
    split_by_weights,
    split_evenly,
    zcdp_of_exponential_mechanism,
    zcdp_of_pure,
)

__all__ = [
    "PrivacyCharge", "advanced_composition", "basic_composition", "compose_homogeneous",
    "delta_from_zcdp", "epsilon_from_zcdp", "epsilon_from_zcdp_tight", "optimal_composition_delta",
    "optimal_composition_epsilon", "per_release_epsilon", "release_kind", "split_by_weights", "split_evenly",
    "zcdp_of_exponential_mechanism", "zcdp_of_pure",
]


# Every public callable refuses a scalar parameter of the wrong type by name (dpselect._checks).
_check_module(globals(), __all__)
