// SPDX-License-Identifier: Apache-2.0
// Replay of the ChaCha20 noise-vector kernel's block computations (kernels/noise_vector.cu),
// without a GPU: how many ChaCha20 blocks a warp issues per 1,024 coordinates when each lane
// samples its rejections where they fall, against the kernel that queues them per block
// (BlockRetries) and samples them in full one per thread. A warp issues a block computation once
// for all of its lanes that compute one at that step, so the issue count of a divergent loop is
// set by its longest lane.
//
// Each coordinate's rows come from the library's own sampler (continuous::noisy_value_of over
// KeyedBlocks, the bits every backend uses) with the benchmark's key and parameters
// (bench/select_gpu_bench.cu, bm_noise_vector: Context::with_fixed_seed(20240601, chacha20), its
// first stream, p = 1.5). The replay follows the kernels' schedules:
// - every thread of a block takes one quad (four coordinates) per pass, computes the quad's
//   cached rows (rows_always_read) as whole blocks, and runs its four coordinates in turn;
// - per-lane retries (before): at coordinate j of the quad, the warp issues max over its lanes of
//   the rows read beyond the cache (each an out-of-line block);
// - queued retries (after): the block's coordinates that read beyond the cache, in lane order
//   (the atomicAdd order is unspecified; the count of issues depends on it only through which
//   retries share a warp), go to threads 0, 1, ... of the block. A normal resumes after its cache
//   one polar attempt per round: each warp of a round issues the attempt's 2 rows, and the
//   rejected ones are queued again for the next round. A generalized Gaussian is sampled in full
//   from row 0: each warp issues max over its lanes of the rows its coordinates read, all uncached.
//
//   g++ -O2 -std=c++20 -Iinclude -Ihost bench/schedule_model/noise_retries.cpp -o /tmp/noise_retries
//   /tmp/noise_retries [coordinates]       (default 2^22)
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "dpselect/random_key.hpp"
#include "dpselect/continuous_noise.hpp"
#include "random/chacha20_coordinate_quads.hpp"

namespace {

using dpselect::continuous::NoiseShape;

constexpr std::uint64_t kContextSeed = 20240601;  // bench/select_gpu_bench.cu
constexpr unsigned kBlockThreads = 256;
constexpr unsigned kWarpLanes = 32;
constexpr unsigned kQuad = dpselect::continuous::kCoordinatesPerQuad;

struct RowCounter {
  dpselect::continuous::KeyedBlocks inner;
  std::uint64_t rows = 0;
  dpselect::RandomBlock at(std::uint64_t position) {
    rows = std::max(rows, (position >> dpselect::continuous::kCoordinateColumnBits) + 1);
    return inner.at(position);
  }
};

template <NoiseShape Shape>
std::vector<std::uint8_t> rows_read(const dpselect::RandomKey& key, std::uint64_t stream,
                                    const dpselect::continuous::CoordinateNoise& noise, std::uint64_t n) {
  std::vector<std::uint8_t> rows(n);
  for (std::uint64_t c = 0; c < n; ++c) {
    RowCounter fetch{{key, stream}};
    double out = 0.0;
    if (!dpselect::continuous::noisy_value_of<Shape>(fetch, noise, c, 0.0, out)) std::abort();
    rows[c] = static_cast<std::uint8_t>(std::min<std::uint64_t>(fetch.rows, 255));
  }
  return rows;
}

struct Issues {
  double cached = 0;    // the quads' cached rows: CachedRows blocks per warp and pass
  double per_lane = 0;  // before: rejections sampled where they fall
  double queued = 0;    // after: the block's queue, one coordinate per thread
  double retried = 0;   // coordinates that read beyond the cache
  double rounds = 0;    // retry rounds per block pass (not scaled)
};

Issues replay(const std::vector<std::uint8_t>& rows, unsigned cached_rows, unsigned attempt_rows) {
  const std::uint64_t n = rows.size();
  const std::uint64_t per_block = std::uint64_t{kBlockThreads} * kQuad;
  Issues issues;
  for (std::uint64_t block = 0; block + per_block <= n; block += per_block) {
    std::vector<unsigned> queue;
    for (unsigned warp = 0; warp < kBlockThreads / kWarpLanes; ++warp) {
      issues.cached += cached_rows;
      for (unsigned j = 0; j < kQuad; ++j) {
        unsigned longest = 0;
        for (unsigned lane = 0; lane < kWarpLanes; ++lane) {
          const std::uint64_t c = block + (std::uint64_t{warp} * kWarpLanes + lane) * kQuad + j;
          const unsigned beyond = rows[c] > cached_rows ? rows[c] - cached_rows : 0;
          longest = std::max(longest, beyond);
          if (beyond != 0) queue.push_back(rows[c]);
        }
        issues.per_lane += longest;
      }
    }
    issues.retried += static_cast<double>(queue.size());
    if (attempt_rows != 0) {
      // Rounds of one attempt each; `left` holds the rows each queued sample still reads.
      std::vector<unsigned> left;
      for (const unsigned r : queue) left.push_back(r - cached_rows);
      while (!left.empty()) {
        issues.queued += attempt_rows * static_cast<double>((left.size() + kWarpLanes - 1) / kWarpLanes);
        issues.rounds += 1;
        std::vector<unsigned> rejected;
        for (const unsigned r : left) {
          if (r > attempt_rows) rejected.push_back(r - attempt_rows);
        }
        left.swap(rejected);
      }
    } else {
      for (std::size_t first = 0; first < queue.size(); first += kWarpLanes) {
        const std::size_t end = std::min(queue.size(), first + kWarpLanes);
        issues.queued += *std::max_element(queue.begin() + static_cast<std::ptrdiff_t>(first),
                                           queue.begin() + static_cast<std::ptrdiff_t>(end));
      }
      issues.rounds += queue.empty() ? 0 : 1;
    }
  }
  const double per_1024 = 1024.0 / static_cast<double>(n / per_block * per_block);
  issues.cached *= per_1024;
  issues.per_lane *= per_1024;
  issues.queued *= per_1024;
  issues.retried *= per_1024;
  issues.rounds /= static_cast<double>(n / per_block);
  return issues;
}

template <NoiseShape Shape>
void run(const char* name, const dpselect::RandomKey& key, std::uint64_t stream,
         const dpselect::continuous::CoordinateNoise& noise, std::uint64_t n) {
  const unsigned cached = dpselect::continuous::rows_always_read(Shape);
  const Issues issues =
      replay(rows_read<Shape>(key, stream, noise, n), cached, dpselect::continuous::independent_attempt_rows(Shape));
  const double before = issues.cached + issues.per_lane;
  const double after = issues.cached + issues.queued;
  std::printf("| %s | %u | %.1f | %.2f | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f |\n", name, cached, issues.retried,
              issues.rounds, issues.cached, issues.per_lane, issues.queued, before, after, before / after);
}

}  // namespace

int main(int argc, char** argv) {
  const std::uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : std::uint64_t{1} << 22;
  // The benchmark's key and first stream: Context::with_fixed_seed(seed, generator) holds
  // RandomKey::from_seed(seed, generator), and its first release takes stream 0.
  const dpselect::RandomKey key = dpselect::RandomKey::from_seed(kContextSeed, dpselect::Generator::chacha20);
  const std::uint64_t stream = 0;
  std::printf("ChaCha20 block computations issued per warp, per 1,024 coordinates (%llu coordinates)\n\n",
              static_cast<unsigned long long>(n));
  std::printf("| shape | cached rows | retried coordinates | retry rounds per block pass | cached-row issues "
              "| per-lane retry issues (before) | queued retry issues (after) | total before | total after "
              "| before / after |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  using dpselect::continuous::make_coordinate_noise;
  run<NoiseShape::laplace>("Laplace", key, stream, make_coordinate_noise(NoiseShape::laplace, 1.0, 2.0), n);
  run<NoiseShape::normal>("normal", key, stream, make_coordinate_noise(NoiseShape::normal, 1.0, 2.0), n);
  run<NoiseShape::generalized_gaussian>("generalized Gaussian, p = 1.5", key, stream,
                                        make_coordinate_noise(NoiseShape::generalized_gaussian, 1.0, 1.5), n);
  return 0;
}
