// Exact samplers of Canonne, Kamath & Steinke 2020 (CKS), integer arithmetic only.
//
// Overflow: public parameters are <= 2^32, so sigma <= 2^16 and t = floor(sigma) + 1 <= 2^16 + 1.
// Every product below is bounded in a comment; where a loop counter could in principle grow
// without bound, the bound holds unless a sample has drawn ~2^27 words, far beyond the 2^22 words
// of an item's range (discrete_noise.hpp), and a check throws RandomnessExhausted instead.
#include "dpselect/discrete_noise.hpp"

#include <bit>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "dpselect/errors.hpp"

namespace dpselect::discrete {
namespace {

using u128 = unsigned __int128;

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

int bit_width128(u128 value) {
  const auto high = static_cast<std::uint64_t>(value >> 64);
  return high != 0 ? 64 + std::bit_width(high) : std::bit_width(static_cast<std::uint64_t>(value));
}

// Uniform on [0, m), m >= 1: draw bit_width(m - 1) bits, retry if >= m (acceptance > 1/2).
u128 uniform_below128(CounterBits& bits, u128 m) {
  if (m <= 1) return 0;
  const int width = bit_width128(m - 1);
  const int words = (width + 31) / 32;
  const u128 mask = width == 128 ? ~u128{0} : (u128{1} << width) - 1;
  for (;;) {
    u128 x = 0;
    for (int w = 0; w < words; ++w) x = (x << 32) | bits.next32();
    x &= mask;
    if (x < m) return x;
  }
}

// CKS Algorithm 1, gamma = n/d in [0, 1], d < 2^100: K <- 1; while Bernoulli(gamma / K),
// K <- K + 1; the result is "K is odd", which has probability exp(-gamma).
bool bernoulli_exp_unit(CounterBits& bits, u128 n, u128 d) {
  std::uint64_t k = 1;
  for (;;) {
    // d * k < 2^100 * 2^27: no overflow. P[K >= k] = gamma^(k-1) / (k-1)!.
    if (k >= (std::uint64_t{1} << 27)) throw_exhausted("Bernoulli(exp(-gamma))");
    if (uniform_below128(bits, d * k) >= n) break;
    ++k;
  }
  return (k & 1) != 0;
}

// CKS Algorithm 1 for gamma = whole + rem/d > 1: Bernoulli(exp(-1)) `whole` times, stopping at the
// first failure, then Bernoulli(exp(-rem/d)). A caller that cannot represent a huge `whole`
// passes the maximum: every pass draws a word, so the budget runs out long before it matters.
bool bernoulli_exp_split(CounterBits& bits, u128 whole, u128 rem, u128 d) {
  for (u128 i = 0; i < whole; ++i) {
    if (!bernoulli_exp_unit(bits, 1, 1)) return false;
  }
  return bernoulli_exp_unit(bits, rem, d);
}

// CKS Algorithm 2: discrete Laplace with scale t/s (P[x] proportional to exp(-|x| s / t)).
std::int64_t laplace_impl(CounterBits& bits, std::uint64_t s, std::uint64_t t) {
  for (;;) {
    const std::uint64_t u = uniform_below(bits, t);
    if (!bernoulli_exp_split(bits, 0, u, t)) continue;  // accepted with probability >= e^-1
    std::uint64_t v = 0;
    while (bernoulli_exp_unit(bits, 1, 1)) {
      if (++v >= (std::uint64_t{1} << 27)) throw_exhausted("discrete Laplace");
    }
    // X = U + t V < 2^32 + 2^32 * 2^27: fits in 64 bits, and so does Y = floor(X / s).
    const std::uint64_t x = u + t * v;
    const std::uint64_t y = x / s;
    const bool negative = (bits.next32() & 1u) != 0;
    if (negative && y == 0) continue;  // keeps 0 from being counted twice
    return negative ? -static_cast<std::int64_t>(y) : static_cast<std::int64_t>(y);
  }
}

// floor(sqrt(n)) by bisection on integers.
std::uint64_t isqrt(std::uint64_t n) {
  std::uint64_t lo = 0;
  std::uint64_t hi = std::uint64_t{1} << 32;  // hi^2 > n always
  while (hi - lo > 1) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (static_cast<u128>(mid) * mid <= n) lo = mid; else hi = mid;
  }
  return lo;
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
  return static_cast<std::uint64_t>(uniform_below128(bits, m));
}

bool bernoulli_exp(CounterBits& bits, std::uint64_t n, std::uint64_t d) {
  if (n > kMaxRationalPart) throw_invalid_integer("n", "in [0, 2^32]", n);
  validate_part("d", d);
  return bernoulli_exp_split(bits, n / d, n % d, d);
}

std::int64_t discrete_laplace(CounterBits& bits, std::uint64_t scale_num, std::uint64_t scale_den) {
  validate_part("scale_num", scale_num);
  validate_part("scale_den", scale_den);
  return laplace_impl(bits, scale_den, scale_num);
}

std::int64_t discrete_gaussian(CounterBits& bits, std::uint64_t sigma2_num,
                               std::uint64_t sigma2_den) {
  validate_part("sigma2_num", sigma2_num);
  validate_part("sigma2_den", sigma2_den);
  const u128 a = sigma2_num;
  const u128 b = sigma2_den;
  // CKS Algorithm 3: t = floor(sigma) + 1; floor(sqrt(a/b)) = floor(sqrt(floor(a/b))).
  const u128 t = isqrt(sigma2_num / sigma2_den) + 1;  // <= 2^16 + 1
  // gamma = (|Y| - sigma^2/t)^2 / (2 sigma^2) = (|Y| b t - a)^2 / (2 a b t^2); denominator < 2^99.
  const u128 den = 2 * a * b * t * t;
  for (;;) {
    const std::int64_t y = laplace_impl(bits, 1, static_cast<std::uint64_t>(t));
    const u128 abs_y = y < 0 ? static_cast<u128>(-static_cast<u128>(y)) : static_cast<u128>(y);
    u128 whole = ~u128{0};
    u128 rem = 0;
    // |Y| < 2^60 keeps |Y| b t < 2^109; for a larger |Y| or x >= 2^64, gamma >= 2^31 (saturated).
    if (abs_y < (u128{1} << 60)) {
      const u128 ybt = abs_y * b * t;
      const u128 x = ybt >= a ? ybt - a : a - ybt;
      if (x < (u128{1} << 64)) {
        const u128 numerator = x * x;
        whole = numerator / den;
        rem = numerator % den;
      }
    }
    if (bernoulli_exp_split(bits, whole, rem, den)) return y;
  }
}

}  // namespace dpselect::discrete
