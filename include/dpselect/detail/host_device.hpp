// SPDX-License-Identifier: Apache-2.0
// Host/device portability and bit-reproducible double arithmetic.
//
// The CPU and GPU paths must compute the same noisy score for the same random bits, so the
// shared math never lets a compiler fuse a multiply and an add on its own: on the device we
// call the _rn intrinsics (never contracted by nvcc); on the host, fused operations are written
// as std::fma explicitly, and mul_rn / add_rn / sub_rn stay unfused in any translation unit,
// whatever its flags: the library's own (-ffp-contract=off) or a consumer's that includes these
// headers (GCC's default -ffp-contract=fast with -mfma, -march=native, or on aarch64).
#pragma once

#include <cstdint>

#if defined(__FAST_MATH__)
#error "dpselect: -ffast-math breaks the noise transforms (NaN checks, rounding, contraction)"
#endif

// Always inlined on the host too: an out-of-line copy could be taken from a translation unit
// compiled with other floating-point flags (a user's -ffp-contract=fast -mfma), silently
// changing the CPU path's rounding; inlined, the math is compiled with the library's flags.
#if defined(__CUDACC__)
#define DPSELECT_HD __host__ __device__
#define DPSELECT_FORCEINLINE __forceinline__
#else
#define DPSELECT_HD
#define DPSELECT_FORCEINLINE inline __attribute__((always_inline))
#endif

// Unrolls the next loop in device code, where an array stays in registers only when every access
// indexes it by a constant. Nothing on the host, where such arrays cost nothing (and nvcc's host
// pass would hand the pragma to a compiler that warns about it).
#if defined(__CUDA_ARCH__)
#define DPSELECT_UNROLL _Pragma("unroll")
#else
#define DPSELECT_UNROLL
#endif

#if !defined(__CUDA_ARCH__)
#include <bit>
#include <cmath>
#endif

namespace dpselect::detail {

#if !defined(__CUDA_ARCH__)
// `x`, hidden from the optimizer where the target has a fused multiply-add (__FP_FAST_FMA): a
// product that passes through here cannot be contracted into the add that uses it, nor an add's
// operand into the multiply that made it. An empty asm with a register operand costs no
// instruction. Without hardware FMA there is nothing to contract, and the code stays as it was
// (the library's own build: baseline x86-64, -ffp-contract=off). GCC says FMA by __FP_FAST_FMA;
// clang before 16 defines only __FMA__ (x86) or __ARM_FEATURE_FMA, and contracts under
// -ffp-contract=fast all the same (tests/contraction under the clang asan-ubsan preset).
#if defined(__FP_FAST_FMA) || defined(__FMA__) || defined(__ARM_FEATURE_FMA)
#define DPSELECT_TARGET_HAS_FMA 1
#endif
DPSELECT_FORCEINLINE double unfusable(double x) {
#if defined(DPSELECT_TARGET_HAS_FMA) && (defined(__GNUC__) || defined(__clang__))
#if defined(__x86_64__) || defined(__i386__)
  __asm__("" : "+x"(x));
#elif defined(__aarch64__)
  __asm__("" : "+w"(x));
#else
  __asm__("" : "+m"(x));
#endif
#endif
  return x;
}
#endif

DPSELECT_HD DPSELECT_FORCEINLINE double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return unfusable(a * b);
#endif
}

DPSELECT_HD DPSELECT_FORCEINLINE double add_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return unfusable(a) + unfusable(b);
#endif
}

DPSELECT_HD DPSELECT_FORCEINLINE double sub_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return unfusable(a) - unfusable(b);
#endif
}

DPSELECT_HD DPSELECT_FORCEINLINE double div_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}

// One rounding of a*b + c, identical on host and device.
DPSELECT_HD DPSELECT_FORCEINLINE double fma_rn(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __fma_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

// Round-to-nearest-even conversion of a 64-bit unsigned integer (IEEE 754 on both sides).
DPSELECT_HD DPSELECT_FORCEINLINE double u64_to_double_rn(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __ull2double_rn(x);
#else
  return static_cast<double>(x);
#endif
}

DPSELECT_HD DPSELECT_FORCEINLINE std::uint64_t double_bits(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(x));
#else
  return std::bit_cast<std::uint64_t>(x);
#endif
}

DPSELECT_HD DPSELECT_FORCEINLINE double double_from_bits(std::uint64_t bits) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(bits));
#else
  return std::bit_cast<double>(bits);
#endif
}

// Correctly rounded square root (IEEE 754 requires it of both std::sqrt and __dsqrt_rn).
DPSELECT_HD DPSELECT_FORCEINLINE double sqrt_rn(double x) {
#if defined(__CUDA_ARCH__)
  return __dsqrt_rn(x);
#else
  return std::sqrt(x);
#endif
}

DPSELECT_HD DPSELECT_FORCEINLINE bool is_nan(double x) { return x != x; }

inline constexpr double kInfinity = __builtin_huge_val();

}  // namespace dpselect::detail
