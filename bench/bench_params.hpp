// SPDX-License-Identifier: Apache-2.0
// Parameters shared by the CPU and GPU benchmark programs.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <vector>

#include "dpselect/pricing.hpp"
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

// n log-normal bids (median 20, sigma 1, as in `dpselect demo`) from a fixed seed, sorted once
// and kept for the process: the same bids for the CPU and the GPU pricing benchmarks.
inline const dpselect::Bids& lognormal_bids(std::uint64_t n) {
  static std::map<std::uint64_t, std::unique_ptr<dpselect::Bids>> cache;
  std::unique_ptr<dpselect::Bids>& slot = cache[n];
  if (!slot) {
    std::mt19937_64 rng(kDataSeed ^ n);
    std::lognormal_distribution<double> dist(std::log(20.0), 1.0);
    std::vector<double> raw(n);
    for (double& bid : raw) bid = dist(rng);
    slot = std::make_unique<dpselect::Bids>(std::span<const double>(raw));
  }
  return *slot;
}

}  // namespace dpselect_bench
