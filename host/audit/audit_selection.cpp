// SPDX-License-Identifier: Apache-2.0
// The library's audits of its selection mechanisms (audit.hpp).
//
// Every selection mechanism at its documented claim (types.hpp, top_k.hpp, pricing.hpp,
// rows.hpp), on small ranges (2-8 candidates), epsilon = 1 per claim and Delta = 1 (pricing:
// Delta = the largest price). The single-pick mechanisms run in batches of select_repeated: on the
// GPU when one is usable (10^8 releases per input are then practical), on all CPU cores
// otherwise; top-k, pricing and rows run one release per call on the CPU.
//
// Neighbour patterns, written as (D -> D'):
//   "half up / half down": candidate 0 moves up by Delta while all the others move down by Delta.
//       Valid only for the general (non-monotone) claims; it is the worst case of all three noisy
//       maxima: candidate 0 gains 2 Delta on every rival at once.
//   "one utility +Delta": candidate 0 moves up by Delta, the others stay. Monotone-consistent.
//   "all +Delta": every utility moves up by Delta. Monotone-consistent; a noisy max is invariant
//       under a common shift, so the true loss is exactly 0 (a check that nothing depends on the
//       utilities' absolute level).
// The monotone claims (scale Delta/eps) are audited on monotone-consistent patterns only: on
// "half up / half down" they are not private (see the negative controls in
// tests/audit_selection_test.cpp).
//
// Each target's comment states the exact worst-case ratio ln(P[M(D) in E] / P[M(D') in E]) over
// its events (EM and top-k: closed forms from the softmax; permute-and-flip and Laplace noisy max:
// numerical integration of P[i wins] = int f(x - u_i) prod_{j != i} F(x - u_j) dx, Simpson's rule
// on 40 000 intervals). The audit's lower bound stays below that value (up to its confidence).
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "dpselect/audit.hpp"
#include "dpselect/pricing.hpp"
#include "dpselect/rows.hpp"
#include "dpselect/select.hpp"
#include "dpselect/top_k.hpp"

namespace dpselect::audit {
namespace {

// Releases per select_repeated call: every release of a call is held until it finishes.
constexpr std::uint64_t kReleasesPerBatch = std::uint64_t{1} << 16;
static_assert(kAuditChunk % kReleasesPerBatch == 0, "run_audit's chunks must not split a batch (AuditTarget::run)");

constexpr double kEpsilon = 1.0;
constexpr double kDelta = 1.0;

// D = (0, Delta, ..., Delta), D' = (Delta, 0, ..., 0): candidate 0 up, every other one down.
std::pair<std::vector<double>, std::vector<double>> half_up_half_down(std::size_t n) {
  std::vector<double> d(n, kDelta);
  std::vector<double> d_prime(n, 0.0);
  d[0] = 0.0;
  d_prime[0] = kDelta;
  return {d, d_prime};
}

// D = (0, Delta, ..., Delta), D' = (Delta, ..., Delta): candidate 0 up, the others unchanged.
std::pair<std::vector<double>, std::vector<double>> one_up(std::size_t n) {
  std::vector<double> d(n, kDelta);
  d[0] = 0.0;
  return {d, std::vector<double>(n, kDelta)};
}

// D = (0, Delta, 2 Delta, ...), D' = D + Delta.
std::pair<std::vector<double>, std::vector<double>> all_up(std::size_t n) {
  std::vector<double> d(n);
  std::vector<double> d_prime(n);
  for (std::size_t i = 0; i < n; ++i) {
    d[i] = static_cast<double>(i % 3) * kDelta;
    d_prime[i] = d[i] + kDelta;
  }
  return {d, d_prime};
}

SelectionParams params_for(Mechanism mechanism, double epsilon, bool monotone) {
  SelectionParams params;
  params.mechanism = mechanism;
  params.epsilon = epsilon;
  params.sensitivity = kDelta;
  params.monotone = monotone;
  params.utility_bound = 16.0;  // public bound: data-independent slack, checked before any work
  params.backend = Backend::Cpu;
  return params;
}

std::string claim_name(Mechanism mechanism, bool monotone) {
  return std::string(to_string(mechanism)) + (monotone ? " (monotone)" : " (general)");
}

// Batches of select_repeated (each release its own stream, exactly as select() would draw it), on
// the GPU when one is usable (one launch per batch) and on all CPU cores otherwise; key = the
// released index.
AuditTarget selection_target(Mechanism mechanism, bool monotone, std::string neighbours,
                             std::pair<std::vector<double>, std::vector<double>> inputs) {
  AuditTarget target;
  target.mechanism = claim_name(mechanism, monotone);
  target.neighbours = std::move(neighbours);
  target.claimed_epsilon = kEpsilon;
  SelectionParams params = params_for(mechanism, kEpsilon, monotone);
  params.backend = Backend::Auto;
  target.run = [params, d = std::move(inputs.first), d_prime = std::move(inputs.second)](
                   bool on_d_prime, Context& context, std::uint64_t runs, OutputCounts& counts) {
    const std::span<const double> utilities(on_d_prime ? d_prime : d);
    for (std::uint64_t done = 0; done < runs; done += kReleasesPerBatch) {
      const RowsSelection batch = select_repeated(context, utilities, params, std::min(kReleasesPerBatch, runs - done));
      for (const Selection& selection : batch.selections) ++counts[static_cast<OutputKey>(selection.index)];
    }
  };
  return target;
}

// select_top_k, k = 2 of 6 candidates at epsilon = 1 (1/2 a pick); claim k epsilon' = 1 (basic
// composition). Key = first * 6 + second (the ordered pair).
AuditTarget top_k_target() {
  constexpr std::size_t kCandidates = 6;
  constexpr std::uint64_t kK = 2;
  AuditTarget target;
  target.mechanism = "top-k (one-shot Gumbel, k = 2, epsilon' = 0.5)";
  target.neighbours = "half up / half down";
  target.claimed_epsilon = static_cast<double>(kK) * 0.5;
  TopKParams params;
  params.selection = params_for(Mechanism::exponential, 1.0, false);  // 0.5 a pick
  params.k = kK;
  auto [d, d_prime] = half_up_half_down(kCandidates);
  target.run = [params, d = std::move(d), d_prime = std::move(d_prime)](bool on_d_prime, Context& context,
                                                                        std::uint64_t runs, OutputCounts& counts) {
    const std::span<const double> utilities(on_d_prime ? d_prime : d);
    for (std::uint64_t run = 0; run < runs; ++run) {
      const TopKSelection top = select_top_k(context, utilities, params);
      ++counts[static_cast<OutputKey>(top.indices[0] * kCandidates + top.indices[1])];
    }
  };
  return target;
}

// select_price over an explicit list of 8 prices; key = the released candidate.
AuditTarget pricing_target(BidderNeighbours neighbours_kind, std::string neighbours, std::vector<double> bids_d,
                           std::vector<double> bids_d_prime) {
  AuditTarget target;
  target.mechanism = std::string("pricing (exponential, ") + std::string(to_string(neighbours_kind)) + ")";
  target.neighbours = std::move(neighbours);
  target.claimed_epsilon = kEpsilon;
  PricingParams params;
  params.epsilon = kEpsilon;
  params.neighbours = neighbours_kind;
  params.max_bidders = 4;
  params.backend = Backend::Cpu;
  // Seven cheap prices and one of 4 (Delta = 4): adding a bidder who bids 4 raises the revenue at
  // 4 by the full Delta and the others by at most 0.07.
  std::vector<double> prices = {0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 4.0};
  target.run = [params, prices = std::move(prices), d = Bids(std::span<const double>(bids_d)),
                d_prime = Bids(std::span<const double>(bids_d_prime))](bool on_d_prime, Context& context,
                                                                     std::uint64_t runs, OutputCounts& counts) {
    const Bids& bids = on_d_prime ? d_prime : d;
    for (std::uint64_t run = 0; run < runs; ++run) {
      ++counts[static_cast<OutputKey>(select_price(context, bids, std::span<const double>(prices), params).candidate)];
    }
  };
  return target;
}

// select_rows over a rows x 8 matrix; key = sum_r pick_r 8^r (the tuple of picks).
AuditTarget rows_target(std::string mechanism, std::string neighbours, double claimed_epsilon, double row_epsilon,
                        std::uint64_t rows, std::vector<double> d, std::vector<double> d_prime) {
  constexpr std::uint64_t kCols = 8;
  AuditTarget target;
  target.mechanism = std::move(mechanism);
  target.neighbours = std::move(neighbours);
  target.claimed_epsilon = claimed_epsilon;
  const SelectionParams params = params_for(Mechanism::exponential, row_epsilon, false);
  target.run = [params, rows, d = std::move(d), d_prime = std::move(d_prime)](bool on_d_prime, Context& context,
                                                                            std::uint64_t runs, OutputCounts& counts) {
    const std::vector<double>& u = on_d_prime ? d_prime : d;
    const HostMatrix<const double> matrix{u.data(), rows, kCols};
    for (std::uint64_t run = 0; run < runs; ++run) {
      const RowsSelection picks = select_rows(context, matrix, params);
      OutputKey key = 0;
      for (std::uint64_t r = rows; r-- > 0;) key = key * static_cast<OutputKey>(kCols) + static_cast<OutputKey>(picks.selections[r].index);
      ++counts[key];
    }
  };
  return target;
}

std::vector<double> concatenated(const std::vector<std::vector<double>>& parts) {
  std::vector<double> all;
  for (const auto& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

}  // namespace

std::vector<AuditTarget> selection_audits() {
  std::vector<AuditTarget> targets;
  const std::size_t n = 8;

  // Exponential mechanism, general (P ∝ e^{eps u / (2 Delta)}):
  //   half up / half down: event {0}: P_D = 1/(1 + 7 e^{1/2}) = 0.0797, P_D' = e^{1/2}/(e^{1/2} + 7)
  //     = 0.1906; ln ratio = 0.8716 (-> eps as n grows).
  //   one utility +Delta on (0, ..., 0): event {0}: 1/8 vs e^{1/2}/(e^{1/2} + 7); ln ratio = 0.4218.
  //   all +Delta: 0 (shift invariance).
  targets.push_back(selection_target(Mechanism::exponential, false, "half up / half down", half_up_half_down(n)));
  targets.push_back(selection_target(Mechanism::exponential, false, "one utility +Delta",
                                     {std::vector<double>(n, 0.0), one_up(n).first}));
  targets.push_back(selection_target(Mechanism::exponential, false, "all +Delta", all_up(n)));
  // Exponential mechanism, monotone (P ∝ e^{eps u / Delta}), one utility +Delta:
  //   event {0}: P_D = 1/(1 + 7e) = 0.0499, P_D' = 1/8; ln ratio = ln((1 + 7e)/8) = 0.9177.
  targets.push_back(selection_target(Mechanism::exponential, true, "one utility +Delta", one_up(n)));
  targets.push_back(selection_target(Mechanism::exponential, true, "all +Delta", all_up(n)));
  // Permute-and-flip, general (Exp(2 Delta/eps)), half up / half down: event {0}: 0.07582 vs
  //   0.20597; ln ratio = 0.9994 (numerical; the loss of this pattern tends to eps).
  targets.push_back(selection_target(Mechanism::permute_and_flip, false, "half up / half down", half_up_half_down(n)));
  // Permute-and-flip, monotone (Exp(Delta/eps)), one utility +Delta: event {0}: P_D = 0.045985,
  //   P_D' = 1/8; ln ratio = 1.0000 (the bound is attained: eps exactly).
  targets.push_back(selection_target(Mechanism::permute_and_flip, true, "one utility +Delta", one_up(n)));
  // Laplace noisy max, general (Lap(2 Delta/eps)), half up / half down: event {0}: 0.07591 vs
  //   0.20256; ln ratio = 0.9815.
  targets.push_back(selection_target(Mechanism::laplace_noisy_max, false, "half up / half down", half_up_half_down(n)));
  // Laplace noisy max, monotone (Lap(Delta/eps)), one utility +Delta: event {0}: 0.046045 vs 1/8;
  //   ln ratio = 0.9987.
  targets.push_back(selection_target(Mechanism::laplace_noisy_max, true, "one utility +Delta", one_up(n)));
  targets.push_back(selection_target(Mechanism::laplace_noisy_max, true, "all +Delta", all_up(n)));

  // Top-k (k = 2 of 6, epsilon' = 1/2, claim 1): peeling EM at scale 1/4, half up / half down.
  //   Worst ordered pair: ln ratio = 0.4162. Basic composition is loose here: each pick's loss
  //   stays below epsilon' and the second pick's range no longer holds the moved candidate.
  targets.push_back(top_k_target());

  // Pricing, 8 prices (seven of at most 0.07 and 4), Delta = 4.
  //   add or remove a bidder (monotone, scale eps/Delta): bids {1} -> {1, 4}. The price 4 earns 0
  //     then 4; the others p then 2p. Event {price 4}: P_D = 1/(1 + sum_i e^{p_i/4}) = 0.1239,
  //     P_D' = e/(e + sum_i e^{p_i/2}) = 0.2757; ln ratio = 0.7997 (-> eps with more cheap prices).
  //   change one bid (scale eps/(2 Delta)): bids {1, 1} -> {1, 4}: the price 4 earns 0 then 4, the
  //     others are unchanged; event {price 4}: P_D = 0.1239, P_D' = 0.1891; ln ratio = 0.4227.
  targets.push_back(pricing_target(BidderNeighbours::add_or_remove_bidder, "add one bidder (bid = max price)", {1.0},
                                   {1.0, 4.0}));
  targets.push_back(pricing_target(BidderNeighbours::change_one_bid, "change one bid (1 -> max price)", {1.0, 1.0},
                                   {1.0, 4.0}));

  // Rows (exponential, general), 8 columns:
  //   2 rows about the same data, eps = 1/2 per row, claim 2 x 1/2 = 1 (sequential composition):
  //     each row half up / half down; worst pair of picks: ln ratio = 2 x 0.4371 = 0.8741.
  //   3 rows, eps = 1 per row, neighbours differ in row 1 only (each row is about its own
  //     disjoint part of the data): claim 1 (parallel composition); row 1 half up / half down,
  //     rows 0 and 2 the same in D and D'; ln ratio = 0.8716 (as the single EM: the unchanged
  //     rows' factors cancel).
  {
    const auto [d, d_prime] = half_up_half_down(n);
    targets.push_back(rows_target("rows (exponential, general, 2 rows, eps = 0.5 each)",
                                  "every row half up / half down", 1.0, 0.5, 2, concatenated({d, d}),
                                  concatenated({d_prime, d_prime})));
    // Rows 0 and 2 have a clear favourite (candidate 0 with probability e^4 / (e^4 + 7) = 0.886),
    // so the picks' tuples concentrate on few keys and the row-1 events stay frequent.
    const std::vector<double> other = {8.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    targets.push_back(rows_target("rows (exponential, general, 3 rows, eps = 1 each)",
                                  "row 1 half up / half down, rows 0 and 2 unchanged", 1.0, 1.0, 3,
                                  concatenated({other, d, other}), concatenated({other, d_prime, other})));
  }
  return targets;
}

}  // namespace dpselect::audit
