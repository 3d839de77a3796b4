// SPDX-License-Identifier: Apache-2.0
/// @file
/// The secret key of a context and the generator it drives: every random bit of every mechanism is
/// random_block(key, stream, position), whichever generator the key belongs to (docs/design.md,
/// "Randomness": the bits depend only on (key, stream, position), never on the backend, thread or
/// shard).
///
/// Two counter-based generators sit behind the one interface:
/// - ChaCha20 (chacha20.hpp, RFC 8439, 256-bit key): a cryptographically secure generator, the
///   default of every Context. An observer of any number of released outputs learns nothing
///   about the other positions' bits without the key.
/// - Philox4x32-10 (philox.hpp, 64-bit key): bit-identical to cuRAND and several times faster,
///   but NOT a cryptographically secure generator (its 64-bit key and 10 rounds are designed
///   for statistics, not against an adversary). Use it only by explicit choice: simulations,
///   benchmarks, or data whose privacy does not rest on unpredictable noise.
///
/// The cost of each is measured in bench/ (`cpu_noise/philox_block`, `cpu_noise/chacha20_block` and
/// the selection benchmarks with each generator).
#pragma once

#include <cstdint>
#include <string_view>

#include "dpselect/chacha20.hpp"
#include "dpselect/detail/chacha20_batch.hpp"
#include "dpselect/detail/philox_batch.hpp"
#include "dpselect/detail/host_device.hpp"
#include "dpselect/philox.hpp"

namespace dpselect {

/// The counter-based generator behind a context's random bits; every report names the one its
/// noise came from.
enum class Generator : std::uint8_t {
  chacha20,  ///< ChaCha20 (chacha20.hpp): cryptographically secure; the default of every Context.
  philox     ///< Philox4x32-10 (philox.hpp): cuRAND's bits, faster, NOT cryptographically secure.
};

/// The generator's name, for reports and messages (defined in host/selection/select.cpp with the
/// other enum names).
/// @param generator Any value.
/// @return "chacha20" or "philox" ("unknown" for a value outside the enumeration), a view of a
///         static string.
std::string_view to_string(Generator generator);

/// A key of either generator. Converts implicitly from a PhiloxKey or a ChaChaKey.
///
/// A context holds one (Context, context.hpp); random_block maps (key, stream, position) to bits.
/// The key is the secret of every release of that context: never publish it.
struct RandomKey {
  Generator generator = Generator::chacha20;  ///< Which member holds the key; ChaCha20 by default.
  ChaChaKey chacha{};  ///< used when generator == chacha20
  PhiloxKey philox{};  ///< used when generator == philox

  /// An all-zero ChaCha20 key: predictable by anyone, a placeholder only (Context::with_shared_key
  /// refuses it).
  constexpr RandomKey() = default;
  /// A ChaCha20 key (implicit conversion).
  /// @param key The 256-bit key; `philox` stays all-zero and unused.
  DPSELECT_HD constexpr RandomKey(ChaChaKey key) : generator(Generator::chacha20), chacha(key) {}
  /// A Philox key (implicit conversion).
  /// @param key The 64-bit key; `chacha` stays all-zero and unused.
  DPSELECT_HD constexpr RandomKey(PhiloxKey key) : generator(Generator::philox), philox(key) {}

  /// A reproducible key of `generator` from a 64-bit seed (tests and experiments only: anyone
  /// who knows the seed predicts the noise). Philox: the key curand_init(seed, ...) uses;
  /// ChaCha20: ChaChaKey::from_seed.
  /// @param seed Any 64-bit value; anyone who knows it predicts the noise.
  /// @param generator The generator of the key; any value other than Generator::philox gives a
  ///        ChaCha20 key.
  /// @return `RandomKey(PhiloxKey::from_seed(seed))` or `RandomKey(ChaChaKey::from_seed(seed))`.
  DPSELECT_HD static constexpr RandomKey from_seed(std::uint64_t seed, Generator generator) {
    return generator == Generator::philox ? RandomKey(PhiloxKey::from_seed(seed))
                                          : RandomKey(ChaChaKey::from_seed(seed));
  }

  /// Whether two keys drive the same bits: same generator and equal key of that generator (the
  /// unused member is ignored).
  /// @param a One key.
  /// @param b The other key.
  /// @return true when `a.generator == b.generator` and their keys of that generator are equal.
  friend constexpr bool operator==(const RandomKey& a, const RandomKey& b) {
    return a.generator == b.generator &&
           (a.generator == Generator::philox ? a.philox == b.philox : a.chacha == b.chacha);
  }
};

/// Block number `position` of stream `stream` under `key` (128 bits).
///
/// The one source of random bits of every mechanism: a pure function of its arguments, the same
/// on the CPU and the GPU (inline, callable from device code; never throws).
/// @param key The key; its `generator` selects philox_block (philox.hpp) or
///        chacha20_random_block (chacha20.hpp).
/// @param stream Any 64-bit stream id (a context hands out a fresh one per release).
/// @param position Any 64-bit position within the stream.
/// @return The 128 bits at that position, as four 32-bit words.
DPSELECT_HD DPSELECT_FORCEINLINE RandomBlock random_block(const RandomKey& key, std::uint64_t stream,
                                                          std::uint64_t position) {
  return key.generator == Generator::philox ? philox_block(key.philox, stream, position)
                                            : chacha20_random_block(key.chacha, stream, position);
}

namespace detail {

/// random_block with the generator fixed at compile time: a GPU kernel compiled per generator
/// holds only that generator's key and code, not both (the ChaCha20 path alone needs 16 more
/// registers per thread). Same bits as random_block for a key of that generator.
template <Generator G>
struct GeneratorBlocks {
  DPSELECT_HD DPSELECT_FORCEINLINE static RandomBlock at(const RandomKey& key, std::uint64_t stream,
                                                         std::uint64_t position) {
    if constexpr (G == Generator::philox) {
      return philox_block(key.philox, stream, position);
    } else {
      return chacha20_random_block(key.chacha, stream, position);
    }
  }
};

/// random_block itself: the generator read from the key at run time (the CPU passes).
struct AnyGeneratorBlocks {
  DPSELECT_HD DPSELECT_FORCEINLINE static RandomBlock at(const RandomKey& key, std::uint64_t stream,
                                                         std::uint64_t position) {
    return random_block(key, stream, position);
  }
};

/// Reads positions of one (key, stream) mostly in increasing order (the CPU loops). A miss computes
/// a batch of consecutive blocks around the position at once, in SIMD lanes (chacha20_batch.hpp,
/// philox_batch.hpp: several times faster per block than one at a time): with ChaCha20,
/// kChaChaBatchBlocks 64-byte blocks, each serving four positions; with Philox,
/// kPhiloxBatchBlocks positions. Same bits as random_block. Host loops only: on a GPU the cached
/// words would live in local memory.
class SequentialBlocks {
 public:
  SequentialBlocks(const RandomKey& key, std::uint64_t stream) : key_(key), stream_(stream) {}

  RandomBlock at(std::uint64_t position) {
    if (key_.generator == Generator::philox) {
      const std::uint64_t first_position = position - position % kPhiloxBatchBlocks;
      if (first_position != cached_first_ || !cached_) {
        philox_blocks(key_.philox, stream_, first_position, philox_blocks_);
        cached_first_ = first_position;
        cached_ = true;
      }
      return philox_blocks_[position - first_position];
    }
    const std::uint64_t block = position / 4;
    const std::uint64_t first_block = block - block % kChaChaBatchBlocks;
    if (first_block != cached_first_ || !cached_) {
      chacha20_stream_blocks(key_.chacha, stream_, first_block, chacha_words_);
      cached_first_ = first_block;
      cached_ = true;
    }
    const std::uint32_t* words = chacha_words_[block - first_block];
    const unsigned first = 4 * static_cast<unsigned>(position % 4);
    return RandomBlock{{words[first], words[first + 1], words[first + 2], words[first + 3]}};
  }

 private:
  RandomKey key_;
  std::uint64_t stream_;
  /// First block (ChaCha20) or position (Philox) of the cached batch, valid when cached_.
  std::uint64_t cached_first_ = 0;
  bool cached_ = false;
  std::uint32_t chacha_words_[kChaChaBatchBlocks][16];
  RandomBlock philox_blocks_[kPhiloxBatchBlocks];
};

/// Blocks at kChaChaBatchBlocks arbitrary positions of one (key, stream) at once: random_block's
/// bits, for host loops whose positions follow the data rather than a counter (ChaCha20 computes
/// the 64-byte blocks holding them in SIMD lanes, chacha20_blocks_of_streams; Philox one position
/// at a time, which is as fast). Host loops only.
inline void random_blocks_at(const RandomKey& key, std::uint64_t stream,
                             const std::uint64_t (&positions)[kChaChaBatchBlocks],
                             RandomBlock (&out)[kChaChaBatchBlocks]) {
  if (key.generator == Generator::philox) {
    for (unsigned j = 0; j < kChaChaBatchBlocks; ++j) out[j] = philox_block(key.philox, stream, positions[j]);
    return;
  }
  std::uint64_t streams[kChaChaBatchBlocks];
  std::uint64_t blocks[kChaChaBatchBlocks];
  for (unsigned j = 0; j < kChaChaBatchBlocks; ++j) {
    streams[j] = stream;
    blocks[j] = positions[j] / 4;  // a 64-byte ChaCha20 block serves four positions
  }
  std::uint32_t words[kChaChaBatchBlocks][16];
  chacha20_blocks_of_streams(key.chacha, streams, blocks, words);
  for (unsigned j = 0; j < kChaChaBatchBlocks; ++j) out[j] = chacha20_quarter(words[j], static_cast<unsigned>(positions[j] % 4));
}

}  // namespace detail
}  // namespace dpselect
