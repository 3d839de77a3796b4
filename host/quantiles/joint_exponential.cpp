// SPDX-License-Identifier: Apache-2.0
// JointExp: m quantiles from one exponential mechanism over sorted m-tuples of grid points
// (Gillenwater, Joseph & Kulesza, "Differentially Private Quantiles", ICML 2021, Sec. 3), sampled
// exactly on the output grid in O(m^2 n) time and O(m n) memory after the sort.
//
// The utility. Sorted grid positions g_0 <= ... <= g_{n-1} (of the sorted slots s_i, g_i =
// (s_i + 1) / 2: DataIntervals); c(t) = #{i : g_i <= t} = #{values below
// point(t)}; levels q_1 < ... < q_m with q_0 = 0, q_{m+1} = 1. For grid indices o_1 <= ... <= o_m,
// with c(o_0) = 0 and c(o_{m+1}) = n,
//     u(o) = - sum_{j=1}^{m+1} | (c(o_j) - c(o_{j-1})) - (q_j - q_{j-1}) n |.
// Its sensitivity is 2 under both neighbour relations (Gillenwater, Joseph & Kulesza 2021, Sec. 3,
// give 2; derived here for each):
//   - replace one record x by x': c moves by delta(t) = [t > x'] - [t > x] in {-1, 0, 1}, a
//     single step up and back or down and back along the sorted o's, with delta(o_0) =
//     delta(o_{m+1}) = 0 (n is fixed); term j moves by |delta(o_j) - delta(o_{j-1})|, and these
//     add up to at most 2;
//   - add a record x (removal is symmetric): c moves by delta(t) = [t > x], 0 then 1, so exactly one
//     term j* gains 1 in its count difference, while every target moves by g_j = q_j - q_{j-1}
//     (n grows by 1; sum g_j = 1). u moves by at most (1 - g_{j*}) + sum_{j != j*} g_j =
//     2 (1 - g_{j*}) <= 2.
// The mechanism samples o with probability proportional to exp(eps u(o) / (2 * 2)) (McSherry &
// Talwar 2007; Dwork & Roth 2014, Thm 3.10): score scale S = eps / 4.
//
// Exact sampling by data intervals. Interval r in [0, n] (DataIntervals) holds L_r grid indices,
// all with c = r. If o_j lies in interval i_j, u depends on the i_j only; the mass of all tuples
// with a given i_1 <= ... <= i_m is
//     prod_{j=1}^{m+1} phi_j(i_j - i_{j-1}) * prod_r C(L_r + k_r - 1, k_r),
// phi_j(d) = exp(-S |d - (q_j - q_{j-1}) n|) (i_0 = 0, i_{m+1} = n), k_r = the number of o's in
// interval r: C(L + k - 1, k) counts the multisets of k of its L points (the grid's analogue of
// the paper's L^k / k!). In log space, for levels j = 1..m and intervals i:
//     C[j][i] = ln sum_{i' < i} e^{B[j-1][i'] + ln phi_j(i - i')}     (o_{j-1} in an earlier interval)
//     alpha[j][i][k] = C[j-k+1][i] + ln C(L_i + k - 1, k) + sum_{s=j-k+2}^{j} ln phi_s(0)
//                                                                     (o_{j-k+1..j} in interval i)
//     B[j][i] = ln sum_{k=1}^{j} e^{alpha[j][i][k]},
// where the first block (k = j) enters interval i from the start: C[1][i] = ln phi_1(i), and
// sum_s ln phi_s(0) = -S (q_j - q_{j-k+1}) n. The total log-mass is ln sum_i e^{B[m][i] + ln
// phi_{m+1}(n - i)}. Each C[j] is O(n): phi_j(d) = e^{-S (d - c)} for d >= D0 = max(1, ceil(c))
// (c = (q_j - q_{j-1}) n) is a running prefix sum of e^{B[j-1][i'] + S i'}, and for 1 <= d < D0 it
// is e^{-S (c - d)}, a sliding window of width D0 - 1 over e^{B[j-1][i'] - S i'}, summed without
// subtraction by prefix and suffix sums within blocks of the window's width (van Herk 1992; Gil
// & Werman 1993). Sums of exponentials are kept as mantissa x 2^exponent (ScaledSum), so that
// rescaling is exact and only the additions round.
//
// Sampling runs backwards: interval i_m by B[m][i] + ln phi_{m+1}(n - i), then the number k of
// o's that share it by alpha[m][i_m][k], then the interval of the o before them by B[m-k][i'] +
// ln phi_{m-k+1}(i_m - i'), i' < i_m, and so on. Each categorical choice is a Gumbel-max race of
// the library's noise (NoiseSpec with score scale 1, log-weights as utilities) over its own
// candidate range [choice * stride, choice * stride + count) of the release's stream (stride
// group-aligned, so the choices share no noise). Inside an interval holding k of the o's, a
// uniformly random multiset of k of its L points: a uniform k-subset of [0, L + k - 1) (Floyd's
// algorithm: Bentley & Floyd 1987), its sorted elements s_t minus t (stars and bars: Feller 1968,
// Sec. II.5), each uniform integer by uniform_grid_point with its own draw number.
//
// Floating-point slack (joint_exponential_slack). Write u = 2^-53 and let X bound the magnitude of
// every log-quantity formed: any partial tuple's log-mass lies in [-2 S n, m l] (sum_j |d_j - c_j|
// <= sum d_j + sum c_j <= 2n; at most C(G + m - 1, m) <= e^{m l} tuples, l = ln(G + m), G the grid
// size), the tilted values B +- S i' add S n, so X = 4 S n + m l + 1 covers them all with room.
// (1) Each computed quantity that the sampler later divides by is within omega of the exact
//     function of its computed inputs: C~[j][i] of ln sum_{i'<i} e^{B~[j-1][i'] + ln phi_j} (sums of
//     <= n + 1 positive terms: relative error <= (n + 1) u, Higham 2002, Sec. 4.2; about 15
//     roundings or ulp-bounded exp/log of quantities <= X; the targets' roundings, S |c~ - c| <=
//     2 u S n; terms underflowing below 2^-1000 of a sum), B~[j][i] of ln sum_k e^{alpha~} (<= m
//     terms); and every computed closed form (ln phi~ in a weight, alpha~'s ln C(L + k - 1, k) as
//     k logarithms summed: <= u m (m + 3) l, its -S (q_j - q_{j-k+1}) n: <= 3 u S n) is within
//     omega of its exact value, where
//         omega = 2^-52 (n + m + 2) + 2^-48 X + 2^-52 m (m + 3) l + 2^-40.
// (2) The choices' normalisers telescope: B~[j][i] divides the k-choice and reappears in the
//     weight that chose i; C~[j-k+1][i] divides the next interval choice and is the term of
//     alpha~ that chose k. So, with exact categorical draws from the computed weights, each tuple
//     has probability mass(t) e^{+-Lambda} / Z~ with Lambda = (4m + 1) omega (per block a k-choice
//     and an interval choice, each a normaliser and a closed form, plus ln phi_{m+1}); these sum
//     to 1, so Z~ / Z is within e^{+-Lambda} too, and the sample is within e^{+-2 Lambda} of the
//     exact mechanism.
// (3) Each of the <= 2m races is within e^{+-2 eta} of exact Gumbel-max over its weights outside
//     its bad event (floating_point_slack.cpp), eta = 2^-38 + 2^-52 (X + 93); each of the m
//     uniform integers within e^{+-rho}, rho = 2 * 4 digits * kDigitRelativeError
//     (truncated_geometric.hpp).
// Per tuple the sampler is within e^{+-lambda} of the exact mechanism, lambda = 2 Lambda +
// 4 m eta + m rho. As in floating_point_slack.cpp, slack.epsilon = 2 lambda + eps 2^-52 and
// slack.delta = (1 + e^{eps + slack.epsilon}) P(B), P(B) <= m (n + 1 + m) 2^-86 (the races'
// candidates) + m (512 2^-87 + 2^-128 + 512 (2^-1000 + 2^-111)) (the uniform draws, as in
// two_stage_interval_slack). n is the public max_points where there is one.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

#include "dpselect/detail/noise_positions.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/noise.hpp"
#include "selection/cpu_backend.hpp"
#include "validation/validation.hpp"
#include "noise/truncated_geometric.hpp"
#include "quantiles/quantiles_internal.hpp"

namespace dpselect::detail {
namespace {

constexpr double kNegativeInfinity = -std::numeric_limits<double>::infinity();
constexpr double kLn2 = 0x1.62e42fefa39efp-1;    // ln 2, rounded
constexpr double kLog2E = 0x1.71547652b82fep0;   // 1 / ln 2, rounded (only picks the exponent)
// Below 2^-1100 of a sum a term is dropped rather than shifted into the subnormals.
constexpr std::int64_t kDroppedShift = -1100;
// Candidates on each side of a choice's largest weight that are scored first.
constexpr std::uint64_t kLeadHalfWidth = std::uint64_t{1} << 12;
// Fewer intervals than this: one thread (a parallel region costs more than the loop).
constexpr std::uint64_t kParallelIntervals = 4096;

// Below e^-745 a double's exponential underflows: such a term is dropped (the slack counts it
// with the sums' other terms below 2^-1000 of their total), and exp is not asked for it.
constexpr double kSmallestExponent = -745.0;

// ln(e^a + e^b).
double log_add_exp(double a, double b) {
  if (a < b) std::swap(a, b);
  if (b == kNegativeInfinity) return a;
  const double difference = b - a;
  return difference < kSmallestExponent ? a : a + std::log1p(std::exp(difference));
}

// e^x as mantissa x 2^exponent, for x far outside a double's exponent range (0 for -inf).
struct ScaledTerm {
  double mantissa = 0.0;
  std::int64_t exponent = 0;

  static ScaledTerm of_log(double log_value) {
    if (log_value == kNegativeInfinity) return ScaledTerm{};
    const double exponent_value = std::floor(log_value * kLog2E);
    return ScaledTerm{std::exp(log_value - exponent_value * kLn2), static_cast<std::int64_t>(exponent_value)};
  }
};

// A sum of positive terms e^{x_i} whose logarithms span far more than a double's exponent range,
// held as mantissa x 2^exponent: aligning two terms is an exact power-of-two scaling, so only the
// additions round (the slack's accumulation term).
class ScaledSum {
 public:
  void add(const ScaledTerm& term) {
    if (term.mantissa == 0.0) return;
    if (sum_.mantissa == 0.0) {
      sum_ = term;
    } else if (term.exponent > sum_.exponent) {
      sum_.mantissa = scaled(sum_.mantissa, sum_.exponent - term.exponent) + term.mantissa;
      sum_.exponent = term.exponent;
    } else {
      sum_.mantissa += scaled(term.mantissa, term.exponent - sum_.exponent);
    }
  }

  const ScaledTerm& value() const { return sum_; }

  static double log(const ScaledTerm& value) {
    return value.mantissa == 0.0 ? kNegativeInfinity
                                 : std::log(value.mantissa) + static_cast<double>(value.exponent) * kLn2;
  }

 private:
  static double scaled(double mantissa, std::int64_t shift) {
    return shift < kDroppedShift ? 0.0 : std::ldexp(mantissa, static_cast<int>(shift));
  }

  ScaledTerm sum_;
};

std::uint64_t group_aligned(std::uint64_t count) {
  return (count + kCandidatesPerGroup - 1) / kCandidatesPerGroup * kCandidatesPerGroup;
}

// The log-weights of one categorical choice as the utilities of candidates [first_index, ...).
struct ChoiceWeights {
  const double* log_weights;
  std::uint64_t first_index;

  static void fill(const void* self, std::uint64_t first, std::uint64_t count, double* out) {
    const auto& choice = *static_cast<const ChoiceWeights*>(self);
    std::copy_n(choice.log_weights + (first - choice.first_index), count, out);
  }
};

// The tables C and B of the file comment for one data set, and the backward sampler.
class JointExponentialSampler {
 public:
  JointExponentialSampler(const JointExponentialPlan& plan, std::span<const std::uint64_t> positions,
                          std::uint64_t grid_size)
      : qs_(plan.qs),
        scale_(plan.score_scale),
        intervals_{positions, grid_size},
        levels_(plan.qs.size()),
        interval_count_(positions.size() + 1),
        count_(static_cast<double>(positions.size())) {
    // targets_[j] = (q_j - q_{j-1}) n for j = 1..m+1, each rounded twice (the slack's 2 u S n).
    targets_.resize(levels_ + 2, 0.0);
    for (std::size_t j = 1; j <= levels_ + 1; ++j) {
      const double upper = j <= levels_ ? qs_[j - 1] : 1.0;
      const double lower = j >= 2 ? qs_[j - 2] : 0.0;
      targets_[j] = (upper - lower) * count_;
    }
    log_lengths_.resize(interval_count_);
    for (std::uint64_t i = 0; i < interval_count_; ++i) {
      const std::uint64_t length = intervals_.length(i);
      log_lengths_[i] = length == 0 ? kNegativeInfinity : std::log(static_cast<double>(length));
    }
    build();
  }

  double total_log_mass() const {
    std::vector<double> weights(interval_count_);
    last_weights(weights);
    return log_sum_exp(weights.data(), weights.size());
  }

  std::vector<std::uint64_t> sample(const RandomKey& key, std::uint64_t stream) const {
    const NoiseSpec spec{Mechanism::exponential, 1.0, key, stream, std::numeric_limits<double>::infinity()};
    const std::uint64_t stride = group_aligned(std::max<std::uint64_t>(interval_count_, levels_));
    std::uint64_t choice = 0;
    std::vector<double> weights(std::max<std::uint64_t>(interval_count_, levels_));  // intervals or block sizes
    struct Block {
      std::uint64_t interval;
      std::uint64_t size;
    };
    std::vector<Block> blocks;  // from the last o backwards

    last_weights(weights);
    std::uint64_t interval = choose(spec, weights.data(), interval_count_, choice++ * stride);
    std::uint64_t placed_before = levels_;  // o_1 .. o_{placed_before} still to place
    for (;;) {
      block_log_masses(placed_before, interval, weights.data());
      const std::uint64_t size = 1 + choose(spec, weights.data(), placed_before, choice++ * stride);
      blocks.push_back(Block{interval, size});
      placed_before -= size;
      if (placed_before == 0) break;
      // The interval of o_{placed_before}: before `interval`, by B[placed_before][i'] + ln phi(interval - i').
      const double* best = best_row(placed_before);
      for (std::uint64_t earlier = 0; earlier < interval; ++earlier) {
        weights[earlier] = best[earlier] + log_phi(placed_before + 1, interval - earlier);
      }
      interval = choose(spec, weights.data(), interval, choice++ * stride);
    }

    std::vector<std::uint64_t> chosen;
    chosen.reserve(levels_);
    std::uint64_t draw = 0;
    std::unordered_set<std::uint64_t> subset;
    std::vector<std::uint64_t> sorted_subset;
    for (auto block = blocks.rbegin(); block != blocks.rend(); ++block) {
      const std::uint64_t begin = intervals_.begin(block->interval);
      const std::uint64_t pool = intervals_.length(block->interval) + block->size - 1;
      // Floyd's algorithm: a uniform block->size-subset of [0, pool).
      subset.clear();
      sorted_subset.clear();
      for (std::uint64_t top = pool - block->size; top < pool; ++top) {
        const std::uint64_t pick = uniform_grid_point(spec, 0, top + 1, draw++);
        const std::uint64_t element = subset.count(pick) != 0 ? top : pick;
        subset.insert(element);
        sorted_subset.push_back(element);
      }
      std::sort(sorted_subset.begin(), sorted_subset.end());
      for (std::uint64_t t = 0; t < block->size; ++t) chosen.push_back(begin + sorted_subset[t] - t);
    }
    return chosen;
  }

 private:
  // ln phi_j(d) = -S |d - (q_j - q_{j-1}) n|.
  double log_phi(std::size_t j, std::uint64_t d) const {
    return -(scale_ * std::fabs(static_cast<double>(d) - targets_[j]));
  }

  const double* best_row(std::size_t j) const { return best_.data() + (j - 1) * interval_count_; }
  double* best_row(std::size_t j) { return best_.data() + (j - 1) * interval_count_; }
  const double* entering_row(std::size_t j) const { return entering_.data() + (j - 2) * interval_count_; }
  double* entering_row(std::size_t j) { return entering_.data() + (j - 2) * interval_count_; }

  static double log_sum_exp(const double* values, std::size_t count) {
    const double top = *std::max_element(values, values + count);
    if (top == kNegativeInfinity) return top;
    double sum = 0.0;
    for (std::size_t k = 0; k < count; ++k) {
      const double difference = values[k] - top;
      if (difference >= kSmallestExponent) sum += std::exp(difference);
    }
    return top + std::log(sum);
  }

  // out[k - 1] = alpha[j][i][k] for k = 1..j: the log-mass of o_1..o_j with exactly o_{j-k+1..j}
  // in interval i. The forward pass and the sampler call this same function, so the k-choice's
  // weights are the very terms that B[j][i] summed.
  void block_log_masses(std::size_t j, std::uint64_t i, double* out) const {
    const double log_length = log_lengths_[i];
    if (log_length == kNegativeInfinity) {
      std::fill_n(out, j, kNegativeInfinity);
      return;
    }
    const double length = static_cast<double>(intervals_.length(i));
    double log_multisets = log_length;  // ln C(L + k - 1, k), one factor (L + k - 1) / k at a time
    for (std::size_t k = 1; k <= j; ++k) {
      if (k >= 2) log_multisets += std::log((length + static_cast<double>(k - 1)) / static_cast<double>(k));
      const double entering = k == j ? log_phi(1, i) : entering_row(j - k + 1)[i];
      // sum_{s=j-k+2}^{j} ln phi_s(0) = -S (q_j - q_{j-k+1}) n.
      const double staying = k == 1 ? 0.0 : -(scale_ * ((qs_[j - 1] - qs_[j - k]) * count_));
      out[k - 1] = (entering + log_multisets) + staying;
    }
  }

  // The first choice's weights: B[m][i] + ln phi_{m+1}(n - i).
  void last_weights(std::vector<double>& weights) const {
    const double* best = best_row(levels_);
    for (std::uint64_t i = 0; i < interval_count_; ++i) {
      weights[i] = best[i] + log_phi(levels_ + 1, interval_count_ - 1 - i);
    }
  }

  // The convolution's buffers, reused level after level.
  struct Workspace {
    std::vector<double> prefix;  // ln of the near terms from a block's start to t
    std::vector<double> suffix;  // ln of the near terms from t to the block's end
    std::vector<ScaledTerm> terms;
    std::vector<ScaledTerm> far_sums;
  };

  void build() {
    best_.assign(levels_ * interval_count_, kNegativeInfinity);
    if (levels_ >= 2) entering_.assign((levels_ - 1) * interval_count_, kNegativeInfinity);
    Workspace work;
    if (levels_ >= 2) {
      work.prefix.resize(interval_count_);
      work.suffix.resize(interval_count_);
      work.terms.resize(interval_count_);
      work.far_sums.resize(interval_count_);
    }
    for (std::size_t j = 1; j <= levels_; ++j) {
      if (j >= 2) convolve(j, work);
      double* best = best_row(j);
      const auto intervals = static_cast<std::int64_t>(interval_count_);
#pragma omp parallel if (interval_count_ > kParallelIntervals)
      {
        std::vector<double> alphas(j);
#pragma omp for schedule(static)
        for (std::int64_t i = 0; i < intervals; ++i) {
          block_log_masses(j, static_cast<std::uint64_t>(i), alphas.data());
          best[i] = log_sum_exp(alphas.data(), j);
        }
      }
    }
  }

  // C[j][i] = ln sum_{i' < i} e^{B[j-1][i'] + ln phi_j(i - i')}, split at d = i - i' = D0. Only
  // the far part's running sum is sequential; the terms, the near blocks and the logarithms run
  // on all cores.
  void convolve(std::size_t j, Workspace& work) {
    const double* previous = best_row(j - 1);
    double* entering = entering_row(j);
    const double target = targets_[j];
    const auto far_start = static_cast<std::uint64_t>(std::max(1.0, std::ceil(target)));  // D0
    const std::uint64_t width = far_start - 1;  // the near window: 1 <= d <= width
    const auto intervals = static_cast<std::int64_t>(interval_count_);
    const bool parallel = interval_count_ > kParallelIntervals;

    // Near part, d < D0: terms B[i'] - S i', in blocks of `width` with prefix and suffix sums.
    if (width > 0) {
      const auto blocks = static_cast<std::int64_t>((interval_count_ + width - 1) / width);
#pragma omp parallel for schedule(dynamic, 1) if (parallel)
      for (std::int64_t block_number = 0; block_number < blocks; ++block_number) {
        const std::uint64_t block = static_cast<std::uint64_t>(block_number) * width;
        const std::uint64_t end = std::min(interval_count_, block + width);
        ScaledSum forward;
        for (std::uint64_t t = block; t < end; ++t) {
          forward.add(ScaledTerm::of_log(previous[t] - scale_ * static_cast<double>(t)));
          work.prefix[t] = ScaledSum::log(forward.value());
        }
        ScaledSum backward;
        for (std::uint64_t t = end; t-- > block;) {
          backward.add(ScaledTerm::of_log(previous[t] - scale_ * static_cast<double>(t)));
          work.suffix[t] = ScaledSum::log(backward.value());
        }
      }
    }

    // Far part, d >= D0: far_sums[i] = sum over i' <= i - D0 of e^{B[i'] + S i'}.
#pragma omp parallel for schedule(static) if (parallel)
    for (std::int64_t t = 0; t < intervals; ++t) {
      work.terms[t] = ScaledTerm::of_log(previous[t] + scale_ * static_cast<double>(t));
    }
    ScaledSum far;
    for (std::uint64_t i = 0; i < interval_count_; ++i) {
      if (i >= far_start) far.add(work.terms[i - far_start]);
      work.far_sums[i] = far.value();
    }

#pragma omp parallel for schedule(static) if (parallel)
    for (std::int64_t signed_i = 0; signed_i < intervals; ++signed_i) {
      const auto i = static_cast<std::uint64_t>(signed_i);
      const double far_part =
          (ScaledSum::log(work.far_sums[i]) - scale_ * static_cast<double>(i)) + scale_ * target;
      double near_part = kNegativeInfinity;
      if (width > 0 && i >= 1) {
        // The window [lo, i - 1], lo = max(0, i - width): one block from its start, or the
        // suffix of one block and the prefix of the next.
        const std::uint64_t last = i - 1;
        const std::uint64_t lo = i > width ? i - width : 0;
        const double window = lo % width == 0 ? work.prefix[last] : log_add_exp(work.suffix[lo], work.prefix[last]);
        near_part = (window + scale_ * static_cast<double>(i)) - scale_ * target;
      }
      entering[i] = log_add_exp(far_part, near_part);
    }
  }

  // Gumbel-max over log_weights[0, count) on candidates [first_index, first_index + count). The
  // weights peak sharply, so the groups around the largest go first and their best score screens
  // the rest: the merged result is the one-pass result (cpu_backend.hpp), found without scoring
  // every group before the peak.
  static std::uint64_t choose(const NoiseSpec& spec, const double* log_weights, std::uint64_t count,
                              std::uint64_t first_index) {
    const ChoiceWeights choice{log_weights, first_index};
    const FillUtilities fill = &ChoiceWeights::fill;
    const auto peak = static_cast<std::uint64_t>(std::max_element(log_weights, log_weights + count) - log_weights);
    const std::uint64_t lead_begin = first_index + (peak > kLeadHalfWidth ? peak - kLeadHalfWidth : 0);
    const std::uint64_t lead_end = first_index + std::min(count, peak + kLeadHalfWidth + 1);
    ShardResult result = cpu_evaluate_generated(spec, IndexRange{lead_begin, lead_end}, fill, &choice);
    const double known_score = result.best_score;
    if (lead_begin > first_index) {
      result = merge(result, cpu_evaluate_generated(spec, IndexRange{first_index, lead_begin}, fill, &choice,
                                                    known_score));
    }
    if (lead_end < first_index + count) {
      result = merge(result, cpu_evaluate_generated(spec, IndexRange{lead_end, first_index + count}, fill, &choice,
                                                    known_score));
    }
    if (result.first_invalid_index != kNoIndex || result.best_index == kNoIndex ||
        log_weights[result.best_index - first_index] == kNegativeInfinity) {
      throw std::logic_error("dpselect: the JointExp sampler met an invalid or empty choice");
    }
    return result.best_index - first_index;
  }

  std::span<const double> qs_;
  double scale_;
  DataIntervals intervals_;
  std::size_t levels_;
  std::uint64_t interval_count_;
  double count_;
  std::vector<double> targets_;
  std::vector<double> log_lengths_;
  std::vector<double> best_;      // B[j][i], j = 1..m
  std::vector<double> entering_;  // C[j][i], j = 2..m
};

// The slack of the file comment, for m levels, at most `count_bound` values and `grid_size` points.
FloatingPointSlack joint_exponential_slack(double epsilon, double score_scale, std::uint64_t levels,
                                           std::uint64_t count_bound, std::uint64_t grid_size) {
  const auto m = static_cast<long double>(levels);
  const auto n = static_cast<long double>(count_bound);
  const long double log_tuples = std::log(static_cast<long double>(grid_size) + m);  // l
  const long double magnitude = 4.0L * score_scale * n + m * log_tuples + 1.0L;      // X
  const long double omega =
      0x1p-52L * (n + m + 2.0L) + 0x1p-48L * magnitude + 0x1p-52L * m * (m + 3.0L) * log_tuples + 0x1p-40L;
  const long double tables = (4.0L * m + 1.0L) * omega;  // Lambda
  const long double race = kRaceNoiseErrorBound + 0x1p-52L * (magnitude + kMaxAbsRaceNoise);  // eta
  const long double uniform = 2.0L * kGeometricDigitsPerAttempt * kDigitRelativeError;  // rho
  const long double lambda = 2.0L * tables + 4.0L * m * race + m * uniform;
  const long double slack_epsilon = 2.0L * lambda + static_cast<long double>(epsilon) * 0x1p-52L;
  const long double draws_per_uniform = static_cast<long double>(kGeometricDigitsPerAttempt) * kMaxGeometricAttempts;
  const long double bad_event =
      m * (n + 1.0L + m) * kRaceBadEventProbability +
      m * (draws_per_uniform * noise::kBadEventProbability + 0x1p-128L + draws_per_uniform * (0x1p-1000L + 0x1p-111L));
  const long double slack_delta = (1.0L + std::exp(static_cast<long double>(epsilon) + slack_epsilon)) * bad_event;
  constexpr long double kRoundUp = 1.0L + 0x1p-40L;
  return FloatingPointSlack{static_cast<double>(slack_epsilon * kRoundUp),
                            static_cast<double>(slack_delta * kRoundUp)};
}

}  // namespace

JointExponentialPlan plan_joint_exponential(const QuantilesParams& params, const QuantileData& data,
                                            std::span<const double> qs) {
  validate_quantile_levels(qs);
  validate_quantile_params(params.base, data);
  JointExponentialPlan plan;
  plan.qs.assign(qs.begin(), qs.end());
  plan.epsilon = params.base.epsilon;
  // Sensitivity 2 under both neighbour relations (derivation in the file comment; Gillenwater,
  // Joseph & Kulesza 2021, Sec. 3).
  plan.sensitivity = 2.0;
  // Exponential mechanism at scale eps / (2 Delta) (McSherry & Talwar 2007; Dwork & Roth 2014, Thm 3.10).
  plan.score_scale = plan.epsilon / (2.0 * plan.sensitivity);
  // Under replacement n is public; under addition or removal only max_points is.
  const bool count_is_public =
      params.base.neighbours == RecordNeighbours::replace_one_record || params.base.max_points != 0;
  const std::uint64_t count_bound = params.base.max_points != 0 ? params.base.max_points : data.size();
  plan.slack = joint_exponential_slack(plan.epsilon, plan.score_scale, qs.size(), count_bound, data.grid().size);
  plan.slack.depends_on_data = !count_is_public;
  if (!(plan.slack.epsilon < plan.epsilon)) throw_epsilon_too_small_for_slack();
  return plan;
}

std::vector<std::uint64_t> sample_joint_exponential(const JointExponentialPlan& plan,
                                                    std::span<const std::uint64_t> positions,
                                                    std::uint64_t grid_size, const RandomKey& key,
                                                    std::uint64_t stream) {
  return JointExponentialSampler(plan, positions, grid_size).sample(key, stream);
}

double joint_exponential_log_mass(const JointExponentialPlan& plan, std::span<const std::uint64_t> positions,
                                  std::uint64_t grid_size) {
  return JointExponentialSampler(plan, positions, grid_size).total_log_mass();
}

double joint_exponential_rank_error_bound(double epsilon, std::uint64_t quantiles, std::uint64_t grid_size,
                                          double beta) {
  // ln |R|, R the sorted m-tuples of grid points: ln C(G + m - 1, m) = sum_{t=1}^{m} ln((G + t - 1) / t),
  // summed in long double (lgamma's difference of two ~G ln G terms would cancel most digits).
  long double log_tuples = 0.0L;
  for (std::uint64_t t = 1; t <= quantiles; ++t) {
    log_tuples += std::log((static_cast<long double>(grid_size) + static_cast<long double>(t - 1)) /
                           static_cast<long double>(t));
  }
  // Dwork & Roth 2014, Thm 3.11 with Delta = 2: the utility falls short of the best by at most
  // (2 Delta / eps) (ln |R| + ln(1 / beta)) with probability >= 1 - beta (the best tuple's mass is
  // at least one tuple's).
  const long double alpha =
      2.0L * 2.0L / static_cast<long double>(epsilon) * (log_tuples - std::log(static_cast<long double>(beta)));
  return static_cast<double>(alpha * (1.0L + 0x1p-40L));  // rounded up: a bound
}

}  // namespace dpselect::detail
