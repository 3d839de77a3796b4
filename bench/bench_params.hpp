// Parameters shared by the CPU and GPU benchmark programs.
#pragma once

#include <cstdint>

#include "dpselect/random_key.hpp"
#include "dpselect/types.hpp"

namespace dpselect_bench {

constexpr std::uint64_t kContextSeed = 20240601;
constexpr std::uint64_t kDataSeed = 0x5eedda7a2024ull;

// Every selection benchmark runs with both generators: ChaCha20 (the default of every context,
// cryptographically secure) and Philox (by explicit choice, faster): the measured cost of each.
constexpr dpselect::Generator kGenerators[] = {dpselect::Generator::chacha20, dpselect::Generator::philox};

constexpr dpselect::Mechanism kMechanisms[] = {dpselect::Mechanism::exponential,
                                               dpselect::Mechanism::permute_and_flip,
                                               dpselect::Mechanism::laplace_noisy_max};

// epsilon = 1, sensitivity = 1, not monotone: the benchmarks' fixed privacy parameters.
inline dpselect::SelectionParams bench_params(dpselect::Mechanism mechanism, dpselect::Backend backend) {
  dpselect::SelectionParams params;
  params.mechanism = mechanism;
  params.epsilon = 1.0;
  params.sensitivity = 1.0;
  params.backend = backend;
  return params;
}

}  // namespace dpselect_bench
