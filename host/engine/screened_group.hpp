// The CPU path's fast scoring of runs of groups of 8 candidates: the same result, bit for bit,
// as detail::score_group (shard_result.hpp) on each group, at a fraction of its cost.
//
// score_group spends most of its time on candidates that cannot win: for each it classifies the
// utility (NaN, +inf, -inf, too large), computes the screen bound of its noise and a fused
// multiply-add (a libm call on baseline x86-64, which has no FMA instruction), one candidate at
// a time. Here a group whose 8 utilities are all ordinary (finite and within the limits) is
// checked, counted and screened with SSE2 arithmetic, each candidate against a bound of its
// noise read from a table by its screen bits' high byte, using only a multiply and an add with a
// margin that covers their roundings. The few candidates that survive take score_group's exact
// fused test and offer; any other group goes to score_group itself.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "dpselect/shard_result.hpp"

namespace dpselect::detail {

// Bounds of candidate noise from its 16 screen bits (noise.hpp), for one mechanism.
//   exact(screen) == noise_upper_bound(mechanism, screen). The bounds depend on the screen's two
//     high bits (sign, tail selector) and on its 14-bit top only through bit_width(top), so
//     4 x 15 values computed with noise_upper_bound itself hold them all.
//   coarse(high_byte) >= exact(screen) for every screen whose high byte (screen >> 8) it is: the
//     largest exact bound over those 256 screens; one byte picks it, so 8 lanes cost 8 loads.
class ScreenBounds {
 public:
  explicit ScreenBounds(Mechanism mechanism) {
    for (std::uint32_t high = 0; high < 4; ++high) {
      for (std::uint32_t width = 0; width < kWidths; ++width) {
        const std::uint32_t top = width == 0 ? 0u : std::uint32_t{1} << (width - 1);
        exact_[high * kWidths + width] = noise_upper_bound(mechanism, high << 14 | top);
      }
    }
    for (std::uint32_t high_byte = 0; high_byte < 256; ++high_byte) {
      // Screens high_byte << 8 | low: their tops span [top_low, top_low + 255], so their widths
      // span [bit_width(top_low), bit_width(top_low + 255)].
      const std::uint32_t high = high_byte >> 6;
      const std::uint32_t top_low = (high_byte & 0x3Fu) << 8;
      double largest = -kInfinity;
      for (std::uint32_t width = static_cast<std::uint32_t>(std::bit_width(top_low));
           width <= static_cast<std::uint32_t>(std::bit_width(top_low + 255)); ++width) {
        largest = exact_[high * kWidths + width] > largest ? exact_[high * kWidths + width] : largest;
      }
      coarse_[high_byte] = largest;
      largest_ = largest > largest_ ? largest : largest_;
    }
  }

  double exact(std::uint32_t screen) const {
    return exact_[(screen >> 14) * kWidths + static_cast<std::uint32_t>(std::bit_width(screen & 0x3FFFu))];
  }
  double coarse(std::uint32_t high_byte) const { return coarse_[high_byte]; }
  // The largest bound of any screen value: bounds every candidate's noise.
  double largest() const { return largest_; }

 private:
  static constexpr std::uint32_t kWidths = 15;  // bit_width of a 14-bit value: 0..14
  double exact_[4 * kWidths] = {};
  double coarse_[256] = {};
  double largest_ = -kInfinity;
};

// A margin that makes the unfused test `(c * u) + b < threshold - margin` (two roundings, then
// one more in the subtraction) imply the fused screen test `fma_rn(c, u, b) < threshold` for
// every |c * u| <= scaled_magnitude and |b| <= bound_magnitude. Each rounding moves a value by
// at most 2^-53 of its magnitude (plus 2^-1075 below the normal range), so the unfused sum is
// within 2^-52 (scaled_magnitude + bound_magnitude) + 2^-1074 of the exact c*u + b, and the
// subtraction and the final fma rounding cost at most 2^-52 (|threshold| + margin) + 2^-1074
// more. 2^-40 times the magnitudes plus 2^-1000 covers all of them many times over; being
// generous only sends a few more candidates to the exact test. An infinite threshold (nothing
// kept yet) gives an infinite margin and a cut of -inf: nothing is screened.
inline double unfused_screen_cut(double threshold, double scaled_magnitude, double bound_magnitude) {
  const double margin = 0x1p-40 * (std::fabs(threshold) + scaled_magnitude + bound_magnitude) + 0x1p-1000;
  return threshold - margin;
}

// The 8 utilities of one group as doubles.
struct GroupUtilities {
  double u[noise::kCandidatesPerGroup];
};

// Noise bounds of the 8 lanes of a group from its group block: lane 2k's screen is the high
// half of word k, lane 2k + 1's the low half (noise::screen_bits), so their high bytes are bits
// 31..24 and 15..8 of word k.
struct GroupBounds {
  double b[noise::kCandidatesPerGroup];

  GroupBounds(const ScreenBounds& bounds, const RandomBlock& group_block) {
    for (unsigned k = 0; k < 4; ++k) {
      const std::uint32_t word = group_block.word[k];
      b[2 * k] = bounds.coarse(word >> 24);
      b[2 * k + 1] = bounds.coarse((word >> 8) & 0xFFu);
    }
  }
};

// The vector part of the screening, in three forms with the same results:
//   all_ordinary: true when every utility is finite with |u| <= utility_limit and score_scale *
//     |u| <= kLargestScaledUtility (NaN and +-inf fail the comparisons); largest_magnitude is
//     then the largest |u|.
//   lanes_reaching: bit i set when lane i's unfused `score_scale * u + b` (a multiply, then an
//     add: never fused) is not below `cut`.
struct PortableGroupMath {
  static bool all_ordinary(const NoiseSpec& spec, const GroupUtilities& group, double& largest_magnitude) {
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

  static unsigned lanes_reaching(double score_scale, const GroupUtilities& group, const GroupBounds& bounds,
                                 double cut) {
    unsigned lanes = 0;
    for (unsigned lane = 0; lane < noise::kCandidatesPerGroup; ++lane) {
      lanes |= static_cast<unsigned>(add_rn(mul_rn(score_scale, group.u[lane]), bounds.b[lane]) >= cut) << lane;
    }
    return lanes;
  }
};

#if defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
#define DPSELECT_SCREEN_AVX2 1

// Four SSE2 vectors of two doubles (x86-64 baseline): no branch per candidate.
struct Sse2GroupMath {
  static bool all_ordinary(const NoiseSpec& spec, const GroupUtilities& group, double& largest_magnitude) {
    const __m128d sign = _mm_set1_pd(-0.0);
    const __m128d limit = _mm_set1_pd(spec.utility_limit);
    const __m128d scale = _mm_set1_pd(spec.score_scale);
    const __m128d largest_scaled = _mm_set1_pd(kLargestScaledUtility);
    __m128d ordinary = _mm_castsi128_pd(_mm_set1_epi32(-1));
    __m128d largest = _mm_setzero_pd();
    for (unsigned i = 0; i < 8; i += 2) {
      const __m128d magnitude = _mm_andnot_pd(sign, _mm_loadu_pd(group.u + i));
      ordinary = _mm_and_pd(ordinary, _mm_cmple_pd(magnitude, limit));
      ordinary = _mm_and_pd(ordinary, _mm_cmple_pd(_mm_mul_pd(scale, magnitude), largest_scaled));
      largest = _mm_max_pd(largest, magnitude);
    }
    largest = _mm_max_pd(largest, _mm_unpackhi_pd(largest, largest));
    largest_magnitude = _mm_cvtsd_f64(largest);
    return _mm_movemask_pd(ordinary) == 3;
  }

  static unsigned lanes_reaching(double score_scale, const GroupUtilities& group, const GroupBounds& bounds,
                                 double cut) {
    const __m128d scale = _mm_set1_pd(score_scale);
    const __m128d cut_v = _mm_set1_pd(cut);
    unsigned lanes = 0;
    for (unsigned i = 0; i < 8; i += 2) {
      const __m128d reach = _mm_add_pd(_mm_mul_pd(scale, _mm_loadu_pd(group.u + i)), _mm_loadu_pd(bounds.b + i));
      lanes |= static_cast<unsigned>(_mm_movemask_pd(_mm_cmpge_pd(reach, cut_v))) << i;
    }
    return lanes;
  }
};

// Two AVX vectors of four doubles; only called from code compiled for AVX2 and FMA.
struct Avx2GroupMath {
  __attribute__((target("avx2"))) static inline bool all_ordinary(const NoiseSpec& spec,
                                                                                const GroupUtilities& group,
                                                                                double& largest_magnitude) {
    const __m256d sign = _mm256_set1_pd(-0.0);
    const __m256d limit = _mm256_set1_pd(spec.utility_limit);
    const __m256d scale = _mm256_set1_pd(spec.score_scale);
    const __m256d largest_scaled = _mm256_set1_pd(kLargestScaledUtility);
    const __m256d low = _mm256_andnot_pd(sign, _mm256_loadu_pd(group.u));
    const __m256d high = _mm256_andnot_pd(sign, _mm256_loadu_pd(group.u + 4));
    const __m256d ordinary = _mm256_and_pd(
        _mm256_and_pd(_mm256_cmp_pd(low, limit, _CMP_LE_OQ), _mm256_cmp_pd(high, limit, _CMP_LE_OQ)),
        _mm256_and_pd(_mm256_cmp_pd(_mm256_mul_pd(scale, low), largest_scaled, _CMP_LE_OQ),
                      _mm256_cmp_pd(_mm256_mul_pd(scale, high), largest_scaled, _CMP_LE_OQ)));
    const __m256d largest4 = _mm256_max_pd(low, high);
    __m128d largest = _mm_max_pd(_mm256_castpd256_pd128(largest4), _mm256_extractf128_pd(largest4, 1));
    largest = _mm_max_pd(largest, _mm_unpackhi_pd(largest, largest));
    largest_magnitude = _mm_cvtsd_f64(_mm_max_pd(largest, _mm_setzero_pd()));
    return _mm256_movemask_pd(ordinary) == 0xF;
  }

  __attribute__((target("avx2"))) static inline unsigned lanes_reaching(
      double score_scale, const GroupUtilities& group, const GroupBounds& bounds, double cut) {
    const __m256d scale = _mm256_set1_pd(score_scale);
    const __m256d cut_v = _mm256_set1_pd(cut);
    const __m256d low = _mm256_add_pd(_mm256_mul_pd(scale, _mm256_loadu_pd(group.u)), _mm256_loadu_pd(bounds.b));
    const __m256d high =
        _mm256_add_pd(_mm256_mul_pd(scale, _mm256_loadu_pd(group.u + 4)), _mm256_loadu_pd(bounds.b + 4));
    return static_cast<unsigned>(_mm256_movemask_pd(_mm256_cmp_pd(low, cut_v, _CMP_GE_OQ))) |
           static_cast<unsigned>(_mm256_movemask_pd(_mm256_cmp_pd(high, cut_v, _CMP_GE_OQ))) << 4;
  }
};

inline bool cpu_has_avx2_and_fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}
using BaselineGroupMath = Sse2GroupMath;
#else
#define DPSELECT_SCREEN_AVX2 0
using BaselineGroupMath = PortableGroupMath;
#endif

// For g in [first, last): score_group(spec, g, blocks.at(g), groups.lane_begin(g),
// groups.lane_end(g), utility, tally, sink), bit for bit: the same tally (count, largest
// |utility|, invalid utilities) and the same offers in the same order. In a whole group of
// ordinary utilities, |u| and max are exact and -0.0 == +0.0, so taking |u| with a sign mask
// where score_group writes u < 0 ? -u : u changes nothing, and counts and maxima do not depend
// on the order of the offers. A candidate is left out only when its fused screen test would
// fail: its unfused bound is below the cut of a threshold no higher than the current one (the
// threshold only rises).
template <class Math, class Sink, class Blocks, class Utility>
__attribute__((always_inline)) inline void score_groups_using(const NoiseSpec& spec, const ScreenBounds& bounds,
                                                              const GroupRange& groups, std::uint64_t first,
                                                              std::uint64_t last, Blocks& blocks,
                                                              const Utility& utility, ShardResult& tally,
                                                              Sink& sink) {
  constexpr unsigned kLanes = noise::kCandidatesPerGroup;
  for (std::uint64_t g = first; g < last; ++g) {
    const RandomBlock group_block = blocks.at(g);
    const unsigned lane_begin = groups.lane_begin(g);
    const unsigned lane_end = groups.lane_end(g);
    const std::uint64_t first_index = g * kLanes;
    GroupUtilities group;
    if (lane_begin == 0 && lane_end == kLanes) {
      for (unsigned lane = 0; lane < kLanes; ++lane) group.u[lane] = static_cast<double>(utility(first_index + lane));
    }
    double largest_magnitude = 0.0;
    if (lane_begin != 0 || lane_end != kLanes || !Math::all_ordinary(spec, group, largest_magnitude)) {
      // A partial group, or a NaN, infinite or too large utility that score_group records or
      // excludes.
      score_group(spec, g, group_block, lane_begin, lane_end, utility, tally, sink);
      continue;
    }
    tally.candidates += kLanes;
    if (largest_magnitude > tally.max_abs_utility) tally.max_abs_utility = largest_magnitude;

    const double scaled_magnitude = mul_rn(spec.score_scale, largest_magnitude);
    const double cut = unfused_screen_cut(sink.threshold(), scaled_magnitude, bounds.largest());
    unsigned may_be_kept = Math::lanes_reaching(spec.score_scale, group, GroupBounds(bounds, group_block), cut);
    while (may_be_kept != 0) {  // in lane order, exactly score_group's fused test and offer
      const unsigned lane = static_cast<unsigned>(std::countr_zero(may_be_kept));
      may_be_kept &= may_be_kept - 1;
      const double u = group.u[lane];
      const std::uint32_t screen = noise::screen_bits(group_block, lane);
      if (fma_rn(spec.score_scale, u, bounds.exact(screen)) < sink.threshold()) continue;
      const std::uint64_t index = first_index + lane;
      sink.offer(fma_rn(spec.score_scale, u, candidate_noise(spec, index, screen)), index);
    }
  }
}

#if DPSELECT_SCREEN_AVX2
// The same compiled for AVX2 and FMA: wider vectors, and fma_rn (std::fma, correctly rounded
// either way) becomes one instruction instead of a libm call. Same bits as the baseline code.
template <class Sink, class Blocks, class Utility>
__attribute__((target("avx2,fma"))) void score_groups_avx2_fma(const NoiseSpec& spec, const ScreenBounds& bounds,
                                                             const GroupRange& groups, std::uint64_t first,
                                                             std::uint64_t last, Blocks& blocks,
                                                             const Utility& utility, ShardResult& tally, Sink& sink) {
  score_groups_using<Avx2GroupMath>(spec, bounds, groups, first, last, blocks, utility, tally, sink);
}
#endif

template <class Sink, class Blocks, class Utility>
inline void score_groups(const NoiseSpec& spec, const ScreenBounds& bounds, const GroupRange& groups,
                         std::uint64_t first, std::uint64_t last, Blocks& blocks, const Utility& utility,
                         ShardResult& tally, Sink& sink) {
#if DPSELECT_SCREEN_AVX2
  if (cpu_has_avx2_and_fma()) {
    score_groups_avx2_fma(spec, bounds, groups, first, last, blocks, utility, tally, sink);
    return;
  }
#endif
  score_groups_using<BaselineGroupMath>(spec, bounds, groups, first, last, blocks, utility, tally, sink);
}

}  // namespace dpselect::detail
