// SPDX-License-Identifier: Apache-2.0
// Exact samplers of Canonne, Kamath & Steinke 2020 (CKS), integer arithmetic only: validation and
// exceptions around the __host__ __device__ samplers of noise/discrete_samplers.hpp.
//
// Overflow: public parameters are <= 2^32, so sigma <= 2^16 and t = floor(sigma) + 1 <= 2^16 + 1.
// Every product below is bounded in a comment; where a loop counter could in principle grow
// without bound, the bound holds unless a sample has drawn ~2^27 words, far beyond the 2^22 words
// of an item's range (discrete_noise.hpp), and a check throws RandomnessExhausted instead.
#include "dpselect/discrete_noise.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "dpselect/errors.hpp"
#include "noise/discrete_samplers.hpp"

namespace dpselect::discrete {
namespace {

namespace core = detail::discrete_core;

[[noreturn]] void throw_invalid_integer(std::string_view name, std::string_view requirement,
                                        std::uint64_t value) {
  std::string message = "dpselect: ";
  message.append(name).append(" must be ").append(requirement).append(" (got ");
  message.append(std::to_string(value)).append(")");
  throw InvalidArgument(message);
}

void validate_part(std::string_view name, std::uint64_t value) {
  if (value < 1 || value > kMaxRationalPart) throw_invalid_integer(name, "in [1, 2^32]", value);
}

[[noreturn]] void throw_exhausted(std::string_view where) {
  throw RandomnessExhausted("dpselect: " + std::string(where) +
                            " ran past its random-bit budget (probability < 2^-300000 per sample)");
}

// Runs `sample` on the header samplers (noise/discrete_samplers.hpp) over the state of `bits`,
// writes the state back and turns exhaustion into RandomnessExhausted: the same words, the same
// values as the samplers always returned.
template <class Sample>
auto with_core_bits(CounterBits& bits, const char* where, Sample sample) {
  core::SamplerBits core_bits{bits.key, bits.stream, bits.next_position, bits.blocks_left,
                              bits.block, bits.words_left, false};
  const auto result = sample(core_bits);
  bits.next_position = core_bits.next_position;
  bits.blocks_left = core_bits.blocks_left;
  bits.block = core_bits.block;
  bits.words_left = core_bits.words_left;
  if (core_bits.exhausted) throw_exhausted(where);
  return result;
}

}  // namespace

CounterBits CounterBits::for_item(const RandomKey& key, std::uint64_t stream, std::uint64_t item) {
  if (item >= kItemLimit) throw_invalid_integer("item", "below 2^44", item);
  return CounterBits{key, stream, item << kItemPositionBits, std::uint64_t{1} << kItemPositionBits};
}

std::uint32_t CounterBits::next32() {
  if (words_left == 0) {
    if (blocks_left == 0) throw_exhausted("a sampler");
    block = random_block(key, stream, next_position++);
    --blocks_left;
    words_left = 4;
  }
  return block.word[4 - words_left--];
}

std::uint64_t CounterBits::next64() {
  const std::uint64_t high = next32();
  return (high << 32) | next32();
}

std::uint64_t uniform_below(CounterBits& bits, std::uint64_t m) {
  if (m == 0) throw_invalid_integer("m", ">= 1", m);
  return with_core_bits(bits, "a sampler", [m](core::SamplerBits& b) {
    return static_cast<std::uint64_t>(core::uniform_below128(b, m));
  });
}

bool bernoulli_exp(CounterBits& bits, std::uint64_t n, std::uint64_t d) {
  if (n > kMaxRationalPart) throw_invalid_integer("n", "in [0, 2^32]", n);
  validate_part("d", d);
  return with_core_bits(bits, "Bernoulli(exp(-gamma))", [n, d](core::SamplerBits& b) {
    return core::bernoulli_exp_split(b, n / d, n % d, d);
  });
}

std::int64_t discrete_laplace(CounterBits& bits, std::uint64_t scale_num, std::uint64_t scale_den) {
  validate_part("scale_num", scale_num);
  validate_part("scale_den", scale_den);
  return with_core_bits(bits, "discrete Laplace", [scale_num, scale_den](core::SamplerBits& b) {
    return core::discrete_laplace(b, scale_den, scale_num);
  });
}

std::int64_t discrete_gaussian(CounterBits& bits, std::uint64_t sigma2_num,
                               std::uint64_t sigma2_den) {
  validate_part("sigma2_num", sigma2_num);
  validate_part("sigma2_den", sigma2_den);
  return with_core_bits(bits, "discrete Gaussian", [sigma2_num, sigma2_den](core::SamplerBits& b) {
    return core::discrete_gaussian(b, sigma2_num, sigma2_den);
  });
}

}  // namespace dpselect::discrete
