// SPDX-License-Identifier: Apache-2.0
// The auditor's statistics and its two-phase run (audit.hpp).
#include "dpselect/audit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "dpselect/errors.hpp"
#include "validation/validation.hpp"

namespace dpselect::audit {
namespace {

// Continued fraction of I_x(a, b) by the modified Lentz method (Numerical Recipes §6.4, betacf).
long double beta_continued_fraction(long double x, long double a, long double b) {
  constexpr long double kTiny = 1e-4000L;
  constexpr long double kEps = 1e-19L;
  const long double qab = a + b;
  const long double qap = a + 1;
  const long double qam = a - 1;
  long double c = 1;
  long double d = 1 - qab * x / qap;
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  long double h = d;
  // Converges in O(sqrt(max(a, b))) steps; 10^7 covers a, b up to ~10^13.
  for (long m = 1; m <= 10'000'000; ++m) {
    const long double m2 = 2.0L * m;
    long double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const long double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1) < kEps) break;
  }
  return h;
}

// Inverts a monotone increasing cdf(p) on [0, 1] for the target by bisection in long double.
template <class Cdf>
long double invert_increasing(Cdf cdf, long double target) {
  long double low = 0;
  long double high = 1;
  for (int step = 0; step < 200; ++step) {
    const long double middle = (low + high) / 2;
    if (!(middle > low && middle < high)) break;
    (cdf(middle) < target ? low : high) = middle;
  }
  return (low + high) / 2;
}

double round_down(long double x) {
  double d = static_cast<double>(x);
  if (static_cast<long double>(d) > x) d = std::nextafter(d, -std::numeric_limits<double>::infinity());
  return std::max(d, 0.0);
}

double round_up(long double x) {
  double d = static_cast<double>(x);
  if (static_cast<long double>(d) < x) d = std::nextafter(d, std::numeric_limits<double>::infinity());
  return std::min(d, 1.0);
}

// The bisection's and the continued fraction's error, far below any sampling error: widened by it.
constexpr long double kQuantileSlack = 1e-12L;

}  // namespace

long double regularized_incomplete_beta(long double x, long double a, long double b) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const long double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  const long double front = std::exp(log_front);
  // The continued fraction converges fast for x < (a + 1) / (a + b + 2); use the symmetry otherwise.
  if (x < (a + 1) / (a + b + 2)) return front * beta_continued_fraction(x, a, b) / a;
  return 1 - front * beta_continued_fraction(1 - x, b, a) / b;
}

Interval clopper_pearson(std::uint64_t successes, std::uint64_t trials, double alpha) {
  if (trials == 0) throw InvalidArgument("dpselect: trials must be >= 1 (got 0)");
  if (successes > trials) {
    throw InvalidArgument("dpselect: successes must be <= trials = " + std::to_string(trials) + " (got " +
                          std::to_string(successes) + ")");
  }
  if (!(alpha > 0.0 && alpha <= 0.5)) detail::throw_invalid("alpha", "in (0, 1/2]", alpha);
  const auto k = static_cast<long double>(successes);
  const auto n = static_cast<long double>(trials);
  Interval interval;
  // P[Bin(n, p) >= k] = I_p(k, n - k + 1), increasing in p: lower = its alpha quantile.
  if (successes > 0) {
    const long double lower =
        invert_increasing([&](long double p) { return regularized_incomplete_beta(p, k, n - k + 1); }, alpha);
    interval.lower = round_down(lower - kQuantileSlack);
  }
  // P[Bin(n, p) <= k] = 1 - I_p(k + 1, n - k), decreasing in p: upper solves I_p(k + 1, n - k) = 1 - alpha.
  if (successes < trials) {
    const long double upper = invert_increasing(
        [&](long double p) { return regularized_incomplete_beta(p, k + 1, n - k); }, 1 - static_cast<long double>(alpha));
    interval.upper = round_up(upper + kQuantileSlack);
  }
  return interval;
}

Bounds privacy_loss_bounds(const std::vector<EventCounts>& events, std::uint64_t runs, double confidence,
                           double claimed_epsilon) {
  if (runs == 0) throw InvalidArgument("dpselect: runs must be >= 1 (got 0)");
  if (!(confidence > 0.0 && confidence < 1.0)) detail::throw_invalid("confidence", "in (0, 1)", confidence);
  if (!(claimed_epsilon >= 0.0 && std::isfinite(claimed_epsilon))) {
    detail::throw_invalid("claimed_epsilon", "finite and >= 0", claimed_epsilon);
  }
  Bounds bounds;
  if (events.empty()) return bounds;
  // Four one-sided bounds per event (lower and upper of each probability), all at once.
  const double alpha = (1.0 - confidence) / (4.0 * static_cast<double>(events.size()));
  const double growth = std::exp(claimed_epsilon);
  for (const EventCounts& event : events) {
    if (event.on_d > runs || event.on_d_prime > runs) {
      throw InvalidArgument("dpselect: event counts must be <= runs = " + std::to_string(runs) + " (got " +
                            std::to_string(std::max(event.on_d, event.on_d_prime)) + ")");
    }
    const Interval d = clopper_pearson(event.on_d, runs, alpha);
    const Interval d_prime = clopper_pearson(event.on_d_prime, runs, alpha);
    for (const bool d_over_d_prime : {true, false}) {
      const Interval& top = d_over_d_prime ? d : d_prime;
      const Interval& bottom = d_over_d_prime ? d_prime : d;
      EventBound bound;
      bound.event = event.event;
      bound.d_over_d_prime = d_over_d_prime;
      bound.p_d = static_cast<double>(event.on_d) / static_cast<double>(runs);
      bound.p_d_prime = static_cast<double>(event.on_d_prime) / static_cast<double>(runs);
      bound.epsilon_lower = top.lower > 0.0 ? std::max(0.0, std::log(top.lower / bottom.upper)) : 0.0;
      bound.delta_lower = std::max(0.0, top.lower - growth * bottom.upper);
      if (bound.epsilon_lower > bounds.epsilon_lower) {
        bounds.epsilon_lower = bound.epsilon_lower;
        bounds.worst_epsilon = bound;
      }
      if (bound.delta_lower > bounds.delta_lower) {
        bounds.delta_lower = bound.delta_lower;
        bounds.worst_delta = bound;
      }
    }
  }
  return bounds;
}

namespace {

void validate_options(const AuditOptions& options) {
  if (options.selection_runs == 0) throw InvalidArgument("dpselect: selection_runs must be >= 1 (got 0)");
  if (options.runs == 0) throw InvalidArgument("dpselect: runs must be >= 1 (got 0)");
  // 2^40 releases per input are days of work on any machine; the bound keeps every count of
  // releases (2 (selection_runs + runs), over all audits) far from overflowing.
  constexpr std::uint64_t most_runs = std::uint64_t{1} << 40;
  if (options.selection_runs > most_runs || options.runs > most_runs) {
    throw InvalidArgument("dpselect: runs and selection_runs must be <= 2^40 (got " +
                          std::to_string(std::max(options.runs, options.selection_runs)) + ")");
  }
  if (!(options.confidence > 0.0 && options.confidence < 1.0)) {
    detail::throw_invalid("confidence", "in (0, 1)", options.confidence);
  }
  if (options.max_events == 0) throw InvalidArgument("dpselect: max_events must be >= 1 (got 0)");
}

// The releases of one audit so far, for AuditOptions::progress.
class ProgressCounter {
 public:
  explicit ProgressCounter(const AuditOptions& options)
      : report_(options.progress), total_(2 * (options.selection_runs + options.runs)) {
    if (report_) report_(0, total_);
  }
  void add(std::uint64_t releases) {
    done_ += releases;
    if (report_) report_(done_, total_);
  }

 private:
  const std::function<void(std::uint64_t, std::uint64_t)>& report_;
  std::uint64_t total_;
  std::uint64_t done_ = 0;
};

// Always in chunks, with or without a progress hook, so that the counts never depend on it.
OutputCounts run_on(const AuditTarget& target, bool on_d_prime, std::uint64_t seed, std::uint64_t runs,
                    ProgressCounter& progress) {
  Context context = Context::with_fixed_seed(seed);
  OutputCounts counts;
  for (std::uint64_t done = 0; done < runs;) {
    const std::uint64_t chunk = std::min(kAuditChunk, runs - done);
    target.run(on_d_prime, context, chunk, counts);
    done += chunk;
    progress.add(chunk);
  }
  return counts;
}

// The events the test run bounds: the most frequent key, then the keys seen at least 10 times in
// the selection run with the most extreme smoothed log ratios.
std::vector<OutputKey> choose_events(const OutputCounts& on_d, const OutputCounts& on_d_prime, std::size_t max_events) {
  struct Candidate {
    OutputKey key;
    std::uint64_t total;
    double score;
  };
  std::vector<Candidate> candidates;
  const auto count_in = [](const OutputCounts& counts, OutputKey key) -> std::uint64_t {
    const auto found = counts.find(key);
    return found == counts.end() ? 0 : found->second;
  };
  const auto consider = [&](OutputKey key) {
    const std::uint64_t a = count_in(on_d, key);
    const std::uint64_t b = count_in(on_d_prime, key);
    const double score = std::fabs(std::log((static_cast<double>(a) + 1.0) / (static_cast<double>(b) + 1.0)));
    candidates.push_back({key, a + b, score});
  };
  for (const auto& [key, count] : on_d) consider(key);
  for (const auto& [key, count] : on_d_prime) {
    if (on_d.find(key) == on_d.end()) consider(key);
  }
  std::vector<OutputKey> chosen;
  if (candidates.empty()) return chosen;
  const auto most_frequent = std::max_element(candidates.begin(), candidates.end(), [](const Candidate& x, const Candidate& y) {
    return x.total < y.total || (x.total == y.total && x.key > y.key);
  });
  chosen.push_back(most_frequent->key);
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& x, const Candidate& y) {
    return x.score > y.score || (x.score == y.score && x.key < y.key);
  });
  for (const Candidate& candidate : candidates) {
    if (chosen.size() >= max_events) break;
    if (candidate.total < 10 || candidate.key == chosen.front()) continue;
    chosen.push_back(candidate.key);
  }
  return chosen;
}

}  // namespace

AuditResult run_audit(const AuditTarget& target, const AuditOptions& options) {
  validate_options(options);
  if (!target.run) throw InvalidArgument("dpselect: target.run must be set (got an empty function)");
  ProgressCounter progress(options);
  const OutputCounts selection_d = run_on(target, false, 2 * options.seed, options.selection_runs, progress);
  const OutputCounts selection_d_prime = run_on(target, true, 2 * options.seed + 1, options.selection_runs, progress);
  const std::vector<OutputKey> chosen = choose_events(selection_d, selection_d_prime, options.max_events);

  const OutputCounts test_d = run_on(target, false, 2 * options.seed + 2, options.runs, progress);
  const OutputCounts test_d_prime = run_on(target, true, 2 * options.seed + 3, options.runs, progress);
  std::vector<EventCounts> events;
  for (const OutputKey key : chosen) {
    EventCounts counts;
    counts.event = key;
    if (const auto found = test_d.find(key); found != test_d.end()) counts.on_d = found->second;
    if (const auto found = test_d_prime.find(key); found != test_d_prime.end()) counts.on_d_prime = found->second;
    events.push_back(counts);
  }

  AuditResult result;
  result.mechanism = target.mechanism;
  result.neighbours = target.neighbours;
  result.claimed_epsilon = target.claimed_epsilon;
  result.claimed_delta = target.claimed_delta;
  result.bounds = privacy_loss_bounds(events, options.runs, options.confidence, target.claimed_epsilon);
  result.runs = options.runs;
  result.confidence = options.confidence;
  result.events_tested = events.size();
  constexpr double kTolerance = 1e-9;
  result.passed = target.claimed_delta > 0.0
                      ? result.bounds.delta_lower <= target.claimed_delta * (1 + kTolerance)
                      : result.bounds.epsilon_lower <= target.claimed_epsilon * (1 + kTolerance);
  return result;
}

std::vector<AuditTarget> all_audits() {
  std::vector<AuditTarget> all = selection_audits();
  for (std::vector<AuditTarget> part : {sparse_vector_audits(), noise_audits(), quantile_audits(), partition_selection_audits()}) {
    for (AuditTarget& target : part) all.push_back(std::move(target));
  }
  return all;
}

}  // namespace dpselect::audit
