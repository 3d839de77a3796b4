// SPDX-License-Identifier: Apache-2.0
// Where a candidate's noise comes from in a selection release's stream: the group-maximum screen,
// its race and candidate blocks, their positions, and the bounds of the race's noise. Internal to
// the selection engine (CPU and GPU); the noise transforms themselves are public (noise.hpp).
//
// Candidates form groups of 32 by global index (group g holds 32g .. 32g + 31). A group's 32
// uniforms are drawn in the exponential race's form (docs/group_maximum.md, exponential_race.hpp):
// V, whose root V^(1/32) is the group's largest uniform, the position J of that maximum, and W_j
// for each other candidate j (its uniform is W_j V^(1/32)). Their bits, per release stream:
//   V's top 16 bits, the group's "screen" (sign, tail selector, X's top 14 bits): half-word
//       (g mod 8) of the "screen block" at position g / 8: word (g mod 8) / 2, the high half for
//       even g. One 128-bit block per 256 candidates, one ChaCha20 block per 1,024;
//   V's low 112 bits and J: the "race block" at position 2^61 + g: its top 112 bits continue V
//       (race_bits), its next 5 bits are J (race_leader_lane);
//   W_j of candidate i: the "candidate block" at position 2^63 + i, all 128 bits.
// The screen alone bounds the noise of every candidate of the group (group_noise_upper_bound,
// screened_scoring.hpp). A group whose bound cannot lift its best utility to the best score seen
// so far holds no arg-max, so only the groups that can draw anything more: 16 bits per 32
// candidates for the rest, and the same result bit for bit as drawing every candidate's noise.
// V and each W_j keep the tail resolution of split_uniform; the race's transforms
// (exponential_race.hpp) add at most 2^-39 + 2^-44 to the error above, and its largest noise
// is -ln(2^-133) < 93 (a leader's T_J = E_V / 32 >= 2^-128 / 32).
#pragma once

#include <cstdint>

#include "dpselect/detail/host_device.hpp"
#include "dpselect/detail/portable_log.hpp"
#include "dpselect/philox.hpp"

namespace dpselect::detail {

inline constexpr std::uint64_t kCandidatesPerGroup = 32;
inline constexpr std::uint64_t kGroupsPerScreenBlock = 8;
inline constexpr std::uint64_t kRacePositionOffset = std::uint64_t{1} << 61;
inline constexpr std::uint64_t kDetailPositionOffset = std::uint64_t{1} << 63;
// Screen blocks use positions below 2^55, race blocks [2^61, 2^61 + 2^58) and candidate blocks
// 2^63 and above; positions 2^62 and 2^62 + 1 of a release's stream key the release's tags
// (ShardResult::release_tag, a ticket's bytes: host/engine/release_tags.hpp), never noise, and a bid-interval pricing release draws its
// within-interval stage from positions 2^60 + (0 .. 511) (host/noise/truncated_geometric.hpp).
inline constexpr std::uint64_t kReleaseTagPosition = std::uint64_t{1} << 62;
static_assert(kRacePositionOffset + (std::uint64_t{1} << 58) <= kReleaseTagPosition &&
                  kReleaseTagPosition + 2 <= kDetailPositionOffset,
              "the tags' key positions must lie between the race blocks and the candidate blocks");

// Bounds of the race's noise (the selection engine's), for the floating-point slack: every
// transform of a race time is within 2^-39 + 2^-44 < 2^-38 of its exact value outside the bad
// events (docs/group_maximum.md, section 5), and at most -ln(2^-133) = 92.2 in magnitude.
inline constexpr double kRaceNoiseErrorBound = 0x1p-38;
inline constexpr double kMaxAbsRaceNoise = 93.0;
// Per candidate: its own W and its group's V, each a draw with a 2^-87 bad event.
inline constexpr double kRaceBadEventProbability = 0x1p-86;

// The screen block's position for group g, and g's 16 screen bits in it (g mod 8 picks them).
// Picks the word with selects rather than word[slot >> 1]: a GPU keeps an array indexed at run
// time in local memory.
DPSELECT_HD DPSELECT_FORCEINLINE constexpr std::uint64_t screen_position(std::uint64_t group) {
  return group / kGroupsPerScreenBlock;
}
DPSELECT_HD DPSELECT_FORCEINLINE std::uint32_t screen_bits(const RandomBlock& screen_block, unsigned int slot) {
  const std::uint32_t low_pair = (slot & 2u) != 0 ? screen_block.word[1] : screen_block.word[0];
  const std::uint32_t high_pair = (slot & 2u) != 0 ? screen_block.word[3] : screen_block.word[2];
  const std::uint32_t word = (slot & 4u) != 0 ? high_pair : low_pair;
  return (slot & 1u) != 0 ? (word & 0xFFFFu) : (word >> 16);
}

// V's 128 bits: the screen on top of the race block's top 112 bits.
DPSELECT_HD DPSELECT_FORCEINLINE RandomBlock race_bits(std::uint32_t screen, const RandomBlock& race_block) {
  return RandomBlock{{(screen << 16) | (race_block.word[0] >> 16),
                      (race_block.word[0] << 16) | (race_block.word[1] >> 16),
                      (race_block.word[1] << 16) | (race_block.word[2] >> 16),
                      (race_block.word[2] << 16) | (race_block.word[3] >> 16)}};
}

// J, the lane of the group's largest uniform: the 5 bits after V's in the race block.
DPSELECT_HD DPSELECT_FORCEINLINE unsigned int race_leader_lane(const RandomBlock& race_block) {
  return (race_block.word[3] >> 11) & 31u;
}

// The screen's bound slot: its "bucket", the tail selector and the top 8 of X's 14 bits (screen
// bits 14..6), except that the upper half's bucket of b = 0 (v below 2^-9, where the bound
// grows fastest and one bucket would leave 2^-9 of the groups unbounded) is split by X's other 6
// bits. The group's noise bound depends on the screen through its slot only, so a 576-entry
// table holds every bound (the CPU path's ScreenBounds, the GPU's ScreenBoundTable).
inline constexpr unsigned int kScreenBuckets = 512;
inline constexpr unsigned int kUnboundedBucket = 256;  // upper half, b = 0
inline constexpr unsigned int kScreenBoundSlots = kScreenBuckets + 64;
DPSELECT_HD DPSELECT_FORCEINLINE unsigned int screen_bound_slot(std::uint32_t screen) {
  const unsigned int bucket = (screen >> 6) & 0x1FFu;
  return bucket == kUnboundedBucket ? kScreenBuckets + (screen & 0x3Fu) : bucket;
}

// Margin of the screen's bounds over the computed noise: far more than the race transforms'
// rounding and non-monotonicity (a few ulps of values below 93, exponential_race.hpp).
inline constexpr double kScreenMargin = 0x1p-20;

// A lower bound of E_V = -ln V for every V whose screen has bound slot `slot`, as computed by
// exponential(split_uniform(race_bits(...))); 0 when the slot allows E_V down to 0. With X's
// top 8 bits b, v lies in [b 2^-9, (b + 1) 2^-9]:
//   upper half (V = 1 - v): E_V = -ln(1 - v) >= -ln(1 - b 2^-9); for b = 0, with X's top 14
//       bits t, >= -ln(1 - t 2^-15), and no bound for t = 0 (probability 2^-15 per group: such
//       a group is always scored);
//   lower half (V = v): E_V = -ln v >= -ln((b + 1) 2^-9), at least ln 2.
// The factor 1 - 2^-40 covers the logarithms' and v's roundings (a few ulps).
DPSELECT_HD DPSELECT_FORCEINLINE double race_exponential_lower_bound(unsigned int slot) {
  double exact;
  if (slot >= kScreenBuckets) {
    const unsigned int top = slot - kScreenBuckets;
    exact = top == 0 ? 0.0 : -portable_log1m(mul_rn(static_cast<double>(top), 0x1p-15));
  } else if ((slot >> 8) != 0) {
    exact = -portable_log1m(mul_rn(static_cast<double>(slot & 0xFFu), 0x1p-9));
  } else {
    exact = -portable_log(mul_rn(static_cast<double>(slot + 1), 0x1p-9));
  }
  return mul_rn(exact, 1.0 - 0x1p-40);
}

}  // namespace dpselect::detail
