// SPDX-License-Identifier: Apache-2.0
// The library's audits of its sparse vector mechanisms (audit.hpp): AboveThreshold, Sparse and
// NumericSparse, for both algorithms, on StatDP's neighbour patterns (Ding et al., CCS 2018, §5).
//
// Every pattern is a pair of query-answer vectors (D, D') with |f_i(D) - f_i(D')| <= Delta = 1
// for every i (the sensitivity the mechanism is told), with the threshold T = 1 (0.5 for the
// x-shape, whose answers are 0 and 1), so that "above" and "below" are both likely. 10 queries,
// epsilon = 1.
//
// Output key of one release (the whole released answer vector, reduced to one integer):
//   bits 0-15   the above-pattern: bit i set when query i was answered "above";
//   bits 16-23  the number of queries answered (the halting position + 1, or 10 when the
//               mechanism did not halt);
//   bits 24-    NumericSparse: the bins of the released values in order, base kBins, each bin of
//               width the answer noise scale centred on the pattern's answers, clamped to
//               kBins bins.
// Releases use the streaming SparseVector (10 queries: the batch's parallel find-first would only
// add overhead), one object per release, each drawing a fresh stream of the audit's context.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "dpselect/audit.hpp"
#include "dpselect/sparse_vector.hpp"

namespace dpselect::audit {
namespace {

constexpr int kBins = 4;  // numeric values: bins (-inf, c - w), [c - w, c), [c, c + w), [c + w, inf)

struct Pattern {
  std::string name;
  std::vector<double> d;
  std::vector<double> d_prime;
  bool monotone = false;  // every query moves in the same direction (or not at all)
};

// StatDP's patterns (their Table 2), 10 queries, Delta = 1; D is all ones except for the x-shape.
std::vector<Pattern> patterns() {
  const std::vector<double> ones(10, 1.0);
  std::vector<Pattern> all;
  {
    std::vector<double> p = ones;
    p[0] = 2.0;
    all.push_back({"one above", ones, p, true});
  }
  {
    std::vector<double> p = ones;
    p[0] = 0.0;
    all.push_back({"one below", ones, p, true});
  }
  {
    std::vector<double> p(10, 0.0);
    p[0] = 2.0;
    all.push_back({"one above, rest below", ones, p, false});
  }
  {
    std::vector<double> p(10, 2.0);
    p[0] = 0.0;
    all.push_back({"one below, rest above", ones, p, false});
  }
  {
    std::vector<double> p(10, 0.0);
    std::fill(p.begin() + 5, p.end(), 2.0);
    all.push_back({"half below, half above", ones, p, false});
  }
  all.push_back({"all above", ones, std::vector<double>(10, 2.0), true});
  all.push_back({"all below", ones, std::vector<double>(10, 0.0), true});
  {
    std::vector<double> d(10, 0.0);
    std::vector<double> p(10, 0.0);
    std::fill(d.begin(), d.begin() + 5, 1.0);
    std::fill(p.begin() + 5, p.end(), 1.0);
    all.push_back({"x-shape", d, p, false});
  }
  return all;
}

const Pattern& pattern_named(const std::vector<Pattern>& all, const std::string& name) {
  for (const Pattern& p : all) {
    if (p.name == name) return p;
  }
  return all.front();
}

OutputKey value_bin(double value, double center, double width) {
  const double b = std::floor((value - center) / width);
  return static_cast<OutputKey>(std::clamp(b, -kBins / 2.0, kBins / 2.0 - 1.0) + kBins / 2.0);
}

AuditTarget sparse_target(std::string mechanism, const Pattern& pattern, const SparseVectorParams& params) {
  AuditTarget target;
  target.mechanism = std::move(mechanism);
  target.neighbours = pattern.name;
  target.claimed_epsilon = params.epsilon;
  target.claimed_delta = params.delta;
  const double width = params.numeric ? sparse_vector_scales(params).answer_noise_secure : 1.0;
  target.run = [pattern, params, width](bool on_d_prime, Context& context, std::uint64_t runs, OutputCounts& counts) {
    const std::vector<double>& values = on_d_prime ? pattern.d_prime : pattern.d;
    for (std::uint64_t r = 0; r < runs; ++r) {
      SparseVector svt(context, params);
      OutputKey mask = 0;
      OutputKey bins = 0;
      OutputKey answered = 0;
      for (std::size_t i = 0; i < values.size() && !svt.halted(); ++i) {
        const SparseVectorAnswer answer = svt.answer(values[i]);
        ++answered;
        if (answer.above) {
          mask |= OutputKey{1} << i;
          if (answer.value) bins = bins * kBins + value_bin(*answer.value, values[i], width);
        }
      }
      ++counts[mask | (answered << 16) | (bins << 24)];
    }
  };
  return target;
}

std::string describe(const char* kind, const SparseVectorParams& params) {
  std::string name = kind;
  name += params.algorithm == SparseVectorAlgorithm::dwork_roth ? " (dwork_roth" : " (lyu_su_li";
  if (params.monotone) name += ", monotone";
  name += ", c = " + std::to_string(params.max_positives);
  if (params.delta > 0.0) name += ", delta > 0";
  name += ")";
  return name;
}

}  // namespace

std::vector<AuditTarget> sparse_vector_audits() {
  const std::vector<Pattern> all = patterns();
  std::vector<AuditTarget> targets;
  const auto add = [&](const char* kind, const std::string& pattern, SparseVectorParams params) {
    params.sensitivity = 1.0;
    params.value_bound = 100.0;
    targets.push_back(sparse_target(describe(kind, params), pattern_named(all, pattern), params));
  };
  using Alg = SparseVectorAlgorithm;
  // AboveThreshold, dwork_roth: the patterns that expose the one-query and all-query differences.
  for (const char* p : {"one above, rest below", "one below, rest above", "x-shape", "all above"}) {
    add("above-threshold", p, {.epsilon = 1.0, .threshold = 1.0, .max_positives = 1, .algorithm = Alg::dwork_roth});
  }
  // AboveThreshold, lyu_su_li (general and monotone).
  add("above-threshold", "half below, half above",
      {.epsilon = 1.0, .threshold = 1.0, .max_positives = 1, .algorithm = Alg::lyu_su_li});
  add("above-threshold", "all below",
      {.epsilon = 1.0, .threshold = 1.0, .max_positives = 1, .algorithm = Alg::lyu_su_li, .monotone = true});
  // Sparse, c = 2 and 3.
  add("sparse", "one above, rest below",
      {.epsilon = 1.0, .threshold = 1.0, .max_positives = 2, .algorithm = Alg::dwork_roth});
  add("sparse", "x-shape", {.epsilon = 1.0, .threshold = 0.5, .max_positives = 3, .algorithm = Alg::lyu_su_li});
  add("sparse", "all above",
      {.epsilon = 1.0, .threshold = 1.0, .max_positives = 3, .algorithm = Alg::lyu_su_li, .monotone = true});
  add("sparse", "half below, half above",
      {.epsilon = 1.0, .delta = 1e-3, .threshold = 1.0, .max_positives = 2, .algorithm = Alg::dwork_roth});
  // NumericSparse.
  add("numeric-sparse", "one below, rest above",
      {.epsilon = 1.0, .threshold = 1.0, .max_positives = 1, .numeric = true, .algorithm = Alg::dwork_roth});
  add("numeric-sparse", "x-shape",
      {.epsilon = 1.0, .threshold = 0.5, .max_positives = 2, .numeric = true, .algorithm = Alg::lyu_su_li});
  add("numeric-sparse", "one above",
      {.epsilon = 1.0, .threshold = 1.0, .max_positives = 1, .numeric = true, .algorithm = Alg::lyu_su_li,
       .monotone = true});
  return targets;
}

}  // namespace dpselect::audit
