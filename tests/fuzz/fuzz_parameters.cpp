// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the validation of every public entry point that charges a context's
// accountant: select (float, double, and the begin_release / evaluate / finish API),
// select_top_k, select_rows, select_repeated, select_price (grid, list, range), select_quantile,
// select_quantiles, SparseVector, sparse_vector_batch, add_noise and add_secure_noise; and of the
// public calculators that charge nothing (generalized Gaussian, accounting and budget splits,
// Gaussian calibrations, secure-noise and l_inf plans, rank-error bounds). Their parameters come
// from the input, half of them adversarial (NaN, infinities, denormals, signed zeros, the
// extremes: fuzz_support.hpp) and counts from 0 up; the data are small and valid, so that every
// refusal is about the parameters (or the budget: a tiny one, some of the time).
//
// Invariants:
// - a call returns a valid answer (an index inside the range, k distinct indices, a price among
//   the candidates, grid points inside the range, finite noisy values; for the calculators,
//   probabilities in [0, 1], splits within their totals, calibrations that meet their targets), or throws
//   InvalidArgument, UsageError or BudgetExceeded with one printable line; nothing else;
// - a call that throws charged nothing and drew no stream: the accountant's total is unchanged
//   and the context's next stream is the one it would have drawn (probed before and after on
//   the same context, with the accountant detached for the probes). The exceptions are the
//   refusals the documented contract places after the charge because they depend on the data
//   (depends_on_data below).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dpselect/dpselect.hpp"
#include "fuzz_support.hpp"

namespace {

using namespace dpselect;
using dpselect::fuzz::check;

const std::vector<double> kUtilities{1.0, 3.0, 2.0, 0.5, -HUGE_VAL, 2.5};
const std::vector<double> kBids{1.0, 2.5, 3.0, 4.0, 7.5};
const std::vector<double> kQuantileData{1.0, 2.0, 2.5, 6.0, 9.0, 3.0};
const std::vector<double> kAnswers{0.0, 5.0, 1.0, 9.0, 2.0};

// A parameter: an adversarial double or, as often, a plausible one.
double parameter(FuzzedDataProvider& data) {
  constexpr double kPlausible[] = {0.1, 1.0, 2.0, 8.0, 1e-6, 100.0};
  if (data.ConsumeBool()) return dpselect::fuzz::adversarial_double(data);
  return kPlausible[data.ConsumeIntegralInRange<std::size_t>(0, std::size(kPlausible) - 1)];
}

std::uint64_t count(FuzzedDataProvider& data) {
  constexpr std::uint64_t kCounts[] = {0, 1, 2, 3, 6, 7, 1u << 20, ~std::uint64_t{0}};
  return kCounts[data.ConsumeIntegralInRange<std::size_t>(0, std::size(kCounts) - 1)];
}

template <class Enum>
Enum choice(FuzzedDataProvider& data, int values) {
  return static_cast<Enum>(data.ConsumeIntegralInRange<int>(0, values - 1));
}

SelectionParams selection_params(FuzzedDataProvider& data) {
  SelectionParams params;
  params.mechanism = choice<Mechanism>(data, 3);
  params.epsilon = parameter(data);
  params.sensitivity = parameter(data);
  params.monotone = data.ConsumeBool();
  params.utility_bound = data.ConsumeBool() ? parameter(data) : 0.0;
  params.backend = Backend::Cpu;
  return params;
}

// The privacy parameters both noise parameter structs have.
template <class Params>
Params noise_parameters(FuzzedDataProvider& data) {
  Params params;
  params.epsilon = parameter(data);
  params.delta = parameter(data);
  params.sensitivity = parameter(data);
  return params;
}

void check_index(std::uint64_t index, std::span<const double> utilities) {
  check(index < utilities.size() && utilities[index] != -HUGE_VAL, "an index outside the range or excluded");
}

// The next stream `context` would draw, drawn by a probe release no accountant sees.
std::uint64_t probe_stream(Context& context, const std::shared_ptr<PrivacyAccountant>& accountant) {
  context.charge_to(nullptr);
  SelectionParams params;
  params.epsilon = 1.0;
  params.sensitivity = 1.0;
  params.backend = Backend::Cpu;
  const std::uint64_t stream = context.begin_release(params).stream();
  context.charge_to(accountant);
  return stream;
}

bool is_probability(double value) { return value >= 0 && value <= 1; }

// The generalized Gaussian's public calculators (no context: nothing to charge).
void generalized_gaussian_calculators(FuzzedDataProvider& data) {
  const double sigma = parameter(data), p = parameter(data), epsilon = parameter(data);
  const std::uint64_t k = count(data);
  switch (data.ConsumeIntegralInRange<int>(0, 3)) {
    case 0: {
      // At most 4096 coordinates (and the refused 0 and 2^64 - 1): the composition's cost grows with log k.
      const std::uint64_t coordinates = k == (1u << 20) ? 4096 : k;
      check(is_probability(generalized_gaussian_delta(sigma, p, coordinates, epsilon)), "a delta outside [0, 1]");
      return;
    }
    case 1: check(generalized_gaussian_expected_linf(sigma, p, k) >= 0, "an expected l_inf error below 0 or NaN"); return;
    case 2: check(is_probability(generalized_gaussian_abs_cdf(parameter(data), sigma, p)), "a cdf outside [0, 1]"); return;
    default: {
      const double recommended = generalized_gaussian_recommended_p(k, data.ConsumeBool());
      check(recommended >= 1 && std::isfinite(recommended), "a recommended p below 1 or not finite");
      return;
    }
  }
}

// The accounting calculators, with the invariants privacy rests on: a split never sums past its
// total, and the per-release epsilon it recommends composes within its target.
void accounting_calculators(FuzzedDataProvider& data) {
  const std::uint64_t k = count(data);
  const double epsilon = parameter(data), delta = parameter(data), other = parameter(data);
  const auto kind = choice<ReleaseKind>(data, 3);
  switch (data.ConsumeIntegralInRange<int>(0, 9)) {
    case 0: {
      std::vector<PrivacyBound> releases;
      for (std::size_t i = data.ConsumeIntegralInRange<std::size_t>(0, 4); i > 0; --i) {
        releases.push_back({parameter(data), parameter(data)});
      }
      const PrivacyBound total = basic_composition(releases);
      check(total.epsilon >= 0 && total.delta >= 0, "basic composition: a negative or NaN total");
      return;
    }
    case 1: {
      const PrivacyBound total = advanced_composition(k, {epsilon, delta}, other);
      check(total.epsilon >= 0 && total.delta >= 0, "advanced composition: a negative or NaN total");
      return;
    }
    case 2: check(is_probability(optimal_composition_delta(k, epsilon, other)), "optimal composition: a delta outside [0, 1]"); return;
    case 3: check(optimal_composition_epsilon(k, epsilon, delta) >= 0, "optimal composition: an epsilon below 0 or NaN"); return;
    case 4: check(zcdp_of_pure(epsilon) >= 0 && zcdp_of_exponential_mechanism(epsilon) >= 0, "a rho below 0 or NaN"); return;
    case 5: check(is_probability(delta_from_zcdp(epsilon, other)), "zCDP: a delta outside [0, 1]"); return;
    case 6: check(epsilon_from_zcdp_tight(epsilon, delta) >= 0, "zCDP: an epsilon below 0 or NaN"); return;
    case 7: {
      const AccountedBound bound = compose_homogeneous(k, epsilon, kind, delta);
      check(bound.epsilon >= 0 && is_probability(bound.delta), "compose_homogeneous: a bound below 0 or NaN");
      return;
    }
    case 8: {
      std::vector<double> shares;
      if (data.ConsumeBool()) {
        shares.assign(std::min<std::uint64_t>(k, 64), split_evenly(epsilon, k));
      } else {
        std::vector<double> weights;
        for (std::size_t i = data.ConsumeIntegralInRange<std::size_t>(0, 4); i > 0; --i) weights.push_back(parameter(data));
        shares = split_by_weights(epsilon, weights);
      }
      long double sum = 0;
      for (const double share : shares) {
        check(share > 0, "a share of a split that is not positive");
        sum += share;
      }
      check(sum <= epsilon, "a split whose shares sum past the total");
      return;
    }
    default: {
      const double each = per_release_epsilon(k, epsilon, delta, kind);
      check(each > 0 && compose_homogeneous(k, each, kind, delta).epsilon <= epsilon,
            "per_release_epsilon: k releases that compose past the target");
      return;
    }
  }
}

// The noise calibrations and the plans built on them (no context: nothing to charge).
void calibrations_and_plans(FuzzedDataProvider& data) {
  const double epsilon = parameter(data), delta = parameter(data), sensitivity = parameter(data);
  switch (data.ConsumeIntegralInRange<int>(0, 4)) {
    case 0: check(is_probability(discrete::gaussian_delta(parameter(data), sensitivity, epsilon)), "gaussian_delta outside [0, 1]"); return;
    case 1: {
      const double sigma = discrete::analytic_gaussian_sigma(epsilon, delta, sensitivity);
      check(sigma > 0 && discrete::gaussian_delta(sigma, sensitivity, epsilon) <= delta, "an analytic Gaussian sigma that fails its delta");
      return;
    }
    case 2: {
      const auto integer_sensitivity = static_cast<std::int64_t>(std::min<std::uint64_t>(count(data), 1u << 20));
      check(is_probability(discrete::discrete_gaussian_delta(parameter(data), integer_sensitivity, epsilon)),
            "discrete_gaussian_delta outside [0, 1]");
      return;
    }
    case 3: {
      SecureNoiseParams params{.distribution = choice<SecureDistribution>(data, 2), .epsilon = epsilon, .delta = delta,
                               .sensitivity = sensitivity, .inputs_on_grid = data.ConsumeBool()};
      const SecureNoisePlan plan = secure_noise_plan(params, count(data));
      check(plan.granularity > 0 && plan.effective_scale > 0 && std::isfinite(plan.effective_scale),
            "a secure noise plan without a positive finite scale");
      return;
    }
    default: {
      // One p, and either no repairs over up to 64 queries (one calibration) or repairs over at
      // most 3 (one calibration per budget share, each over 3 coordinates): p = 0 (a grid of p)
      // and repairs over many queries cost seconds, the unit tests' job.
      LinfAnswerParams params{.epsilon = epsilon, .delta = delta, .beta = parameter(data), .p = parameter(data),
                              .max_repairs = count(data), .repair_with_sparse_vector = data.ConsumeBool()};
      if (params.p == 0) params.p = 2;
      const std::uint64_t queries = std::min<std::uint64_t>(count(data), params.repair_with_sparse_vector ? 3 : 64);
      const LinfAnswerPlan plan = plan_linf_answers(params, queries);
      const double epsilon_total = plan.epsilon_noise + plan.check.epsilon + plan.epsilon_repair;
      const double delta_total = plan.delta_noise + plan.check.delta + plan.delta_repair;
      check(plan.sigma > 0 && epsilon_total <= epsilon * (1 + 1e-15) && delta_total <= delta * (1 + 1e-15), "an l_inf plan that splits past its epsilon or delta");
      return;
    }
  }
}

void run(FuzzedDataProvider& data, int entry, Context& context) {
  const std::span<const double> utilities(kUtilities);
  switch (entry) {
    case 0: check_index(select(context, utilities, selection_params(data)).index, utilities); return;
    case 1: {
      const std::vector<float> floats(kUtilities.begin(), kUtilities.end());
      check_index(select(context, std::span<const float>(floats), selection_params(data)).index, utilities);
      return;
    }
    case 2: {
      dpselect::Release release = context.begin_release(selection_params(data));
      check_index(release.finish(release.evaluate(utilities)).index, utilities);
      return;
    }
    case 3: {
      TopKParams params{.selection = selection_params(data), .k = count(data)};
      const TopKSelection selection = select_top_k(context, utilities, params);
      const std::set<std::uint64_t> distinct(selection.indices.begin(), selection.indices.end());
      check(selection.indices.size() == params.k && distinct.size() == params.k, "top-k: not k distinct indices");
      for (const std::uint64_t index : selection.indices) check_index(index, utilities);
      return;
    }
    case 4: {
      // Every row holds a candidate that is not excluded, whatever the shape (the data stay valid),
      // and rows x cols never reaches past the array.
      static const std::vector<double> matrix{1.0, 3.0, 2.0, 0.5, 4.0, 2.5};
      const std::uint64_t cols = data.ConsumeBool() ? 3 : count(data);
      const std::uint64_t rows = cols == 0 ? count(data) : matrix.size() / cols;
      const RowsSelection selection =
          select_rows(context, HostMatrix<const double>{matrix.data(), rows, cols}, selection_params(data));
      check(selection.selections.size() == rows, "rows: not one pick per row");
      for (const Selection& each : selection.selections) check(each.index < cols, "rows: an index outside its row");
      return;
    }
    case 5: {
      const std::uint64_t releases = std::min<std::uint64_t>(count(data), 8);
      const RowsSelection selection = select_repeated(context, utilities, selection_params(data), releases);
      check(selection.selections.size() == releases, "repeated: not one pick per release");
      for (const Selection& each : selection.selections) check_index(each.index, utilities);
      return;
    }
    case 6:
    case 7:
    case 8: {
      PricingParams params;
      params.epsilon = parameter(data);
      params.neighbours = choice<BidderNeighbours>(data, 2);
      params.max_bidders = count(data);
      params.mechanism = choice<Mechanism>(data, 3);
      params.grid_sampler = choice<GridSampler>(data, 3);
      params.backend = Backend::Cpu;
      const Bids bids{std::span<const double>(kBids)};
      if (entry == 6) {
        const PriceGrid grid{.min = parameter(data), .max = parameter(data), .step = parameter(data)};
        // Work grows with the grid for per-price noise: the harness keeps it to a few thousand
        // prices (validation of larger grids is the unit tests').
        if (std::isfinite(grid.min) && std::isfinite(grid.max) && grid.step > 0 && (grid.max - grid.min) / grid.step > 4096) return;
        const PriceSelection selection = select_price(context, bids, grid, params);
        check(selection.price >= grid.min && selection.price <= grid.max, "a grid price outside the grid");
      } else if (entry == 7) {
        std::vector<double> prices;
        for (std::size_t i = data.ConsumeIntegralInRange<std::size_t>(0, 4); i > 0; --i) prices.push_back(parameter(data));
        const PriceSelection selection = select_price(context, bids, std::span<const double>(prices), params);
        check(std::find(prices.begin(), prices.end(), selection.price) != prices.end(), "a price not among the candidates");
      } else {
        const PriceRange range{.min = parameter(data), .max = parameter(data)};
        const PriceSelection selection = select_price(context, bids, range, params);
        check(selection.price >= range.min && selection.price <= range.max, "a price outside the range");
      }
      return;
    }
    case 9:
    case 10: {
      QuantilesParams params;
      params.base.range = QuantileRange{.lower = parameter(data), .upper = parameter(data)};
      params.base.epsilon = parameter(data);
      params.base.neighbours = choice<RecordNeighbours>(data, 2);
      params.base.max_points = std::min<std::uint64_t>(count(data), 64);
      params.base.backend = Backend::Cpu;
      const QuantileData quantile_data(std::span<const double>(kQuantileData), params.base.range);
      if (entry == 9) {
        const QuantileRelease release = select_quantile(context, quantile_data, parameter(data), params.base);
        check(release.value >= params.base.range.lower && release.value <= params.base.range.upper,
              "a quantile outside the range");
      } else {
        params.method = choice<QuantilesMethod>(data, 4);
        params.delta = parameter(data);
        std::vector<double> qs;
        for (std::size_t i = data.ConsumeIntegralInRange<std::size_t>(0, 4); i > 0; --i) qs.push_back(parameter(data));
        const QuantilesRelease release = select_quantiles(context, quantile_data, qs, params);
        check(release.values.size() == qs.size() && std::is_sorted(release.values.begin(), release.values.end()),
              "quantiles: not one sorted value per q");
      }
      return;
    }
    case 11:
    case 12: {
      SparseVectorParams params;
      params.epsilon = parameter(data);
      params.delta = data.ConsumeBool() ? parameter(data) : 0.0;
      params.sensitivity = parameter(data);
      params.threshold = parameter(data);
      params.max_positives = count(data);
      params.numeric = data.ConsumeBool();
      params.value_bound = data.ConsumeBool() ? parameter(data) : 0.0;
      params.algorithm = choice<SparseVectorAlgorithm>(data, 2);
      params.monotone = data.ConsumeBool();
      if (entry == 11) {
        SparseVector sparse_vector(context, params);
        for (const double answer : kAnswers) {
          if (sparse_vector.halted()) break;
          const SparseVectorAnswer result = sparse_vector.answer(answer);
          if (result.value) check(std::isfinite(*result.value), "a numeric answer that is not finite");
        }
      } else {
        const SparseVectorBatch batch = sparse_vector_batch(context, std::span<const double>(kAnswers), params);
        check(batch.above.size() <= params.max_positives, "more above answers than allowed");
      }
      return;
    }
    case 13: {
      const auto distribution = choice<NoiseDistribution>(data, 3);  // drawn first: saved inputs keep their meaning
      NoiseVectorParams params = noise_parameters<NoiseVectorParams>(data);
      params.distribution = distribution;
      params.p = parameter(data);
      params.backend = Backend::Cpu;
      std::vector<double> values = kAnswers;
      add_noise(context, std::span<double>(values), params);
      check(std::all_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); }), "noise that is not finite");
      return;
    }
    case 14: {
      const auto distribution = choice<SecureDistribution>(data, 2);
      SecureNoiseParams params = noise_parameters<SecureNoiseParams>(data);
      params.distribution = distribution;
      params.inputs_on_grid = data.ConsumeBool();
      std::vector<double> values = kAnswers;
      add_secure_noise(context, std::span<double>(values), params);
      check(std::all_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); }), "secure noise that is not finite");
      return;
    }
    case 15: generalized_gaussian_calculators(data); return;
    case 16: accounting_calculators(data); return;
    case 17: calibrations_and_plans(data); return;
    case 18: {
      QuantilesParams params;
      params.base.range = QuantileRange{.lower = parameter(data), .upper = parameter(data)};
      params.base.epsilon = parameter(data);
      params.base.neighbours = choice<RecordNeighbours>(data, 2);
      params.base.max_points = count(data);
      params.method = choice<QuantilesMethod>(data, 4);
      params.delta = parameter(data);
      const double beta = parameter(data);
      std::vector<double> qs;
      for (std::size_t i = data.ConsumeIntegralInRange<std::size_t>(0, 4); i > 0; --i) qs.push_back(parameter(data));
      const double alpha = data.ConsumeBool() ? quantile_rank_error_bound(params.base, qs.empty() ? 0.5 : qs[0], beta)
                                              : quantiles_rank_error_bound(params, qs, beta);
      check(alpha >= 0, "a rank error bound that is negative or NaN");
      return;
    }
    default: return;
  }
}

// The refusals that depend on the data as well as on the parameters, which the documented
// contract (context.hpp, charge_to) lets come after the charge: a utility beyond a small
// utility_bound, found during the pass, and the floating-point slack checked from the largest
// |utility| read when no public bound was given (select.hpp), and a query answer beyond a small
// value_bound (sparse_vector.hpp: checked as each answer comes), and a k beyond the candidates
// that are not excluded (-inf), counted during the pass (top_k.hpp).
bool depends_on_data(std::string_view message) {
  if (message.find("number of candidates that are not excluded") != std::string_view::npos) return true;
  return message.find("utilities[") != std::string_view::npos || message.find("query value") != std::string_view::npos ||
         message.find("the floating-point slack would reach epsilon") != std::string_view::npos;
}

template <class Error>
void refused(const Error& error, double spent_before, double spent_after, std::uint64_t stream_before,
             std::uint64_t stream_after) {
  const std::string_view message = error.what();
  check(dpselect::fuzz::printable_one_line(message), "an error message that is not one printable line");
  if (depends_on_data(message)) return;
  if (spent_after != spent_before) dpselect::fuzz::fail(std::string("a refusal after a charge: ") + error.what());
  if (stream_after != stream_before + 1) dpselect::fuzz::fail(std::string("a refusal that drew a stream: ") + error.what());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  FuzzedDataProvider data(bytes, size);
  // Entries 0-14 as the first version of this target drew them (byte % 15) for bytes below 225,
  // which keeps the meaning of every saved regression input; the entries added later take the
  // top 31 bytes (8 of the seed corpus's 330 inputs changed entry, which only reshuffles seeds).
  const std::uint8_t entry_byte = data.ConsumeIntegral<std::uint8_t>();
  const int entry = entry_byte >= 225 ? 15 + (entry_byte - 225) % 4 : entry_byte % 15;
  Context context = Context::with_fixed_seed(7, data.ConsumeBool() ? Generator::chacha20 : Generator::philox);
  // A tiny budget some of the time, so that BudgetExceeded is among the refusals.
  const PrivacyBound budget = data.ConsumeBool() ? PrivacyBound{.epsilon = 1e9, .delta = 0.5}
                                                 : PrivacyBound{.epsilon = 0.01, .delta = 1e-12};
  auto accountant = std::make_shared<PrivacyAccountant>(budget);

  const std::uint64_t stream_before = probe_stream(context, accountant);
  const double spent_before = accountant->spent().epsilon;
  try {
    run(data, entry, context);
  } catch (const InvalidArgument& error) {
    const double spent_after = accountant->spent().epsilon;
    refused(error, spent_before, spent_after, stream_before, probe_stream(context, accountant));
  } catch (const UsageError& error) {
    const double spent_after = accountant->spent().epsilon;
    refused(error, spent_before, spent_after, stream_before, probe_stream(context, accountant));
  } catch (const BudgetExceeded& error) {
    const double spent_after = accountant->spent().epsilon;
    refused(error, spent_before, spent_after, stream_before, probe_stream(context, accountant));
  }
  return 0;
}
