// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the mechanisms themselves on small adversarial arrays: 1 to 16 values
// drawn from NaN, +-inf, denormals, +-0, the extremes and any double (fuzz_support.hpp), fed with
// valid parameters (every mechanism, both generators, monotone or not, with or without a public
// utility bound) to select (float and double), select_top_k, select_rows, select_repeated,
// select_price (grid, list, range), select_quantile, select_quantiles and sparse_vector_batch,
// on the CPU backend and a fixed-seed context charged to an accountant.
//
// Invariants:
// - a release returns a valid answer: an index inside the range whose utility is not -inf (an
//   excluded candidate), distinct top-k indices, a price among the candidates, quantiles on the
//   grid inside the range and sorted, one answer per query at most;
// - or it throws InvalidArgument or UsageError with one printable line;
// - with valid data (no NaN, no +inf, nothing beyond the public bound, not every candidate
//   excluded) an error is never preceded by a charge. With invalid data the documented contract
//   (context.hpp, charge_to) allows the charge: whether a release failed depends on the data.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <span>
#include <vector>

#include "dpselect/dpselect.hpp"
#include "fuzz_support.hpp"

namespace {

using namespace dpselect;
using dpselect::fuzz::check;

constexpr double kEpsilons[] = {0.05, 1.0, 8.0};

// Whether a utility array is one a release must accept (select.hpp's rules; a finite utility
// whose score overflows once scaled by epsilon / Delta is refused too, as data).
bool utilities_valid(std::span<const double> utilities, double bound) {
  bool any_candidate = false;
  for (const double u : utilities) {
    if (std::isnan(u) || u == HUGE_VAL) return false;
    if (u == -HUGE_VAL) continue;
    if (bound > 0 && std::fabs(u) > bound) return false;
    if (std::fabs(u) > 1e300) return false;  // its scaled score may overflow (refused as data)
    // Without a public bound, the floating-point slack is checked from the largest |utility| read
    // (select.hpp: "the floating-point slack would reach epsilon"), after the charge.
    if (bound == 0 && std::fabs(u) > 1e6) return false;
    any_candidate = true;
  }
  return any_candidate;
}

void check_index(std::uint64_t index, std::span<const double> utilities) {
  check(index < utilities.size(), "an index outside the range");
  check(utilities[index] != -HUGE_VAL, "an excluded (-inf) candidate was selected");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  FuzzedDataProvider data(bytes, size);
  const int entry = data.ConsumeIntegralInRange<int>(0, 9);
  const Generator generator = data.ConsumeBool() ? Generator::chacha20 : Generator::philox;
  Context context = Context::with_fixed_seed(data.ConsumeIntegral<std::uint64_t>(), generator);
  auto accountant = std::make_shared<PrivacyAccountant>(PrivacyBound{.epsilon = 1e6, .delta = 0.5});
  context.charge_to(accountant);

  SelectionParams params;
  params.mechanism = static_cast<Mechanism>(data.ConsumeIntegralInRange<int>(0, 2));
  params.epsilon = kEpsilons[data.ConsumeIntegralInRange<std::size_t>(0, std::size(kEpsilons) - 1)];
  params.sensitivity = 1.0;
  params.monotone = data.ConsumeBool();
  params.utility_bound = data.ConsumeBool() ? 1e6 : 0.0;
  params.backend = Backend::Cpu;

  const std::size_t n = data.ConsumeIntegralInRange<std::size_t>(1, 16);
  std::vector<double> values;
  for (std::size_t i = 0; i < n; ++i) values.push_back(dpselect::fuzz::adversarial_double(data));
  std::vector<float> floats(values.begin(), values.end());
  const std::vector<double> widened(floats.begin(), floats.end());  // what the float path sees
  const std::span<const double> doubles(values);

  const double spent_before = accountant->spent().epsilon;
  bool data_valid = true;
  try {
    switch (entry) {
      case 0: {  // select, double
        data_valid = utilities_valid(doubles, params.utility_bound);
        check_index(select(context, doubles, params).index, doubles);
        break;
      }
      case 1: {  // select, float
        data_valid = utilities_valid(widened, params.utility_bound);
        check_index(select(context, std::span<const float>(floats), params).index, widened);
        break;
      }
      case 2: {  // top-k (one-shot Gumbel: the exponential mechanism per pick)
        TopKParams top_k{.selection = params, .k = data.ConsumeIntegralInRange<std::uint64_t>(1, n)};
        // k beyond the candidates that are not excluded is found during the pass, like a NaN.
        const auto candidates = static_cast<std::uint64_t>(
            std::count_if(values.begin(), values.end(), [](double u) { return u != -HUGE_VAL; }));
        data_valid = utilities_valid(doubles, params.utility_bound) && top_k.k <= candidates;
        top_k.selection.mechanism = Mechanism::exponential;
        const TopKSelection selection = select_top_k(context, doubles, top_k);
        check(selection.indices.size() == top_k.k, "top-k released another number of indices than k");
        const std::set<std::uint64_t> distinct(selection.indices.begin(), selection.indices.end());
        check(distinct.size() == selection.indices.size(), "top-k released an index twice");
        for (const std::uint64_t index : selection.indices) check(index < n, "a top-k index outside the range");
        break;
      }
      case 3: {  // rows: the array as a matrix of 1, 2 or 4 columns (when they divide it)
        std::uint64_t cols = std::uint64_t{1} << data.ConsumeIntegralInRange<int>(0, 2);
        if (n % cols != 0) cols = 1;
        const std::uint64_t rows = n / cols;
        data_valid = true;
        for (std::uint64_t row = 0; row < rows; ++row) {
          data_valid = data_valid && utilities_valid(doubles.subspan(row * cols, cols), params.utility_bound);
        }
        const RowsSelection selection = select_rows(context, HostMatrix<const double>{values.data(), rows, cols}, params);
        check(selection.selections.size() == rows, "rows released another number of picks than rows");
        for (std::uint64_t row = 0; row < rows; ++row) {
          check_index(selection.selections[row].index, doubles.subspan(row * cols, cols));
        }
        break;
      }
      case 4: {  // repeated releases over one row
        data_valid = utilities_valid(doubles, params.utility_bound);
        const std::uint64_t count = data.ConsumeIntegralInRange<std::uint64_t>(1, 3);
        const RowsSelection selection = select_repeated(context, doubles, params, count);
        check(selection.selections.size() == count, "another number of releases than asked for");
        for (const Selection& each : selection.selections) check_index(each.index, doubles);
        break;
      }
      case 5:
      case 6:
      case 7: {  // pricing: the array as bids (Bids refuses what is not finite and >= 0)
        PricingParams pricing;
        pricing.epsilon = params.epsilon;
        pricing.mechanism = params.mechanism;
        pricing.neighbours = data.ConsumeBool() ? BidderNeighbours::add_or_remove_bidder : BidderNeighbours::change_one_bid;
        pricing.max_bidders = 32;
        pricing.backend = Backend::Cpu;
        data_valid = std::all_of(values.begin(), values.end(), [](double b) { return std::isfinite(b) && b >= 0; });
        const Bids bids(doubles);
        if (entry == 5) {
          const PriceGrid grid{.min = 0.5, .max = 8.0, .step = 0.5};
          const PriceSelection selection = select_price(context, bids, grid, pricing);
          check(selection.price >= grid.min && selection.price <= grid.max, "a grid price outside the grid");
        } else if (entry == 6) {
          const std::vector<double> prices{0.25, 1.0, 3.0, 1e300};
          const PriceSelection selection = select_price(context, bids, std::span<const double>(prices), pricing);
          check(std::find(prices.begin(), prices.end(), selection.price) != prices.end(), "a price not among the candidates");
        } else {
          const PriceRange range{.min = 0.0, .max = 16.0};
          const PriceSelection selection = select_price(context, bids, range, pricing);
          check(selection.price >= range.min && selection.price <= range.max, "a price outside the range");
        }
        break;
      }
      case 8: {  // quantiles: the array as data (NaN refused, infinities clipped to the range)
        data_valid = std::none_of(values.begin(), values.end(), [](double x) { return std::isnan(x); });
        QuantilesParams quantiles;
        quantiles.base.range = QuantileRange{.lower = -4.0, .upper = 4.0};
        quantiles.base.epsilon = params.epsilon;
        quantiles.base.max_points = 16;
        quantiles.base.backend = Backend::Cpu;
        quantiles.base.neighbours = data.ConsumeBool() ? RecordNeighbours::replace_one_record : RecordNeighbours::add_or_remove_record;
        const QuantileData quantile_data(doubles, quantiles.base.range);
        if (data.ConsumeBool()) {
          const QuantileRelease release = select_quantile(context, quantile_data, data.ConsumeProbability<double>(), quantiles.base);
          check(release.value >= -4.0 && release.value <= 4.0, "a quantile outside the range");
        } else {
          quantiles.method = static_cast<QuantilesMethod>(data.ConsumeIntegralInRange<int>(0, 3));
          quantiles.delta = quantiles.method == QuantilesMethod::independent_zcdp ? 1e-6 : 0.0;
          const std::vector<double> qs{0.1, 0.5, 0.9};
          const QuantilesRelease release = select_quantiles(context, quantile_data, qs, quantiles);
          check(release.values.size() == qs.size(), "another number of quantiles than asked for");
          check(std::is_sorted(release.values.begin(), release.values.end()), "quantiles out of order");
          for (const double value : release.values) check(value >= -4.0 && value <= 4.0, "a quantile outside the range");
        }
        break;
      }
      case 9: {  // the sparse vector technique over the array as query answers
        data_valid = std::all_of(values.begin(), values.end(), [](double x) { return std::isfinite(x); });
        SparseVectorParams sparse;
        sparse.epsilon = params.epsilon;
        sparse.sensitivity = 1.0;
        sparse.threshold = 1.0;
        sparse.max_positives = data.ConsumeIntegralInRange<std::uint64_t>(1, 3);
        sparse.numeric = data.ConsumeBool();
        sparse.value_bound = sparse.numeric ? 1e6 : 0.0;
        sparse.monotone = params.monotone;
        const SparseVectorBatch batch = sparse_vector_batch(context, doubles, sparse);
        check(batch.report.queries <= n && batch.above.size() <= sparse.max_positives,
              "more answers than queries, or more above the threshold than allowed");
        for (const SparseVectorAbove& above : batch.above) {
          check(above.index < batch.report.queries, "an above answer to a query not answered");
          check(above.value.has_value() == sparse.numeric, "a value where none belongs, or none where one does");
          if (above.value) check(std::isfinite(*above.value), "a numeric answer that is not finite");
        }
        break;
      }
      default: break;
    }
  } catch (const InvalidArgument& error) {
    check(dpselect::fuzz::printable_one_line(error.what()), "an error message that is not one printable line");
    if (data_valid && accountant->spent().epsilon != spent_before) {
      dpselect::fuzz::fail(std::string("an error after a charge, on valid data: ") + error.what());
    }
  } catch (const UsageError& error) {
    check(dpselect::fuzz::printable_one_line(error.what()), "an error message that is not one printable line");
    if (data_valid && accountant->spent().epsilon != spent_before) {
      dpselect::fuzz::fail(std::string("an error after a charge, on valid data: ") + error.what());
    }
  }
  return 0;
}
