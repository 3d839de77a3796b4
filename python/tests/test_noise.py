# SPDX-License-Identifier: Apache-2.0
"""Noise vectors, secure noise, the generalized Gaussian calibration and the l-inf answerer.

The dpselect command has no noise-vector subcommand, so the C++ = Python comparison here is
structural: a fixed seed gives the same bits twice and other bits for another seed, each release
draws the context's next stream, the answerer without repairs is add_noise with the generalized
Gaussian, and the reported scales equal the documented calibrations.

Statistical checks (fixed seeds, so each run gives the same verdict; the rates say how unlucky a
seed would have to be):
  Kolmogorov-Smirnov at alpha = 1e-6 (asymptotic Kolmogorov critical value), 4 tests: < 4e-6;
  binned counts against exact discrete Laplace / discrete Gaussian cell probabilities, each cell
    at 5 binomial standard deviations (two-sided normal tail 5.7e-7 per cell), 14 + 10 cells:
    < 1.4e-5.
Total false-failure rate < 2e-5.
"""

import copy
import math

import numpy as np
import pytest

import dpselect
from support import assert_the_gil_is_released

NAN = float("nan")
INF = float("inf")
KS_ALPHA = 1e-6
Z_LIMIT = 5.0
GAUSSIAN = dpselect.NoiseDistribution.GAUSSIAN
GENERALIZED = dpselect.NoiseDistribution.GENERALIZED_GAUSSIAN


def ledger_context(seed=5, budget=dpselect.PrivacyBound(100.0, 0.5)):
    context = dpselect.Context.fixed_seed(seed)
    accountant = dpselect.PrivacyAccountant(budget)
    context.charge_to(accountant)
    return context, accountant


def expect_nothing_charged_or_drawn(context, accountant):
    assert accountant.release_count == 0
    assert dpselect.add_noise(context, np.zeros(1), epsilon=0.01).stream == 0


def expect_invalid(call, message):
    with pytest.raises(dpselect.InvalidArgument) as error:
        call()
    assert str(error.value) == message


def expect_invalid_parts(call, *parts):
    with pytest.raises(dpselect.InvalidArgument) as error:
        call()
    for part in parts:
        assert part in str(error.value), f"{part!r} not in {str(error.value)!r}"


def ks_critical(n):
    # Asymptotic Kolmogorov distribution: P[sqrt(n) D > t] ~ 2 exp(-2 t^2).
    return math.sqrt(-math.log(KS_ALPHA / 2) / 2) / math.sqrt(n)


def ks_statistic(samples, cdf):
    x = np.sort(samples)
    f = cdf(x)
    n = len(x)
    return max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n))


def laplace_cdf(scale):
    def cdf(x):
        return np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0) / scale), 1 - 0.5 * np.exp(-np.maximum(x, 0) / scale))
    return cdf


def normal_cdf(sd):
    erfc = np.frompyfunc(math.erfc, 1, 1)
    return lambda x: 0.5 * erfc(-x / (sd * math.sqrt(2))).astype(np.float64)


def expect_counts(counts, probabilities, draws):
    assert math.isclose(math.fsum(probabilities), 1.0, rel_tol=1e-12)
    for cell, (count, p) in enumerate(zip(counts, probabilities)):
        sd = math.sqrt(draws * p * (1 - p))
        z = (count - draws * p) / sd
        assert abs(z) < Z_LIMIT, f"cell {cell}: {count} against {draws * p:.1f} expected (z = {z:.2f})"


def balle_wang_delta(sigma, sensitivity, epsilon):
    # Balle & Wang 2018, Thm 8: the exact delta of N(0, sigma^2) for L2 sensitivity Delta.
    def phi(x):
        return 0.5 * math.erfc(-x / math.sqrt(2))
    a, b = sensitivity / (2 * sigma), epsilon * sigma / sensitivity
    return phi(a - b) - math.exp(epsilon) * phi(-a - b)


def counts(k, seed):
    return np.random.default_rng(seed).integers(0, 500, size=k).astype(np.float64)


# ---- noise vectors ------------------------------------------------------------------------------

def test_noise_vectors_follow_their_exact_distributions_at_the_documented_scales():
    n = 100_000
    laplace = np.zeros(n)
    report = dpselect.add_noise(dpselect.Context.fixed_seed(11), laplace, epsilon=0.5, sensitivity=2.0)
    assert report.scale == 2.0 / 0.5  # Dwork & Roth 2014, Thm 3.6
    assert (report.distribution, report.p, report.coordinates, report.stream) == (
        dpselect.NoiseDistribution.LAPLACE, 1.0, n, 0)
    assert report.executed_on == dpselect.ExecutedOn.CPU
    assert ks_statistic(laplace, laplace_cdf(report.scale)) < ks_critical(n)

    gaussian = np.zeros(n)
    report = dpselect.add_noise(dpselect.Context.fixed_seed(12), gaussian, epsilon=0.8, delta=1e-6, sensitivity=3.0,
                                distribution=dpselect.NoiseDistribution.GAUSSIAN)
    assert report.scale == dpselect.analytic_gaussian_sigma(0.8, 1e-6, 3.0)
    assert report.p == 2.0
    assert ks_statistic(gaussian, normal_cdf(report.scale)) < ks_critical(n)

    # GG(1, sigma) is Laplace(sigma) and GG(2, sigma) is N(0, sigma^2 / 2) (Ganesh & Zhao 2021).
    n = 40_000
    for p, cdf in ((1.0, laplace_cdf), (2.0, lambda s: normal_cdf(s / math.sqrt(2)))):
        values = np.zeros(n)
        params = dpselect.NoiseVectorParams(1.0, dpselect.NoiseDistribution.GENERALIZED_GAUSSIAN, delta=1e-6,
                                            sensitivity=4.0, p=p)
        report = dpselect.add_noise(dpselect.Context.fixed_seed(13), values, params)
        assert report.scale == 4.0 * dpselect.generalized_gaussian_sigma(1.0, 1e-6, p, n)
        assert report.scale == dpselect.noise_vector_scale(n, params)
        assert report.p == p
        assert ks_statistic(values, cdf(report.scale)) < ks_critical(n)


@pytest.mark.parametrize("generator", [dpselect.Generator.CHACHA20, dpselect.Generator.PHILOX])
def test_a_fixed_seed_gives_the_same_bits_and_each_release_a_fresh_stream(generator):
    base = np.arange(1000, dtype=np.float64) - 17.25
    releases = [
        lambda c, v: dpselect.add_noise(c, v, epsilon=1.0),
        lambda c, v: dpselect.add_noise(c, v, epsilon=1.0, delta=1e-5, distribution=GAUSSIAN),
        lambda c, v: dpselect.add_noise(c, v, epsilon=1.0, delta=1e-5, p=1.5, distribution=GENERALIZED),
        lambda c, v: dpselect.add_secure_noise(c, v, epsilon=1.0, sensitivity=1.0),
        lambda c, v: dpselect.add_secure_noise(c, v, epsilon=1.0, delta=1e-5, sensitivity=1.0,
                                               distribution=dpselect.SecureDistribution.GAUSSIAN),
    ]
    for release in releases:
        first, again, other = base.copy(), base.copy(), base.copy()
        context = dpselect.Context.fixed_seed(42, generator)
        report = release(context, first)
        assert (report.stream, report.generator, report.coordinates) == (0, generator, base.size)
        assert release(dpselect.Context.fixed_seed(42, generator), again).stream == 0
        assert first.tobytes() == again.tobytes()
        assert release(dpselect.Context.fixed_seed(43, generator), other).stream == 0
        assert np.all(other != first)
        # The same context's next release draws the next stream: other noise on the same input.
        second = base.copy()
        assert release(context, second).stream == 1
        assert np.all(second != first)


def test_noise_is_added_in_place_without_a_copy():
    context = dpselect.Context.fixed_seed(3)
    for release in (lambda v: dpselect.add_noise(context, v, epsilon=1.0),
                    lambda v: dpselect.add_secure_noise(context, v, epsilon=1.0, sensitivity=1.0),
                    lambda v: dpselect.answer_counting_queries(context, v, epsilon=1.0, delta=1e-6, p=3.0,
                                                               repair_with_sparse_vector=False)):
        whole = np.full(12, 7.0)
        window = whole[2:9]  # a view into `whole`: a copy would leave `whole` unchanged
        address = window.ctypes.data
        release(window)
        assert window.ctypes.data == address
        assert np.all(whole[2:9] != 7.0)
        assert np.all(whole[:2] == 7.0) and np.all(whole[9:] == 7.0)


def test_the_gil_is_released_during_a_release():
    values = np.zeros(1 << 23)
    assert_the_gil_is_released(lambda: [dpselect.add_noise(dpselect.Context.fixed_seed(2), values, epsilon=1.0,
                                                           delta=1e-6, distribution=GAUSSIAN)
                                        for _ in range(4)])


def test_the_accountant_is_charged_once_with_the_right_kind():
    for fields, delta in (({}, 0.0),
                          ({"delta": 1e-7, "distribution": dpselect.NoiseDistribution.GAUSSIAN}, 1e-7),
                          ({"delta": 1e-7, "p": 2.0, "distribution": dpselect.NoiseDistribution.GENERALIZED_GAUSSIAN},
                           1e-7)):
        # With a delta budget of 0 only a pure release fits: Laplace's charge must be pure.
        context, accountant = ledger_context(3, dpselect.PrivacyBound(1.0, 1e-5 if delta else 0.0))
        dpselect.add_noise(context, np.ones(10), epsilon=0.25, **fields)
        assert accountant.release_count == 1
        assert accountant.spent().epsilon == pytest.approx(0.25, rel=1e-15)
        assert accountant.spent().delta == delta
    context, accountant = ledger_context(3, dpselect.PrivacyBound(0.1))
    values = np.ones(10)
    with pytest.raises(dpselect.BudgetExceeded):
        dpselect.add_noise(context, values, epsilon=0.25)
    assert np.all(values == 1.0)
    expect_nothing_charged_or_drawn(context, accountant)


NOISE_BASES = [{"epsilon": 1.0}, {"epsilon": 1.0, "delta": 1e-6, "distribution": GAUSSIAN},
               {"epsilon": 1.0, "delta": 1e-6, "p": 2.0, "distribution": GENERALIZED}]
BAD_POSITIVE = [(0.0, "0"), (-1.0, "-1"), (NAN, "nan"), (INF, "inf")]


def noise_refusals():
    cases = []
    for base in NOISE_BASES:
        for value, text in BAD_POSITIVE:
            cases.append(({**base, "epsilon": value}, None, f"dpselect: epsilon must be finite and > 0 (got {text})"))
            cases.append(({**base, "sensitivity": value}, None,
                          f"dpselect: sensitivity must be finite and > 0 (got {text})"))
        cases.append((base, [], "dpselect: values must hold at least one value (got size 0)"))
        for value, text in ((NAN, "nan"), (INF, "inf"), (-INF, "-inf")):
            cases.append((base, [1.0, 1.0, 1.0, value, 1.0], f"dpselect: values[3] must be finite (got {text})"))
    for value, text in ((1e-6, "1e-06"), (-1e-6, "-1e-06"), (NAN, "nan"), (1.0, "1")):
        cases.append(({"epsilon": 1.0, "delta": value}, None,
                      f"dpselect: delta must be 0 for laplace noise (got {text})"))
    for base in NOISE_BASES[1:]:
        for value, text in ((0.0, "0"), (-1e-6, "-1e-06"), (1.0, "1"), (2.0, "2"), (NAN, "nan"), (INF, "inf")):
            cases.append(({**base, "delta": value}, None, f"dpselect: delta must be in (0, 1) (got {text})"))
    for value, text in ((0.5, "0.5"), (0.999, "0.999"), (32.5, "32.5"), (-1.0, "-1"), (NAN, "nan"), (INF, "inf")):
        cases.append(({**NOISE_BASES[2], "p": value}, None, f"dpselect: p must be in [1, 32] (got {text})"))
    return cases


@pytest.mark.parametrize("fields,values,message", noise_refusals())
def test_bad_noise_parameters_and_values_are_refused_before_anything_happens(fields, values, message):
    context, accountant = ledger_context()
    array = np.array(values if values is not None else [1.0] * 5, dtype=np.float64)
    before = array.tobytes()
    expect_invalid(lambda: dpselect.add_noise(context, array, **fields), message)
    assert array.tobytes() == before
    expect_nothing_charged_or_drawn(context, accountant)


def test_p_is_ignored_unless_the_noise_is_generalized_gaussian():
    assert dpselect.add_noise(dpselect.Context.fixed_seed(6), np.ones(5), epsilon=1.0, p=NAN).p == 1.0


def test_arrays_that_cannot_take_noise_in_place_are_refused_with_a_fix():
    context, accountant = ledger_context()
    for release in (dpselect.add_noise, dpselect.add_secure_noise):
        fields = {"epsilon": 1.0} if release is dpselect.add_noise else {"epsilon": 1.0, "sensitivity": 1.0}
        for dtype in (np.float32, np.int64):
            with pytest.raises(TypeError, match=r"float64 values \(got .*\): the noise is added in place"):
                release(context, np.ones(4, dtype=dtype), **fields)
        read_only = np.ones(4)
        read_only.flags.writeable = False
        with pytest.raises(ValueError, match=r"values is read-only, .* pass a writable copy \(values.copy\(\)\)"):
            release(context, read_only, **fields)
        with pytest.raises(ValueError, match=r"C-contiguous .* numpy.ascontiguousarray"):
            release(context, np.ones(10)[::2], **fields)
        with pytest.raises(ValueError, match="must be 1-D"):
            release(context, np.ones((2, 3)), **fields)
        with pytest.raises(TypeError, match=r"NumPy array or an object with __dlpack__ .*\(got list\)"):
            release(context, [1.0, 2.0], **fields)
    with pytest.raises(TypeError, match="params or keyword arguments, not both"):
        dpselect.add_noise(context, np.ones(3), dpselect.NoiseVectorParams(1.0), epsilon=1.0)
    with pytest.raises(TypeError, match="params must be a dpselect.NoiseVectorParams"):
        dpselect.add_noise(context, np.ones(3), dpselect.SecureNoiseParams(1.0, 1.0))
    with pytest.raises(TypeError, match=r"answers must hold float64"):
        dpselect.answer_counting_queries(context, np.ones(4, dtype=np.float32), epsilon=1.0, delta=1e-6)
    expect_nothing_charged_or_drawn(context, accountant)


def test_a_gpu_request_without_one_raises_backend_unavailable_before_the_charge():
    if dpselect.gpu_usable():
        pytest.skip("a GPU is usable here")
    context, accountant = ledger_context()
    values = np.zeros(4)
    with pytest.raises(dpselect.BackendUnavailable):
        dpselect.add_noise(context, values, epsilon=1.0, backend=dpselect.Backend.GPU)
    assert np.all(values == 0.0)
    expect_nothing_charged_or_drawn(context, accountant)


def test_device_arrays_get_the_same_noise_as_host_arrays():
    cupy = pytest.importorskip("cupy")
    if not dpselect.gpu_usable():
        pytest.skip("no usable GPU")
    host = np.arange(1 << 16, dtype=np.float64) / 8
    for release in (lambda c, v: dpselect.add_noise(c, v, epsilon=1.0, delta=1e-6, distribution=GAUSSIAN),
                    lambda c, v: dpselect.add_secure_noise(c, v, epsilon=1.0, sensitivity=1.0)):
        device = cupy.asarray(host)
        on_cpu = host.copy()
        release(dpselect.Context.fixed_seed(7), device)
        release(dpselect.Context.fixed_seed(7), on_cpu)
        assert cupy.asnumpy(device).tobytes() == on_cpu.tobytes()


# ---- secure noise -------------------------------------------------------------------------------

def test_secure_laplace_lies_on_its_grid_with_the_discrete_laplace_distribution():
    n = 100_000
    x = 0.1  # off the grid: the center is the nearest grid point
    values = np.full(n, x)
    report = dpselect.add_secure_noise(dpselect.Context.fixed_seed(21), values, epsilon=1.0, sensitivity=1.0)
    plan = report.plan
    assert (report.distribution, report.coordinates) == (dpselect.SecureDistribution.LAPLACE, n)
    expected = dpselect.secure_noise_plan(n, epsilon=1.0, sensitivity=1.0)
    assert (plan.granularity, plan.integer_scale_num, plan.integer_scale_den) == (
        expected.granularity, expected.integer_scale_num, expected.integer_scale_den)
    g = plan.granularity
    assert g == 2.0 ** -31  # Laplace scale 1: the smallest power of two >= 1 * 2^-31
    grid = values / g
    assert np.all(grid == np.rint(grid))
    noise = grid - np.rint(x / g)
    # Discrete Laplace, P[N = m] proportional to q^|m|, q = exp(-1/t) (Canonne, Kamath & Steinke
    # 2020): P[N <= m] = 1 - q^(m+1) / (1 + q) for m >= 0 and q^-m / (1 + q) for m < 0.
    t = plan.integer_scale_num / plan.integer_scale_den
    q = math.exp(-1 / t)

    def cdf(m):
        return 1 - math.exp(-(m + 1) / t) / (1 + q) if m >= 0 else math.exp(m / t) / (1 + q)

    edges = [round(j * t / 2) for j in range(-6, 7)]  # half-scale cells, open at both ends
    cumulative = [0.0] + [cdf(m) for m in edges] + [1.0]
    probabilities = [b - a for a, b in zip(cumulative, cumulative[1:])]
    cells = np.searchsorted(np.array(edges, dtype=np.float64), noise, side="left")
    expect_counts(np.bincount(cells, minlength=len(probabilities)), probabilities, n)


def test_secure_gaussian_lies_on_its_grid_with_the_discrete_gaussian_distribution():
    n = 100_000
    x = -3.7
    values = np.full(n, x)
    report = dpselect.add_secure_noise(dpselect.Context.fixed_seed(22), values, epsilon=0.5, delta=1e-5,
                                       sensitivity=1.0, distribution=dpselect.SecureDistribution.GAUSSIAN)
    plan = report.plan
    assert (report.distribution, report.coordinates) == (dpselect.SecureDistribution.GAUSSIAN, n)
    g = plan.granularity
    grid = values / g
    assert np.all(grid == np.rint(grid))
    noise = grid - np.rint(x / g)
    # N_Z(0, s2): P[N = m] proportional to exp(-m^2 / (2 s2)), summed exactly enough over |m| <= 12
    # sigma (the mass beyond is below e^-72).
    s2 = plan.integer_scale_num / plan.integer_scale_den
    sigma = math.sqrt(s2)
    reach = math.ceil(12 * sigma)
    support = np.arange(-reach, reach + 1, dtype=np.float64)
    weights = np.exp(-support * support / (2 * s2))
    edges = [math.floor(j * sigma / 2) for j in range(-4, 5)]
    bounds = [-reach - 1] + edges + [reach]
    cell_mass = [weights[(support > lo) & (support <= hi)].sum() for lo, hi in zip(bounds, bounds[1:])]
    total = math.fsum(cell_mass)
    cells = np.searchsorted(np.array(edges, dtype=np.float64), noise, side="left")
    expect_counts(np.bincount(cells, minlength=len(cell_mass)), [m / total for m in cell_mass], n)


def test_secure_plans_follow_the_documented_grid_rules():
    laplace = dpselect.secure_noise_plan(1000, epsilon=0.5, sensitivity=3.0)
    # Laplace scale 6: g = the smallest power of two >= 6 * 2^-31 = 2^-28, S_1 = floor(3 / g) + k.
    assert laplace.granularity == 2.0 ** -28
    assert laplace.integer_sensitivity == 3.0 / 2.0 ** -28 + 1000
    assert laplace.effective_scale == laplace.granularity * laplace.integer_scale_num
    assert laplace.effective_scale >= 6.0
    on_grid = dpselect.secure_noise_plan(1000, epsilon=0.5, sensitivity=3.0, inputs_on_grid=True)
    assert on_grid.integer_sensitivity == 3.0 / 2.0 ** -28
    params = dpselect.SecureNoiseParams(1.0, 2.0, dpselect.SecureDistribution.GAUSSIAN, delta=1e-6)
    gaussian = dpselect.secure_noise_plan(100, params)
    assert gaussian.integer_sensitivity == pytest.approx(2.0 / gaussian.granularity + 10.0, rel=1e-9)
    rho = gaussian.integer_sensitivity ** 2 / (2 * gaussian.integer_scale_num)  # CKS 2020, Thm 14
    assert gaussian.rho == pytest.approx(rho, rel=1e-12)


SECURE_LAPLACE = {"epsilon": 1.0, "sensitivity": 1.0}
SECURE_GAUSSIAN = {**SECURE_LAPLACE, "delta": 1e-6, "distribution": dpselect.SecureDistribution.GAUSSIAN}


def secure_refusals():
    cases = []
    for base in (SECURE_LAPLACE, SECURE_GAUSSIAN):
        for value, text in BAD_POSITIVE:
            cases.append(({**base, "epsilon": value}, [1.0, 2.0],
                          f"dpselect: epsilon must be finite and > 0 (got {text})"))
            cases.append(({**base, "sensitivity": value}, [1.0, 2.0],
                          f"dpselect: sensitivity must be finite and > 0 (got {text})"))
    for value, text in ((0.0, "0"), (1.0, "1"), (-0.5, "-0.5"), (NAN, "nan"), (INF, "inf")):
        cases.append(({**SECURE_GAUSSIAN, "delta": value}, [1.0, 2.0],
                      f"dpselect: delta must be in (0, 1) for the Gaussian distribution (got {text})"))
    cases.append(({**SECURE_LAPLACE, "delta": 0.1}, [1.0, 2.0],
                  "dpselect: delta must be 0 for the Laplace distribution (got 0.1)"))
    cases.append((SECURE_LAPLACE, [1.0, NAN], "dpselect: values[1] must be finite (got nan)"))
    cases.append((SECURE_GAUSSIAN, [INF], "dpselect: values[0] must be finite (got inf)"))
    granularity = repr(2.0 ** -31)  # the grid of Laplace scale 1: the smallest power of two >= 2^-31
    cases.append(({**SECURE_LAPLACE, "inputs_on_grid": True}, [1.0, 0.1],
                  f"dpselect: values[1] must be a multiple of the granularity {granularity} (inputs_on_grid) "
                  "(got 0.1)"))
    return cases


@pytest.mark.parametrize("fields,values,message", secure_refusals())
def test_bad_secure_noise_parameters_and_values_are_refused_before_anything_happens(fields, values, message):
    context, accountant = ledger_context(1)
    array = np.array(values)
    before = array.tobytes()
    expect_invalid(lambda: dpselect.add_secure_noise(context, array, **fields), message)
    assert array.tobytes() == before
    expect_nothing_charged_or_drawn(context, accountant)


def test_secure_plans_refuse_too_many_coordinates_or_too_large_a_scale():
    expect_invalid_parts(lambda: dpselect.secure_noise_plan(1 << 40, **SECURE_LAPLACE), "coordinates", "1099511627776")
    expect_invalid_parts(lambda: dpselect.secure_noise_plan(1 << 40, **SECURE_GAUSSIAN), "coordinates", "1099511627776")
    expect_invalid(lambda: dpselect.secure_noise_plan((1 << 44) + 1, **SECURE_LAPLACE),
                   "dpselect: values must number at most 2^44 (got 17592186044417)")
    expect_invalid_parts(lambda: dpselect.secure_noise_plan(1, epsilon=1.0, sensitivity=1e300),
                         "sensitivity / epsilon", "1e+300")


# ---- calibration --------------------------------------------------------------------------------

def test_the_analytic_gaussian_sigma_is_the_smallest_that_meets_delta():
    for epsilon, delta, sensitivity in ((0.5, 1e-6, 1.0), (1.0, 1e-5, 3.0), (4.0, 1e-9, 0.25)):
        sigma = dpselect.analytic_gaussian_sigma(epsilon, delta, sensitivity)
        assert dpselect.gaussian_delta(sigma, sensitivity, epsilon) <= delta
        assert dpselect.gaussian_delta(math.nextafter(sigma, 0.0), sensitivity, epsilon) > delta
        if epsilon < 1:  # the classical bound (Dwork & Roth 2014, Thm A.1) holds there and is larger
            assert sigma < math.sqrt(2 * math.log(1.25 / delta)) * sensitivity / epsilon
    for sigma, epsilon in ((0.7, 0.5), (1.0, 1.0), (3.0, 0.5), (5.0, 0.1)):
        assert dpselect.gaussian_delta(sigma, 1.0, epsilon) == pytest.approx(balle_wang_delta(sigma, 1.0, epsilon),
                                                                             rel=1e-9)


def test_the_discrete_gaussian_delta_matches_its_exact_sum():
    # Canonne, Kamath & Steinke 2020, Thm 7: delta = P[X > eps s^2/D - D/2] - e^eps P[X > eps s^2/D + D/2].
    for sigma, sensitivity, epsilon in ((2.0, 1, 0.5), (5.0, 3, 1.0), (1.0, 1, 0.2)):
        weights = {m: math.exp(-m * m / (2 * sigma * sigma)) for m in range(-400, 401)}
        total = math.fsum(weights.values())
        low = epsilon * sigma * sigma / sensitivity - sensitivity / 2
        high = epsilon * sigma * sigma / sensitivity + sensitivity / 2
        tail_low = math.fsum(w for m, w in weights.items() if m > low) / total
        tail_high = math.fsum(w for m, w in weights.items() if m > high) / total
        exact = tail_low - math.exp(epsilon) * tail_high
        got = dpselect.discrete_gaussian_delta(sigma, sensitivity, epsilon)
        assert exact * (1 - 1e-12) <= got <= exact * (1 + 1e-9)


def test_generalized_gaussian_delta_bounds_the_exact_laplace_and_gaussian_deltas():
    # One coordinate: GG(1, b) is Laplace(b), whose exact delta at eps < 1/b is 1 - e^((eps - 1/b)/2);
    # GG(2, sigma) is N(0, sigma^2 / 2). The pessimistic discretization stays just above both.
    for b, epsilon in ((0.5, 0.1), (1.0, 0.2), (4.0, 0.05)):
        exact = 1 - math.exp((epsilon - 1 / b) / 2)
        assert exact <= dpselect.generalized_gaussian_delta(b, 1.0, 1, epsilon) <= exact * (1 + 1e-4)
    for sd, epsilon in ((0.7, 1.0), (1.0, 0.5), (3.0, 1.0)):
        exact = balle_wang_delta(sd, 1.0, epsilon)
        assert exact <= dpselect.generalized_gaussian_delta(sd * math.sqrt(2), 2.0, 1, epsilon) <= exact * (1 + 1e-2)


def test_generalized_gaussian_sigma_meets_delta_within_its_tolerance():
    for epsilon, delta, p, k in ((1.0, 1e-6, 2.0, 1000), (0.5, 1e-5, 1.5, 10)):
        sigma = dpselect.generalized_gaussian_sigma(epsilon, delta, p, k)
        assert dpselect.generalized_gaussian_delta(sigma, p, k, epsilon) <= delta
        # The bisection stops at relative width 1e-5 and returns the upper end.
        assert dpselect.generalized_gaussian_delta(sigma * (1 - 1e-5), p, k, epsilon) > delta


def test_generalized_gaussian_moments_and_cdf_match_closed_forms():
    sigma = 2.5
    for p in (1.0, 1.5, 2.0, 3.0):
        # E|x| = sigma Gamma(2/p) / Gamma(1/p) for one coordinate.
        assert dpselect.generalized_gaussian_expected_linf(sigma, p, 1) == pytest.approx(
            sigma * math.gamma(2 / p) / math.gamma(1 / p), rel=1e-8)
    # The larger of two Exp(sigma) magnitudes has mean 1.5 sigma.
    assert dpselect.generalized_gaussian_expected_linf(sigma, 1.0, 2) == pytest.approx(1.5 * sigma, rel=1e-8)
    for t in (0.1, 1.0, 4.0):
        assert dpselect.generalized_gaussian_abs_cdf(t, sigma, 1.0) == pytest.approx(-math.expm1(-t / sigma), rel=1e-12)
        assert dpselect.generalized_gaussian_abs_cdf(t, sigma, 2.0) == pytest.approx(math.erf(t / sigma), rel=1e-12)
    assert dpselect.generalized_gaussian_abs_cdf(-1.0, sigma, 2.0) == 0.0


def test_the_recommended_and_best_exponents():
    for k in (1, 100, 10_000, 10 ** 9):
        ln_ln = math.log(math.log(k)) if k > math.e else 0.0
        ln_ln_ln = math.log(math.log(math.log(k))) if k > math.exp(math.e) else 0.0
        assert dpselect.generalized_gaussian_recommended_p(k) == max(2.0, ln_ln)
        assert dpselect.generalized_gaussian_recommended_p(k, composed_with_sparse_vector=True) == max(1.0, ln_ln_ln)
    choice = dpselect.generalized_gaussian_best_p(1.0, 1e-6, 100, [1.0, 2.0])
    sigmas = {p: dpselect.generalized_gaussian_sigma(1.0, 1e-6, p, 100) for p in (1.0, 2.0)}
    errors = {p: dpselect.generalized_gaussian_expected_linf(sigma, p, 100) for p, sigma in sigmas.items()}
    assert choice.p == min(errors, key=errors.get)
    assert choice.sigma == dpselect.generalized_gaussian_sigma(1.0, 1e-6, choice.p, 100)
    assert choice.expected_linf == errors[choice.p]
    assert repr(choice).startswith("GeneralizedGaussianChoice(p=")


def calibration_refusals():
    gg = dpselect
    # (function, arguments with None where the bad value goes, the parameter's name)
    positive = [
        (gg.generalized_gaussian_delta, (None, 2.0, 1, 1.0), "sigma"),
        (gg.generalized_gaussian_delta, (1.0, 2.0, 1, None), "epsilon"),
        (gg.generalized_gaussian_sigma, (None, 1e-6, 2.0, 1), "epsilon"),
        (gg.generalized_gaussian_expected_linf, (None, 2.0, 1), "sigma"),
        (gg.gaussian_delta, (None, 1.0, 1.0), "sigma"),
        (gg.gaussian_delta, (1.0, None, 1.0), "l2_sensitivity"),
        (gg.gaussian_delta, (1.0, 1.0, None), "epsilon"),
        (gg.analytic_gaussian_sigma, (None, 1e-5, 1.0), "epsilon"),
        (gg.analytic_gaussian_sigma, (1.0, 1e-5, None), "l2_sensitivity"),
        (gg.discrete_gaussian_delta, (1.0, 1, None), "epsilon"),
    ]
    cases = []
    for function, arguments, name in positive:
        for value, text in BAD_POSITIVE:
            filled = tuple(value if a is None else a for a in arguments)
            cases.append((function, filled, f"dpselect: {name} must be finite and > 0 (got {text})"))
    for value, text in ((0.0, "0"), (-1e-6, "-1e-06"), (1.0, "1"), (2.0, "2"), (NAN, "nan"), (INF, "inf")):
        message = f"dpselect: delta must be in (0, 1) (got {text})"
        cases.append((gg.generalized_gaussian_sigma, (1.0, value, 2.0, 1), message))
    for value, text in ((0.5, "0.5"), (0.0, "0"), (-2.0, "-2"), (33.0, "33"), (NAN, "nan"), (INF, "inf")):
        message = f"dpselect: p must be finite and in [1, 32] (got {text})"
        cases.append((gg.generalized_gaussian_delta, (1.0, value, 1, 1.0), message))
        cases.append((gg.generalized_gaussian_sigma, (1.0, 1e-6, value, 1), message))
    for k, text in ((0, "0"), ((1 << 32) + 1, "4294967297")):
        message = f"dpselect: k must be >= 1 and <= 2^32 (got {text})"
        cases.append((gg.generalized_gaussian_delta, (1.0, 2.0, k, 1.0), message))
        cases.append((gg.generalized_gaussian_sigma, (1.0, 1e-6, 2.0, k), message))
        cases.append((gg.generalized_gaussian_expected_linf, (1.0, 2.0, k), message))
    return cases + [
        (gg.generalized_gaussian_recommended_p, (0,), "dpselect: k must be >= 1 (got 0)"),
        (gg.generalized_gaussian_best_p, (1.0, 1e-6, 10, [2.0, 0.5]),
         "dpselect: p must be finite and in [1, 32] (got 0.5)"),
        (gg.discrete_gaussian_delta, (2e6, 1, 1.0), "dpselect: sigma must be finite, > 0 and <= 1e6 (got 2e+06)"),
        (gg.discrete_gaussian_delta, (1.0, 0, 1.0), "dpselect: sensitivity must be >= 1 (got 0)"),
        (gg.discrete_gaussian_delta, (1.0, -3, 1.0), "dpselect: sensitivity must be >= 1 (got -3)"),
        (gg.analytic_gaussian_sigma, (1.0, 1.0, 1.0), "dpselect: delta must be in (0, 1) (got 1)"),
    ]


@pytest.mark.parametrize("function,arguments,message", calibration_refusals())
def test_bad_calibration_parameters_are_named(function, arguments, message):
    expect_invalid(lambda: function(*arguments), message)


# ---- the l-inf answerer -------------------------------------------------------------------------

QUERIES = 200
PLAN_FIELDS = {"epsilon": 1.0, "delta": 1e-6, "p": 1.5, "max_repairs": 8}


@pytest.fixture(scope="module")
def plan():
    return dpselect.plan_linf_answers(QUERIES, **PLAN_FIELDS)


def test_the_plan_splits_the_budget_and_uses_the_calibrated_scales(plan):
    assert (plan.queries, plan.p, plan.repair_with_sparse_vector, plan.beta) == (QUERIES, 1.5, True, 0.05)
    check = plan.check
    assert check.max_positives == 8
    assert check.sensitivity == 1.0
    # Basic composition of the three parts (Dwork & Roth 2014, Thm 3.16).
    assert plan.epsilon_noise + check.epsilon + plan.epsilon_repair == pytest.approx(1.0, rel=1e-14)
    assert plan.delta_noise + check.delta + plan.delta_repair == pytest.approx(1e-6, rel=1e-14)
    assert plan.sigma == dpselect.generalized_gaussian_sigma(plan.epsilon_noise, plan.delta_noise, 1.5, QUERIES)
    assert plan.repair_std == dpselect.analytic_gaussian_sigma(plan.epsilon_repair, plan.delta_repair, math.sqrt(8))
    assert plan.bound >= check.threshold > 0
    assert repr(plan).startswith(f"LinfAnswerPlan(queries={QUERIES}, p=1.5, ")
    alone = dpselect.plan_linf_answers(1, epsilon=1.0, delta=1e-6, p=2.0)
    assert not alone.repair_with_sparse_vector  # one query: nothing to repair
    assert alone.sigma == dpselect.generalized_gaussian_sigma(1.0, 1e-6, 2.0, 1)


def test_without_repairs_the_answerer_is_the_generalized_gaussian_noise_vector():
    d = counts(500, 1)
    answered, expected = d.copy(), d.copy()
    report = dpselect.answer_counting_queries(dpselect.Context.fixed_seed(5), answered, epsilon=1.0, delta=1e-6, p=3.0,
                                              repair_with_sparse_vector=False)
    assert (report.repaired, report.halted, report.plan.epsilon_noise) == (0, False, 1.0)
    dpselect.add_noise(dpselect.Context.fixed_seed(5), expected, epsilon=1.0, delta=1e-6, p=3.0,
                       distribution=GENERALIZED)
    assert answered.tobytes() == expected.tobytes()


def test_the_release_is_the_noise_vector_with_the_flagged_coordinates_repaired(plan):
    d = counts(QUERIES, 2)
    # About a third of GG(1.5) coordinates exceed one scale: a threshold there flags some.
    lowered = copy.copy(plan)
    lowered.check.threshold = plan.sigma
    assert plan.check.threshold != plan.sigma  # the copy was edited, not the plan
    for seed in range(2):
        answered, by_params = d.copy(), d.copy()
        context, accountant = ledger_context(seed, dpselect.PrivacyBound(10.0, 1e-3))
        report = dpselect.answer_counting_queries(context, answered, lowered)
        assert accountant.release_count == 3  # the three parts, charged together
        assert 0.5 < accountant.spent().epsilon <= 1.0 + 1e-12
        assert dpselect.add_noise(context, np.zeros(1), epsilon=0.1).stream == 3  # noise, check, repair
        noise_only = d.copy()
        dpselect.add_noise(dpselect.Context.fixed_seed(seed), noise_only, epsilon=plan.epsilon_noise,
                           delta=plan.delta_noise, p=plan.p, distribution=GENERALIZED)
        assert 0 < report.repaired <= 8
        assert np.count_nonzero(answered != noise_only) == report.repaired
        if report.halted:
            assert report.repaired == 8
        # The same key through the parameters, which plan the same thing.
        same = dpselect.answer_counting_queries(dpselect.Context.fixed_seed(seed), by_params, **PLAN_FIELDS)
        reference = d.copy()
        dpselect.answer_counting_queries(dpselect.Context.fixed_seed(seed), reference, plan)
        assert by_params.tobytes() == reference.tobytes()
        assert same.plan.bound == plan.bound


def test_a_budget_refusal_writes_nothing(plan):
    context, accountant = ledger_context(1, dpselect.PrivacyBound(0.5, 1e-5))
    d = counts(QUERIES, 4)
    before = d.tobytes()
    with pytest.raises(dpselect.BudgetExceeded):
        dpselect.answer_counting_queries(context, d, plan)
    assert d.tobytes() == before
    assert accountant.release_count == 0
    assert dpselect.add_noise(context, np.zeros(1), epsilon=0.1).stream == 0


def linf_refusals():
    good = {"epsilon": 1.0, "delta": 1e-6, "p": 2.0}
    return [
        ({**good, "epsilon": 0.0}, None, "dpselect: epsilon must be finite and > 0 (got 0)"),
        ({**good, "epsilon": NAN}, None, "dpselect: epsilon must be finite and > 0 (got nan)"),
        ({**good, "delta": 0.0}, None, "dpselect: delta must be in (0, 1) (got 0)"),
        ({**good, "delta": 1.0}, None, "dpselect: delta must be in (0, 1) (got 1)"),
        ({**good, "beta": 0.0}, None, "dpselect: beta must be in (0, 1) (got 0)"),
        ({**good, "p": 0.5}, None, "dpselect: p must be 0 (chosen by the planner) or in [1, 32] (got 0.5)"),
        ({**good, "p": INF}, None, "dpselect: p must be 0 (chosen by the planner) or in [1, 32] (got inf)"),
        ({**good, "max_repairs": 6}, None,
         "dpselect: max_repairs must be 0 (chosen by the planner) or at most queries / 2 = 5 (got 6)"),
        (good, 0, "dpselect: queries must be in [1, 2^32] (got 0)"),
        (good, NAN, "dpselect: answers[3] must be finite with magnitude <= 1e300 (got nan)"),
        (good, 2e300, "dpselect: answers[3] must be finite with magnitude <= 1e300 (got 2e+300)"),
    ]


@pytest.mark.parametrize("fields,bad,message", linf_refusals())
def test_bad_answerer_parameters_and_answers_are_refused_before_anything_happens(fields, bad, message):
    context, accountant = ledger_context(1)
    d = counts(10, 5)
    if bad == 0:
        d = d[:0]
    elif bad is not None:
        d[3] = bad
    before = d.tobytes()
    expect_invalid(lambda: dpselect.answer_counting_queries(context, d, **fields), message)
    assert d.tobytes() == before
    expect_nothing_charged_or_drawn(context, accountant)


def test_plans_are_refused_with_the_planner_messages(plan):
    expect_invalid(lambda: dpselect.plan_linf_answers(10, epsilon=-1.0, delta=1e-6, p=2.0),
                   "dpselect: epsilon must be finite and > 0 (got -1)")
    with pytest.raises(TypeError, match="a plan or keyword arguments, not both"):
        dpselect.answer_counting_queries(dpselect.Context.fixed_seed(1), np.ones(QUERIES), plan, epsilon=1.0)


def test_an_edited_plan_is_checked_again(plan):
    def sigma_lower(p):
        p.sigma *= 0.99

    def repair_std_lower(p):
        p.repair_std *= 0.99

    def fewer_queries(p):
        p.queries = QUERIES - 1

    def numeric_check(p):
        p.check.numeric = True

    def check_sensitivity_below_one(p):
        p.check.sensitivity = 0.5

    def more_positives(p):
        p.check.max_positives = 16

    def less_epsilon_claimed(p):
        p.epsilon_noise = plan.epsilon_noise / 2

    def p_below_one(p):
        p.p = 0.5

    def no_repair_delta(p):
        p.delta_repair = 0.0

    edits = [
        (sigma_lower, "dpselect: plan.sigma must be at least the calibrated "),
        (repair_std_lower, "dpselect: plan.repair_std must be at least the calibrated "),
        (fewer_queries, f"dpselect: plan.queries must equal answers.size() = {QUERIES} (got {QUERIES - 1})"),
        (numeric_check, "dpselect: plan.check.numeric must be false (got true)"),
        (check_sensitivity_below_one, "dpselect: plan.check.sensitivity must be at least 1"),
        (more_positives, "dpselect: plan.repair_std must be at least the calibrated "),
        (less_epsilon_claimed, "dpselect: plan.sigma must be at least the calibrated "),
        (p_below_one, "dpselect: plan.p must be in [1, 32] (got 0.5)"),
        (no_repair_delta, "dpselect: plan.delta_repair must be in (0, 1) (got 0)"),
    ]
    context, accountant = ledger_context(1)
    d = counts(QUERIES, 6)
    before = d.tobytes()
    for edit, start in edits:
        edited = copy.deepcopy(plan)
        edit(edited)
        with pytest.raises(dpselect.InvalidArgument) as error:
            dpselect.answer_counting_queries(context, d, edited)
        assert str(error.value).startswith(start), str(error.value)
        assert d.tobytes() == before
    expect_nothing_charged_or_drawn(context, accountant)
    noisier = copy.copy(plan)
    noisier.sigma *= 2
    dpselect.answer_counting_queries(dpselect.Context.fixed_seed(1), d, noisier)  # more noise is accepted


def test_reprs_and_help_show_the_fields():
    assert repr(dpselect.NoiseVectorParams(0.5)) == (
        "NoiseVectorParams(epsilon=0.5, distribution=laplace, delta=0.0, sensitivity=1.0, p=2.0, backend=auto)")
    assert repr(dpselect.SecureNoiseParams(1.0, 2.0)) == (
        "SecureNoiseParams(epsilon=1.0, sensitivity=2.0, distribution=laplace, delta=0.0, inputs_on_grid=False)")
    assert repr(dpselect.LinfAnswerParams(1.0, 1e-6)) == (
        "LinfAnswerParams(epsilon=1.0, delta=1e-06, beta=0.05, p=0.0, max_repairs=0, repair_with_sparse_vector=True)")
    report = dpselect.add_noise(dpselect.Context.fixed_seed(1), np.zeros(3), epsilon=2.0)
    assert repr(report) == ("NoiseVectorReport(distribution=laplace, epsilon=2.0, delta=0.0, sensitivity=1.0, p=1.0, "
                            "scale=0.5, coordinates=3, stream=0, generator=chacha20, executed_on=cpu)")
    secure = dpselect.add_secure_noise(dpselect.Context.fixed_seed(1), np.zeros(3), epsilon=1.0, sensitivity=1.0)
    assert repr(secure).startswith("SecureNoiseReport(distribution=laplace, plan=SecureNoisePlan(granularity=")
    for name in ("add_noise", "add_secure_noise", "answer_counting_queries", "plan_linf_answers",
                 "generalized_gaussian_sigma", "analytic_gaussian_sigma"):
        assert len(getattr(dpselect, name).__doc__) > 80, name
    assert dpselect.NoiseDistribution.GENERALIZED_GAUSSIAN.name == "GENERALIZED_GAUSSIAN"
