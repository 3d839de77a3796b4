// SPDX-License-Identifier: Apache-2.0
// The library's audits of its quantile mechanisms (audit.hpp, dpselect/quantiles.hpp): the single
// quantile under both neighbour relations (the exponential mechanism, and permute-and-flip on a
// resolution grid), JointExp, recursive splitting, and independent releases
// under basic and under zCDP composition (claimed (1, 1e-5)).
//
// Every target works on a small public range [0, R] (R = 8 or 12) and a few integer data values,
// epsilon = 1. Output key: the bin (k - 1, k] of width 1 of each released value, k = ceil(value)
// (0 for the value 0 itself, a single grid point), the values' bins as the digits of a base-(R + 1)
// number, in the released (non-decreasing) order. A bin lies inside one data interval, so the
// mechanisms' probabilities of these events follow in closed form from the data intervals.
//
// Each pair (D, D') was chosen by an exhaustive search over datasets of 1 to 4 values on the
// integer points inside the range and each of their neighbours (one value replaced, or one added),
// for q = 1/2 and the level pairs (1/4, 3/4), (1/2, 3/4), (1/3, 2/3), maximizing the largest
// |ln(P[M(D) in E] / P[M(D') in E])| over the events E whose probability is at least 0.05 (single
// quantile) or 0.02 (pairs of bins) on both inputs, so that the test run counts each often. The
// (Permute-and-flip's pairs: the same search over the integer grid of [0, 8], every grid point an
// event.) The comment at each target states that exact ratio, from the exponential mechanism's
// closed form on a continuous range (permute-and-flip's law on the grid) (tests/reference/quantile_audit_references.py recomputes them): the grid of
// 2^40 + 1 points changes the interval lengths, and so the probabilities, by a relative 1e-11 at
// most. The audit's lower bound stays below it (up to its confidence).
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "dpselect/audit.hpp"
#include "dpselect/quantiles.hpp"

namespace dpselect::audit {
namespace {

constexpr double kEpsilon = 1.0;

// The key of one release's values on the range [0, upper] (see the file's comment).
OutputKey key_of(std::span<const double> values, double upper) {
  const auto base = static_cast<OutputKey>(upper) + 1;
  OutputKey key = 0;
  for (const double value : values) key = key * base + static_cast<OutputKey>(std::ceil(value));
  return key;
}

// The two neighbouring datasets of a target, prepared once over its range.
struct NeighbouringData {
  QuantileData d;
  QuantileData d_prime;
};

NeighbouringData prepared(const std::vector<double>& d, const std::vector<double>& d_prime,
                          const QuantileRange& range) {
  return {QuantileData(std::span<const double>(d), range), QuantileData(std::span<const double>(d_prime), range)};
}

std::string data_text(const std::vector<double>& values) {
  std::string text = "{";
  for (std::size_t i = 0; i < values.size(); ++i) {
    text += (i == 0 ? "" : ", ") + std::to_string(static_cast<long long>(values[i]));
  }
  return text + "}";
}

std::string neighbours_text(const std::vector<double>& d, const std::vector<double>& d_prime, double upper) {
  return data_text(d) + " vs " + data_text(d_prime) + " on [0, " + std::to_string(static_cast<int>(upper)) + "]";
}

// select_quantile on D or D'; key = the bin of the value. Permute-and-flip runs on the range's
// integers (resolution 1), where the bin of a value is the value itself.
AuditTarget single_target(RecordNeighbours neighbours, double q, std::vector<double> d, std::vector<double> d_prime,
                          double upper, Mechanism mechanism = Mechanism::exponential) {
  AuditTarget target;
  const bool permute_and_flip = mechanism == Mechanism::permute_and_flip;
  target.mechanism = std::string("quantile (single") + (permute_and_flip ? ", permute-and-flip, " : ", ") +
                     std::string(to_string(neighbours)) + ")";
  target.neighbours = neighbours_text(d, d_prime, upper);
  target.claimed_epsilon = kEpsilon;
  QuantileParams params;
  params.range = {0.0, upper};
  if (permute_and_flip) params.range.resolution = 1.0;
  params.mechanism = mechanism;
  params.epsilon = kEpsilon;
  params.neighbours = neighbours;
  params.max_points = 8;  // public: the slack is checked from it, before any data is read
  params.backend = Backend::Cpu;
  target.run = [params, q, upper, data = prepared(d, d_prime, params.range)](
                   bool on_d_prime, Context& context, std::uint64_t runs, OutputCounts& counts) {
    const QuantileData& values = on_d_prime ? data.d_prime : data.d;
    for (std::uint64_t run = 0; run < runs; ++run) {
      const double value = select_quantile(context, values, q, params).value;
      ++counts[key_of(std::span(&value, 1), upper)];
    }
  };
  return target;
}

// select_quantiles on D or D'; key = the bins of the values, in order.
AuditTarget quantiles_target(QuantilesMethod method, RecordNeighbours neighbours, double delta,
                             std::vector<double> qs, std::vector<double> d, std::vector<double> d_prime,
                             double upper) {
  AuditTarget target;
  target.mechanism = std::string("quantiles (") + std::string(to_string(method)) + ", " +
                     std::string(to_string(neighbours)) + ", m = " + std::to_string(qs.size()) + ")";
  target.neighbours = neighbours_text(d, d_prime, upper);
  target.claimed_epsilon = kEpsilon;
  target.claimed_delta = delta;
  QuantilesParams params;
  params.base.range = {0.0, upper};
  params.base.epsilon = kEpsilon;
  params.base.neighbours = neighbours;
  params.base.max_points = 8;
  params.base.backend = Backend::Cpu;
  params.method = method;
  params.delta = delta;
  target.run = [params, qs = std::move(qs), upper, data = prepared(d, d_prime, params.base.range)](
                   bool on_d_prime, Context& context, std::uint64_t runs, OutputCounts& counts) {
    const QuantileData& values = on_d_prime ? data.d_prime : data.d;
    for (std::uint64_t run = 0; run < runs; ++run) {
      ++counts[key_of(select_quantiles(context, values, qs, params).values, upper)];
    }
  };
  return target;
}

}  // namespace

std::vector<AuditTarget> quantile_audits() {
  std::vector<AuditTarget> targets;
  // Single quantile, q = 1/2, one record replaced (Delta = 1, P(t) ∝ e^{-|#{x_i < t} - 2| / 2}):
  //   D = {1, 2, 10, 11}, D' = {2, 10, 11, 11} on [0, 12]. The replaced record moves from 1 to 11:
  //   every t in (1, 11] has one value fewer below it, which brings (10, 11] to the target (up
  //   1/2 in scale) and takes (1, 10] away from it (down 1/2), so both the event and the
  //   normaliser move. Event (10, 11]: P_D = e^{-1/2} / (2 e^{-1} + 2 e^{-1/2} + 8) = 0.06097,
  //   P_D' = 1 / (3 e^{-1} + 8 e^{-1/2} + 1) = 0.14376; ln ratio = 0.8579.
  targets.push_back(single_target(RecordNeighbours::replace_one_record, 0.5, {1, 2, 10, 11}, {2, 10, 11, 11}, 12));
  // Single quantile, q = 1/2, one record added (Delta = max(q, 1 - q) = 1/2, scale eps / (2 Delta)
  //   = 1): D = {2, 3, 9, 10}, D' = D + {10} on [0, 12]. The target moves from 2 to 2.5 and the
  //   added record sits at the top, so (9, 10], 1/2 short of the target on D, meets it on D'
  //   ... while the long middle interval (3, 9] moves from the target to 1/2 off it.
  //   Event (9, 10]: P_D = 0.05055, P_D' = 0.12643; ln ratio = 0.9167.
  targets.push_back(single_target(RecordNeighbours::add_or_remove_record, 0.5, {2, 3, 9, 10}, {2, 3, 9, 10, 10}, 12));
  // Permute-and-flip, q = 1/2, on the integers of [0, 8] (resolution 1; McKenna & Sheldon 2020 at
  //   scale eps / (2 Delta)), utility -dist(q n, [#{x_i < t}, #{x_i <= t}]) at each point; the law of
  //   the algorithm itself (random order, accept with e^{s (u - u*)}). One record replaced (s = 1/2):
  //   D = {0, 1}, D' = {1, 8}. Event {0}: P_D = 0.16834, P_D' = 0.06739; ln ratio = 0.9155.
  targets.push_back(single_target(RecordNeighbours::replace_one_record, 0.5, {0, 1}, {1, 8}, 8,
                                  Mechanism::permute_and_flip));
  //   One record added (s = 1): D = {0, 0, 5, 6}, D' = D + {6}. Event {6}: P_D = 0.05080,
  //   P_D' = 0.12372; ln ratio = 0.8901.
  targets.push_back(single_target(RecordNeighbours::add_or_remove_record, 0.5, {0, 0, 5, 6}, {0, 0, 5, 6, 6}, 8,
                                  Mechanism::permute_and_flip));
  // JointExp, q = (1/4, 3/4), one record replaced (Delta = 2, scale eps / 4; Gillenwater, Joseph &
  //   Kulesza 2021): D = {1, 1, 2, 2}, D' = {1, 2, 2, 7} on [0, 8]. Event (o_1, o_2) in ((0, 1],
  //   (1, 2]): P_D = 0.05634, P_D' = 0.02268; ln ratio = 0.9100.
  targets.push_back(quantiles_target(QuantilesMethod::joint_exponential, RecordNeighbours::replace_one_record, 0.0,
                                     {0.25, 0.75}, {1, 1, 2, 2}, {1, 2, 2, 7}, 8));
  // Independent releases, basic composition (eps / 2 each, Delta = 1: scale 1/4), q = (1/2, 3/4),
  //   one record replaced: D = {1, 2, 3, 3}, D' = {2, 3, 3, 7} on [0, 8]. The sorted pair of bins
  //   (the library releases the values sorted), event ((1, 2], (2, 3]): P_D = 0.03893,
  //   P_D' = 0.02034; ln ratio = 0.6489 (each release keeps well inside its eps / 2 = 0.5).
  targets.push_back(quantiles_target(QuantilesMethod::independent_basic, RecordNeighbours::replace_one_record, 0.0,
                                     {0.5, 0.75}, {1, 2, 3, 3}, {2, 3, 3, 7}, 8));
  // Independent releases under zCDP, claimed (1, 1e-5): for m = 2 the accountant's best theorem
  //   gives each release eps / 2 (basic composition beats zCDP's conversion there), so the pair
  //   and the exact loss are the basic target's, 0.6489, inside the pure claim alone.
  targets.push_back(quantiles_target(QuantilesMethod::independent_zcdp, RecordNeighbours::replace_one_record, 1e-5,
                                     {0.5, 0.75}, {1, 2, 3, 3}, {2, 3, 3, 7}, 8));
  // Recursive splitting, q = (1/3, 2/3), one record added (Kaplan, Schnapp & Stemmer 2022: 2
  //   levels of eps / 2, each node the add/remove single-quantile mechanism): D = {4, 5, 7, 7},
  //   D' = D + {6} on [0, 8]. The root releases q = 2/3 of all the values, then its left node q = 1/2
  //   of those below the root's output; the added value moves both. Event ((5, 6], (6, 7]):
  //   P_D = 0.02616, P_D' = 0.05209 (the root's output integrated over its interval, 24-point
  //   Gauss-Legendre per bin); ln ratio = 0.6886.
  targets.push_back(quantiles_target(QuantilesMethod::recursive_splitting, RecordNeighbours::add_or_remove_record,
                                     0.0, {1.0 / 3.0, 2.0 / 3.0}, {4, 5, 7, 7}, {4, 5, 6, 7, 7}, 8));
  return targets;
}

}  // namespace dpselect::audit
