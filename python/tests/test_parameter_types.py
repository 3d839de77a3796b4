# SPDX-License-Identifier: Apache-2.0
"""Every public callable refuses a number or flag of the wrong type with a TypeError that names the
parameter and the value, before anything is charged or drawn: one table, one valid call per
callable, and each of its scalar parameters replaced in turn by the string '1' (and by a bool
where a number is expected). A second test checks that the table covers every public callable
that takes a number, so a new function or parameter cannot be left out."""

import inspect

import numpy as np
import pytest

import dpselect
import dpselect.audit
from support import ledger_context

CONTEXT, ACCOUNTANT = ledger_context(seed=5)
U = np.array([1.0, 2.0, 3.0])
GRID = dpselect.QuantileRange(0.0, 4.0).grid()
RANGE = dpselect.QuantileRange(0.0, 4.0)
SELECTION = dpselect.SelectionParams(1.0, 1.0)
SVT = dpselect.SparseVectorParams(1.0, 1.0, 2.0)
PRICING = dpselect.PricingParams(1.0)
PARTITIONS = dpselect.PartitionSelectionParams(epsilon=1.0, delta=1e-6)
QUANTILE = dpselect.QuantileParams(RANGE, 1.0)
QUANTILES = dpselect.QuantilesParams(RANGE, 1.0)
DATA = dpselect.QuantileData(np.array([1.0, 2.0]), RANGE)
ROUND = dpselect.partition_keep_rule(dpselect.PartitionSelectionParams(
    epsilon=1.0, delta=1e-6, max_partitions=2, strategy=dpselect.PartitionStrategy.WEIGHTED_GAUSSIAN)).rounds[0]
SELECT = dict(context=CONTEXT, utilities=U, epsilon=1.0, sensitivity=1.0)
PURE = dpselect.ReleaseKind.PURE

# name: (the callable, the keyword arguments of a valid call).
TABLE = {
    "PrivacyBound": (dpselect.PrivacyBound, dict(epsilon=1.0, delta=0.0)),
    "PrivacyAccountant.charge": (dpselect.PrivacyAccountant(dpselect.PrivacyBound(1.0)).charge,
                                 dict(kind=PURE, epsilon=0.5, delta=0.0)),
    "Context.fixed_seed": (dpselect.Context.fixed_seed, dict(seed=1)),
    "SelectionParams": (dpselect.SelectionParams, dict(epsilon=1.0, sensitivity=1.0)),
    "select": (dpselect.select, dict(SELECT)),
    "select_repeated": (dpselect.select_repeated, dict(SELECT, releases=2)),
    "select_rows": (dpselect.select_rows, dict(SELECT, utilities=np.ones((2, 3)))),
    "select_top_k": (dpselect.select_top_k, dict(SELECT, k=2)),
    "begin_release": (dpselect.begin_release, dict(context=CONTEXT, epsilon=1.0, sensitivity=1.0)),
    "begin_top_k_release": (dpselect.begin_top_k_release,
                            dict(context=CONTEXT, k=1, candidates=3, epsilon=1.0, sensitivity=1.0)),
    "PrivacyCharge": (dpselect.PrivacyCharge, dict(kind=PURE, epsilon=1.0, delta=0.0, count=1)),
    "advanced_composition": (dpselect.advanced_composition,
                             dict(k=2, per_release=dpselect.PrivacyBound(0.1), delta_slack=1e-6)),
    "compose_homogeneous": (dpselect.compose_homogeneous, dict(k=2, epsilon=0.1, kind=PURE, delta_budget=1e-6)),
    "delta_from_zcdp": (dpselect.delta_from_zcdp, dict(rho=0.1, epsilon=1.0)),
    "epsilon_from_zcdp": (dpselect.epsilon_from_zcdp, dict(rho=0.1, delta=1e-6)),
    "epsilon_from_zcdp_tight": (dpselect.epsilon_from_zcdp_tight, dict(rho=0.1, delta=1e-6)),
    "optimal_composition_delta": (dpselect.optimal_composition_delta, dict(k=2, epsilon=0.1, epsilon_total=0.3)),
    "optimal_composition_epsilon": (dpselect.optimal_composition_epsilon, dict(k=2, epsilon=0.1, delta_total=1e-6)),
    "per_release_epsilon": (dpselect.per_release_epsilon,
                            dict(k=2, target_epsilon=1.0, target_delta=1e-6, kind=PURE)),
    "split_by_weights": (dpselect.split_by_weights, dict(epsilon_total=1.0, weights=[1.0, 2.0])),
    "split_evenly": (dpselect.split_evenly, dict(epsilon_total=1.0, k=2)),
    "zcdp_of_exponential_mechanism": (dpselect.zcdp_of_exponential_mechanism, dict(epsilon=1.0)),
    "zcdp_of_pure": (dpselect.zcdp_of_pure, dict(epsilon=1.0)),
    "LinfAnswerParams": (dpselect.LinfAnswerParams, dict(epsilon=1.0, delta=1e-6)),
    "NoiseVectorParams": (dpselect.NoiseVectorParams, dict(epsilon=1.0)),
    "SecureNoiseParams": (dpselect.SecureNoiseParams, dict(epsilon=1.0, sensitivity=1.0)),
    "add_noise": (dpselect.add_noise, dict(context=CONTEXT, values=np.zeros(3), epsilon=1.0)),
    "add_secure_noise": (dpselect.add_secure_noise,
                         dict(context=CONTEXT, values=np.zeros(3), epsilon=1.0, sensitivity=1.0)),
    "analytic_gaussian_sigma": (dpselect.analytic_gaussian_sigma, dict(epsilon=1.0, delta=1e-6, l2_sensitivity=1.0)),
    "answer_counting_queries": (dpselect.answer_counting_queries,
                                dict(context=CONTEXT, answers=np.zeros(3), epsilon=1.0, delta=1e-6, p=1.0)),
    "discrete_gaussian_delta": (dpselect.discrete_gaussian_delta, dict(sigma=2.0, sensitivity=1, epsilon=1.0)),
    "gaussian_delta": (dpselect.gaussian_delta, dict(sigma=2.0, l2_sensitivity=1.0, epsilon=1.0)),
    "generalized_gaussian_abs_cdf": (dpselect.generalized_gaussian_abs_cdf, dict(t=1.0, sigma=1.0, p=2.0)),
    "generalized_gaussian_best_p": (dpselect.generalized_gaussian_best_p,
                                    dict(epsilon=1.0, delta=1e-6, k=3, p_grid=[2.0])),
    "generalized_gaussian_delta": (dpselect.generalized_gaussian_delta, dict(sigma=2.0, p=2.0, k=3, epsilon=1.0)),
    "generalized_gaussian_expected_linf": (dpselect.generalized_gaussian_expected_linf, dict(sigma=2.0, p=2.0, k=3)),
    "generalized_gaussian_recommended_p": (dpselect.generalized_gaussian_recommended_p,
                                           dict(k=3, composed_with_sparse_vector=False)),
    "generalized_gaussian_sigma": (dpselect.generalized_gaussian_sigma, dict(epsilon=1.0, delta=1e-6, p=2.0, k=3)),
    "noise_vector_scale": (dpselect.noise_vector_scale, dict(coordinates=3, epsilon=1.0)),
    "plan_linf_answers": (dpselect.plan_linf_answers, dict(queries=3, epsilon=1.0, delta=1e-6, p=1.0)),
    "secure_noise_plan": (dpselect.secure_noise_plan, dict(coordinates=3, epsilon=1.0, sensitivity=1.0)),
    "PartitionSelectionParams": (dpselect.PartitionSelectionParams, dict(epsilon=1.0, delta=1e-6)),
    "keep_probability": (dpselect.keep_probability, dict(params=PARTITIONS, users=1)),
    "select_partitions": (dpselect.select_partitions,
                          dict(context=CONTEXT, users=[1, 2], keys=[1, 1], epsilon=1.0, delta=1e-6)),
    "PriceGrid": (dpselect.PriceGrid, dict(min=1.0, max=2.0, step=0.5)),
    "PriceGrid.price": (dpselect.PriceGrid(1.0, 2.0, 0.5).price, dict(i=0)),
    "Bids.count_at_least": (dpselect.Bids([1.0, 2.0]).count_at_least, dict(price=1.0)),
    "Bids.revenue": (dpselect.Bids([1.0, 2.0]).revenue, dict(price=1.0)),
    "PriceRange": (dpselect.PriceRange, dict(min=1.0, max=2.0)),
    "PricingParams": (dpselect.PricingParams, dict(epsilon=1.0)),
    "public_grid_sampler": (dpselect.public_grid_sampler, dict(params=PRICING, grid_size=4)),
    "resolve_grid_sampler": (dpselect.resolve_grid_sampler, dict(params=PRICING, grid_size=4, bid_count=3)),
    "revenue_shortfall_bound": (dpselect.revenue_shortfall_bound,
                                dict(params=PRICING, largest_price=2.0, candidates=4, t=1.0)),
    "select_price": (dpselect.select_price, dict(context=CONTEXT, bids=[1.0, 2.0], prices=[1.0, 2.0], epsilon=1.0)),
    "QuantileGrid.point": (GRID.point, dict(i=0)),
    "QuantileGrid.points_at_or_below": (GRID.points_at_or_below, dict(value=1.0)),
    "QuantileGrid.slot": (GRID.slot, dict(value=1.0)),
    "QuantileParams": (dpselect.QuantileParams, dict(range=RANGE, epsilon=1.0)),
    "QuantileRange": (dpselect.QuantileRange, dict(lower=0.0, upper=4.0, resolution=1.0)),
    "QuantilesParams": (dpselect.QuantilesParams, dict(range=RANGE, epsilon=1.0)),
    "nonprivate_quantile_diagnostics": (dpselect.nonprivate_quantile_diagnostics, dict(data=DATA, q=0.5)),
    "nonprivate_rank_error": (dpselect.nonprivate_rank_error, dict(data=DATA, grid_index=0, q=0.5)),
    "quantile_rank_error_bound": (dpselect.quantile_rank_error_bound, dict(params=QUANTILE, q=0.5, beta=0.05)),
    "quantiles_rank_error_bound": (dpselect.quantiles_rank_error_bound, dict(params=QUANTILES, qs=[0.5], beta=0.05)),
    "select_quantile": (dpselect.select_quantile, dict(context=CONTEXT, data=U, q=0.5, range=(0.0, 4.0), epsilon=1.0)),
    "select_quantiles": (dpselect.select_quantiles,
                         dict(context=CONTEXT, data=U, qs=[0.5], range=(0.0, 4.0), epsilon=1.0)),
    "SparseVectorParams": (dpselect.SparseVectorParams, dict(epsilon=1.0, sensitivity=1.0, threshold=2.0)),
    "exponential_mechanism_alpha": (dpselect.exponential_mechanism_alpha,
                                    dict(params=SELECTION, candidates=3, optimal_candidates=1, beta=0.05)),
    "exponential_mechanism_beta": (dpselect.exponential_mechanism_beta,
                                   dict(params=SELECTION, candidates=3, optimal_candidates=1, alpha=1.0)),
    "sparse_vector_alpha": (dpselect.sparse_vector_alpha, dict(params=SVT, queries=3, beta=0.05)),
    "sparse_vector_batch": (dpselect.sparse_vector_batch,
                            dict(context=CONTEXT, values=U, epsilon=1.0, sensitivity=1.0, threshold=2.0)),
    "sparse_vector_beta": (dpselect.sparse_vector_beta, dict(params=SVT, queries=3, alpha=1.0)),
    "weighted_keep_probability": (dpselect.weighted_keep_probability, dict(round=ROUND, weight=1.0)),
    "audit.AuditOptions": (dpselect.audit.AuditOptions, dict(runs=10)),
    "audit.AuditTarget": (dpselect.audit.AuditTarget, dict(mechanism="m", neighbours="n", claimed_epsilon=1.0,
                                                           claimed_delta=0.0, run=lambda *args: None)),
    "audit.EventCounts": (dpselect.audit.EventCounts, dict(event=1, on_d=1, on_d_prime=1)),
    "audit.clopper_pearson": (dpselect.audit.clopper_pearson, dict(successes=1, trials=2, alpha=0.05)),
    "audit.privacy_loss_bounds": (dpselect.audit.privacy_loss_bounds,
                                  dict(events=[], runs=10, confidence=0.95, claimed_epsilon=1.0)),
    "audit.regularized_incomplete_beta": (dpselect.audit.regularized_incomplete_beta, dict(x=0.5, a=1.0, b=1.0)),
    "audit.run": (dpselect.audit.run, dict(target=None, runs=10)),
}


def scalar_parameters(function):
    """The parameters the package declares as numbers or flags (float, int, bool): from the
    annotations of a Python function, or from a compiled one's signature."""
    from dpselect import _checks
    if inspect.isclass(function):
        function = function.__init__
    if hasattr(function, "__nb_signature__"):
        return {name for plan, _ in _checks._plans_of_core(function) for name in plan.by_name}
    return set(getattr(function, "_scalar_parameters", ()))


def public_callables():
    """Every public callable of dpselect and dpselect.audit, and the public methods of its classes."""
    found = {}
    for module, prefix in ((dpselect, ""), (dpselect.audit, "audit.")):
        for name in module.__all__:
            value = getattr(module, name)
            if not callable(value):
                continue
            found[prefix + name] = value
            if inspect.isclass(value):
                for attribute in dir(value):
                    if not attribute.startswith("_"):
                        method = inspect.getattr_static(value, attribute)
                        method = getattr(method, "__func__", method)
                        if hasattr(method, "__nb_signature__") or hasattr(method, "_scalar_parameters"):
                            found[f"{prefix}{name}.{attribute}"] = method
    return found


def test_the_table_covers_every_public_number_parameter():
    missing = sorted(name for name, value in public_callables().items()
                     if scalar_parameters(value) and name not in TABLE)
    assert not missing, f"add a valid call of each to TABLE: {missing}"


def cases():
    for name, (function, arguments) in TABLE.items():
        declared = public_callables()[name]
        parameters = sorted(scalar_parameters(declared))
        assert parameters, f"{name} declares no number parameter: take it out of TABLE"
        for parameter in parameters:
            yield pytest.param(function, arguments, parameter, id=f"{name}-{parameter}")


@pytest.mark.parametrize("function,arguments,parameter", list(cases()))
def test_a_number_of_the_wrong_type_is_named_before_anything_is_charged(function, arguments, parameter):
    with pytest.raises(TypeError, match=rf"^{parameter} must be .*\(got '1', of type str\)"):
        function(**{**arguments, parameter: "1"})
    kind = "True or False" if "True or False" in _message(function, arguments, parameter) else None
    if kind is None:  # a number: a bool is refused too
        with pytest.raises(TypeError, match=rf"^{parameter} must be .*\(got True, of type bool\)"):
            function(**{**arguments, parameter: True})
    assert ACCOUNTANT.release_count == 0


def _message(function, arguments, parameter):
    try:
        function(**{**arguments, parameter: "1"})
    except TypeError as error:
        return str(error)
    return ""


def test_the_first_valid_release_after_every_refusal_draws_stream_zero():
    for name in ("select", "select_top_k", "select_rows", "sparse_vector_batch", "select_quantile", "add_noise"):
        function, arguments = TABLE[name]
        with pytest.raises(TypeError):
            function(**{**arguments, "epsilon": "1"})
    assert ACCOUNTANT.release_count == 0
    assert dpselect.select(CONTEXT, U, epsilon=0.1, sensitivity=1.0).report.stream == 0


def test_the_issue_example_names_epsilon_and_its_value():
    context, accountant = ledger_context()
    with pytest.raises(TypeError) as raised:
        dpselect.select(context, U, epsilon="1", sensitivity=1)
    assert "epsilon" in str(raised.value) and "'1'" in str(raised.value)
    assert accountant.release_count == 0


def test_per_row_epsilons_name_a_string_too():
    context, accountant = ledger_context()
    with pytest.raises(TypeError, match=r"^epsilon must be a real number \(got '1', of type str\)"):
        dpselect.select_rows(context, np.ones((2, 3)), epsilon="1", sensitivity=1.0)
    assert accountant.release_count == 0


@pytest.mark.parametrize("module_name", ["dpselect.dask", "dpselect.spark"])
def test_the_distributed_front_ends_name_a_number_of_the_wrong_type(module_name):
    module = pytest.importorskip(module_name)
    checked = 0
    for name in module.__all__:
        function = getattr(module, name)
        required = [p for p in inspect.signature(function).parameters.values()
                    if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD]
        scalars = scalar_parameters(function)
        for parameter in sorted(scalars):
            # Required numbers (k) get a valid one; nothing else is looked at before the check.
            arguments = {p.name: 1 if p.name in scalars else None for p in required if p.name != parameter}
            with pytest.raises(TypeError, match=rf"^{parameter} must be .*\(got '1', of type str\)"):
                function(**arguments, **{parameter: "1"})
            checked += 1
    assert checked >= 10


def test_numpy_scalars_and_integers_are_numbers():
    params = dpselect.SelectionParams(np.float32(0.5), np.int64(2), monotone=np.bool_(True))
    assert (params.epsilon, params.sensitivity, params.monotone) == (0.5, 2.0, True)
    assert dpselect.select_top_k(dpselect.Context.fixed_seed(1), U, np.uint8(2), epsilon=1, sensitivity=1).report.k == 2
    with pytest.raises(TypeError, match=r"^k must be an integer \(got 2.0, of type float\)"):
        dpselect.select_top_k(dpselect.Context.fixed_seed(1), U, 2.0, epsilon=1, sensitivity=1)
    with pytest.raises(ValueError, match=r"count must be an integer in \[0, 18446744073709551615\] \(got -1\)"):
        dpselect.PrivacyCharge(dpselect.ReleaseKind.PURE, 1.0, count=-1)
