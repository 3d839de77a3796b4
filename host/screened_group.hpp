// The CPU path's fast scoring of one whole group of 8 candidates: the same result, bit for bit,
// as detail::score_group (shard_result.hpp), at a fraction of its cost.
//
// score_group spends most of its time on candidates that cannot win: for each it classifies the
// utility (NaN, +inf, -inf, too large), computes the screen bound of its noise and a fused
// multiply-add (a libm call on baseline x86-64, which has no FMA instruction), one candidate at
// a time. Here a group whose 8 utilities are all ordinary (finite and within the limits) is
// checked, counted and screened with straight-line arithmetic the compiler vectorizes, using
// only a multiply and an add with a margin that covers their roundings. The few candidates that
// survive take score_group's exact per-candidate test and offer; any other group goes to
// score_group itself.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "dpselect/shard_result.hpp"

namespace dpselect::detail {

// noise_upper_bound(mechanism, screen) for every 16-bit screen value. The bounds depend on the
// screen's two high bits (sign, tail selector) and on its 14-bit top only through
// floor(log2(top)) (or top == 0): 4 x 15 values, computed once with noise_upper_bound itself.
class ScreenBounds {
 public:
  explicit ScreenBounds(Mechanism mechanism) {
    for (std::uint32_t high = 0; high < 4; ++high) {
      for (std::uint32_t width = 0; width < kWidths; ++width) {
        const std::uint32_t top = width == 0 ? 0u : std::uint32_t{1} << (width - 1);
        const double bound = noise_upper_bound(mechanism, high << 14 | top);
        bounds_[high * kWidths + width] = bound;
        if (bound > largest_) largest_ = bound;
      }
    }
  }

  double operator()(std::uint32_t screen) const {
    return bounds_[(screen >> 14) * kWidths + static_cast<std::uint32_t>(std::bit_width(screen & 0x3FFFu))];
  }

  // The largest bound of any screen value: bounds every candidate's noise.
  double largest() const { return largest_; }

 private:
  static constexpr std::uint32_t kWidths = 15;  // bit_width of a 14-bit value: 0..14
  double bounds_[4 * kWidths] = {};
  double largest_ = -kInfinity;
};

// A margin that makes the unfused test `(c * u) + b < threshold - margin` (two roundings) imply
// the fused screen test `fma_rn(c, u, b) < threshold` for every |c * u| <= scaled_magnitude and
// |b| <= bound_magnitude. Each rounding moves a value by at most 2^-53 of its magnitude (plus
// 2^-1075 below the normal range), so the unfused sum is within 2^-52 (scaled_magnitude +
// bound_magnitude) + 2^-1074 of the exact c*u + b, and the subtraction from the threshold and
// the final fma rounding cost at most 2^-52 |threshold| + 2^-1074 more. A margin of 2^-40 times
// the magnitudes, plus 2^-1000, covers all of them many times over; being generous only sends a
// few more candidates to the exact test.
inline double unfused_screen_margin(double threshold, double scaled_magnitude, double bound_magnitude) {
  return 0x1p-40 * (std::fabs(threshold) + scaled_magnitude + bound_magnitude) + 0x1p-1000;
}

// The 8 utilities of one group as doubles, and what score_whole_group needs to know of them.
struct GroupUtilities {
  double u[noise::kCandidatesPerGroup];
};

// True when every utility is ordinary: finite, |u| <= utility_limit and score_scale * |u| <=
// kLargestScaledUtility (NaN and +-inf fail the comparisons); `largest_magnitude` is then the
// largest |u|. Bit i of the result of lanes_reaching is set when lane i's unfused bound
// `score_scale * u + bound` is not below `cut`.
#if defined(__SSE2__)
// Four SSE2 vectors of two doubles (x86-64 baseline), so no lane waits for a branch.
struct GroupScreen {
  __m128d u[4];

  explicit GroupScreen(const GroupUtilities& group) {
    for (int i = 0; i < 4; ++i) u[i] = _mm_loadu_pd(group.u + 2 * i);
  }

  bool all_ordinary(const NoiseSpec& spec, double& largest_magnitude) const {
    const __m128d sign = _mm_set1_pd(-0.0);
    const __m128d limit = _mm_set1_pd(spec.utility_limit);
    const __m128d scale = _mm_set1_pd(spec.score_scale);
    const __m128d largest_scaled = _mm_set1_pd(kLargestScaledUtility);
    __m128d ordinary = _mm_castsi128_pd(_mm_set1_epi32(-1));
    __m128d largest = _mm_setzero_pd();
    for (int i = 0; i < 4; ++i) {
      const __m128d magnitude = _mm_andnot_pd(sign, u[i]);
      ordinary = _mm_and_pd(ordinary, _mm_cmple_pd(magnitude, limit));
      ordinary = _mm_and_pd(ordinary, _mm_cmple_pd(_mm_mul_pd(scale, magnitude), largest_scaled));
      largest = _mm_max_pd(largest, magnitude);
    }
    largest = _mm_max_pd(largest, _mm_unpackhi_pd(largest, largest));
    largest_magnitude = _mm_cvtsd_f64(largest);
    return _mm_movemask_pd(ordinary) == 3;
  }

  unsigned lanes_reaching(double score_scale, double bound, double cut) const {
    const __m128d scale = _mm_set1_pd(score_scale);
    const __m128d bound_v = _mm_set1_pd(bound);
    const __m128d cut_v = _mm_set1_pd(cut);
    unsigned lanes = 0;
    for (int i = 0; i < 4; ++i) {
      const __m128d reach = _mm_add_pd(_mm_mul_pd(scale, u[i]), bound_v);
      lanes |= static_cast<unsigned>(_mm_movemask_pd(_mm_cmpge_pd(reach, cut_v))) << (2 * i);
    }
    return lanes;
  }
};
#else
// Portable form of the same tests.
struct GroupScreen {
  const GroupUtilities& group;

  explicit GroupScreen(const GroupUtilities& utilities) : group(utilities) {}

  bool all_ordinary(const NoiseSpec& spec, double& largest_magnitude) const {
    bool ordinary = true;
    double largest = 0.0;
    for (const double u : group.u) {
      const double magnitude = std::fabs(u);
      ordinary &= magnitude <= spec.utility_limit;
      ordinary &= mul_rn(spec.score_scale, magnitude) <= kLargestScaledUtility;
      largest = magnitude > largest ? magnitude : largest;
    }
    largest_magnitude = largest;
    return ordinary;
  }

  unsigned lanes_reaching(double score_scale, double bound, double cut) const {
    unsigned lanes = 0;
    for (unsigned lane = 0; lane < noise::kCandidatesPerGroup; ++lane) {
      lanes |= static_cast<unsigned>(add_rn(mul_rn(score_scale, group.u[lane]), bound) >= cut) << lane;
    }
    return lanes;
  }
};
#endif

// score_group(spec, group, group_block, 0, 8, utility, tally, sink), bit for bit: the same
// tally (count, largest |utility|, invalid utilities) and the same offers in the same order.
// |u| and max are exact, and -0.0 and +0.0 compare equal, so taking |u| with fabs where
// score_group writes u < 0 ? -u : u changes nothing.
template <class Sink, class Utility>
inline void score_whole_group(const NoiseSpec& spec, const ScreenBounds& bounds, std::uint64_t group,
                              const RandomBlock& group_block, const Utility& utility, ShardResult& tally,
                              Sink& sink) {
  constexpr unsigned kLanes = noise::kCandidatesPerGroup;
  const std::uint64_t first_index = group * kLanes;
  GroupUtilities utilities;
  for (unsigned lane = 0; lane < kLanes; ++lane) {
    utilities.u[lane] = static_cast<double>(utility(first_index + lane));
  }
  const GroupScreen screen_test(utilities);
  double largest_magnitude = 0.0;
  if (!screen_test.all_ordinary(spec, largest_magnitude)) {
    // Some utility is NaN, infinite or too large: score_group records or excludes it.
    score_group(spec, group, group_block, 0, kLanes, utility, tally, sink);
    return;
  }
  // Counts and maxima do not depend on the order of the offers below.
  tally.candidates += kLanes;
  if (largest_magnitude > tally.max_abs_utility) tally.max_abs_utility = largest_magnitude;

  // First screen, with the largest bound of any screen value. The threshold only rises during
  // the group, so a candidate screened against its value here could not be kept later either.
  const double threshold = sink.threshold();
  const double scaled_magnitude = mul_rn(spec.score_scale, largest_magnitude);
  const double largest_bound = bounds.largest();
  const double cut = sub_rn(threshold, unfused_screen_margin(threshold, scaled_magnitude, largest_bound));
  unsigned may_be_kept = screen_test.lanes_reaching(spec.score_scale, largest_bound, cut);
  // The survivors, in lane order: the same unfused test with their own bound, then exactly
  // score_group's fused test and offer.
  while (may_be_kept != 0) {
    const unsigned lane = static_cast<unsigned>(std::countr_zero(may_be_kept));
    may_be_kept &= may_be_kept - 1;
    const double u = utilities.u[lane];
    const std::uint32_t screen = noise::screen_bits(group_block, lane);
    const double bound = bounds(screen);
    const double current = sink.threshold();
    const double lane_cut = sub_rn(current, unfused_screen_margin(current, scaled_magnitude, std::fabs(bound)));
    if (add_rn(mul_rn(spec.score_scale, u), bound) < lane_cut) continue;
    if (fma_rn(spec.score_scale, u, bound) < current) continue;
    const std::uint64_t index = first_index + lane;
    sink.offer(fma_rn(spec.score_scale, u, candidate_noise(spec, index, screen)), index);
  }
}

}  // namespace dpselect::detail
