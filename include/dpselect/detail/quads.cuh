// How a GPU thread scores candidates: where their utilities come from (an array or a functor),
// and the "quad" of 4 groups of 8 candidates that shares one ChaCha20 block. CUDA-only; used by
// the fused pass (fused_select_kernel.cuh), the rows kernel and the top-k kernel.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "dpselect/shard_result.hpp"

namespace dpselect::detail {

// Utility of global index i read from an array holding candidates [first_index, ...).
template <class T>
struct ArraySource {
  using value_type = T;
  const T* data;
  std::uint64_t first_index;
  __device__ __forceinline__ double operator()(std::uint64_t index) const {
    return static_cast<double>(data[index - first_index]);
  }
};

// Utility of global index i computed by a user functor.
template <class UtilityFn>
struct FunctorSource {
  UtilityFn utility;
  __device__ __forceinline__ double operator()(std::uint64_t index) const {
    return static_cast<double>(utility(index));
  }
};

template <class Source>
inline constexpr bool kIsArraySource = false;
template <class T>
inline constexpr bool kIsArraySource<ArraySource<T>> = true;

// Groups are taken four at a time: the "quad" q holds groups 4q .. 4q+3 (candidates 32q ..
// 32q+31). With ChaCha20 the four group blocks of a quad are the four quarters of one 64-byte
// block (the layout of random_block), so a thread computes one ChaCha20 block per 32 candidates
// rather than one per 8: the generator's arithmetic, not memory, bounds a ChaCha20 pass on a
// GPU.
inline constexpr std::uint64_t kGroupsPerQuad = 4;
inline constexpr std::uint64_t kCandidatesPerQuad = kGroupsPerQuad * noise::kCandidatesPerGroup;

template <Generator G>
struct QuadBlocks;

// ChaCha20: block `quad` computed once; group j's block is its quarter j.
template <>
struct QuadBlocks<Generator::chacha20> {
  std::uint32_t words[16];

  __device__ __forceinline__ QuadBlocks(const NoiseSpec& spec, std::uint64_t quad) {
    chacha20_stream_block(spec.key.chacha, spec.stream, quad, words);
  }
  // random_block(spec.key, spec.stream, 4 quad + j).
  __device__ __forceinline__ RandomBlock group_block(const NoiseSpec&, std::uint64_t, unsigned int j) const {
    return chacha20_quarter(words, j);
  }
};

// Philox: each group block is its own 16-byte block, computed when needed.
template <>
struct QuadBlocks<Generator::philox> {
  __device__ __forceinline__ QuadBlocks(const NoiseSpec&, std::uint64_t) {}
  __device__ __forceinline__ RandomBlock group_block(const NoiseSpec& spec, std::uint64_t quad, unsigned int j) const {
    return philox_block(spec.key.philox, spec.stream, quad * kGroupsPerQuad + j);
  }
};

// Calls launch(std::integral_constant<Generator, G>{}) for the key's generator G: kernels are
// compiled per generator (GeneratorBlocks, random_key.hpp).
template <class Launch>
void with_generator(Generator generator, const Launch& launch) {
  if (generator == Generator::philox) {
    launch(std::integral_constant<Generator, Generator::philox>{});
  } else {
    launch(std::integral_constant<Generator, Generator::chacha20>{});
  }
}

// The quads that overlap the groups of `groups`.
__device__ __forceinline__ std::uint64_t first_quad(const GroupRange& groups) {
  return groups.first_group() / kGroupsPerQuad;
}
__device__ __forceinline__ std::uint64_t quad_count(const GroupRange& groups) {
  return (groups.first_group() + groups.group_count() - 1) / kGroupsPerQuad - first_quad(groups) + 1;
}

// Scores the groups of quad `quad` that overlap `groups` (their candidates inside it only).
template <Generator G, class Source>
__device__ __forceinline__ void add_quad(ShardAccumulator& accumulator, const NoiseSpec& spec, const GroupRange& groups,
                                         std::uint64_t quad, const Source& source) {
  const QuadBlocks<G> blocks(spec, quad);
  const std::uint64_t first_group = groups.first_group();
  const std::uint64_t end_group = first_group + groups.group_count();
  // Not unrolled: four copies of a group's scoring would hold far more registers for no gain.
#pragma unroll 1
  for (unsigned int j = 0; j < kGroupsPerQuad; ++j) {
    const std::uint64_t group = quad * kGroupsPerQuad + j;
    if (group < first_group || group >= end_group) continue;
    accumulator.add_group<GeneratorBlocks<G>>(spec, group, blocks.group_block(spec, quad, j), groups.lane_begin(group),
                                              groups.lane_end(group), source);
  }
}

}  // namespace dpselect::detail
