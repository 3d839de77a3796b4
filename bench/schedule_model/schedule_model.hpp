// SPDX-License-Identifier: Apache-2.0
// What both kernels' replays share (schedule_model.cpp's overview says which file holds what):
// the benchmark's set-up, the H100 grid, the data shapes, each tile's screens and inputs, the types
// of the SASS region costs and of the measurements the time model converts with, the tally of
// issued instructions, and the options. Header-only (inline functions and templates), so that
// every replay sees the same definitions.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "dpselect/detail/noise_positions.hpp"
#include "dpselect/detail/screened_scoring.hpp"
#include "dpselect/noise.hpp"
#include "dpselect/random_key.hpp"
#include "dpselect/shard_result.hpp"
#include "random/ranked_lists.hpp"

namespace schedule_model {

using dpselect::Generator;
using dpselect::Mechanism;
using dpselect::RandomBlock;
using dpselect::detail::kInfinity;
namespace detail = dpselect::detail;

// ---------------------------------------------------------------------------------------------
// The benchmark's set-up (bench/select_gpu_bench.cu, bench/bench_params.hpp,
// bench/gpu_bench_support.cuh): Context::with_fixed_seed(kContextSeed, generator), whose first
// release takes stream 0; epsilon 1, sensitivity 1, not monotone, so score_scale = 0.5; float32
// utilities data[i] = (h >> 40) * 2^-24 * 1000 with h = splitmix64(i ^ kDataSeed).
constexpr std::uint64_t kContextSeed = 20240601;
constexpr std::uint64_t kDataSeed = 0x5eedda7a2024ull;
constexpr std::uint64_t kStream = 0;

// The benchmark's noise: the exponential mechanism (or `mechanism`: the single pass's --mechanism)
// over utilities of sensitivity 1, score_scale = epsilon / (2 sensitivity) for all three
// mechanisms (Dwork & Roth 2014, Thm 3.10; McKenna & Sheldon 2020; Claim 3.9), on `stream` of
// the benchmark's key.
inline detail::NoiseSpec benchmark_spec(Generator g, double epsilon, std::uint64_t stream,
                                        Mechanism mechanism = Mechanism::exponential) {
  detail::NoiseSpec spec{};
  spec.mechanism = mechanism;
  spec.score_scale = epsilon / 2.0;
  spec.key = dpselect::RandomKey::from_seed(kContextSeed, g);
  spec.stream = stream;
  spec.utility_limit = kInfinity;
  return spec;
}

// The kernels' table of group-noise bounds, one per screen slot (the exponential mechanism's, or
// `mechanism`'s).
inline void fill_screen_bounds(double (&bounds)[detail::kScreenBoundSlots],
                               Mechanism mechanism = Mechanism::exponential) {
  for (unsigned slot = 0; slot < detail::kScreenBoundSlots; ++slot) {
    bounds[slot] = detail::group_noise_upper_bound(mechanism, detail::screen_of_bound_slot(slot));
  }
}

inline const char* mechanism_name(Mechanism m) {
  return m == Mechanism::exponential ? "exponential"
         : m == Mechanism::permute_and_flip ? "permute-and-flip"
                                            : "laplace-noisy-max";
}

// The H100 of the measurements (bench/results/2026-11-24-nvidia-h100-80gb-hbm3/): 132 SMs,
// 256-thread blocks, 2 blocks per SM with ChaCha20 and 3 with Philox
// (kSelectMinBlocksPerMultiprocessor), one resident wave: warp w takes tiles w, w + W, ...
constexpr int kMultiprocessors = 132;
constexpr int kWarpsPerBlock = 8;
constexpr unsigned kLanes = 32;

inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// ---------------------------------------------------------------------------------------------
// Per-region warp-instruction costs of the sm_90 kernel (fused_select_kernel<ArraySource<float>,
// G, 256>, kernels/select_arrays.cu at commit e7c9489, nvcc 13.0 -O3), from sass_regions.py: the
// expected instructions one lane's path issues through each region (branches of other mechanisms
// and slow paths never taken, data-dependent ones half the time). Every region is charged once
// per warp-level issue, whatever the number of lanes active in it.
struct RegionCosts {
  double tile;            // per tile, all 32 lanes: staging + scan, screen, screen test, loop
  double race;            // a race: the race block (a generator block), E_V, the leader's noise
  double loop_iteration;  // one of the 32 follower-loop iterations (reload of u, tests)
  double leader_offer;    // the leader's offer
  double follower_draw;   // one follower's draw: a generator block, E', Gumbel, offer
  double once_per_warp;   // bound table fill before the tile loop, block reduction after it
};
// The values: kChaChaCosts and kPhiloxCosts (fused_pass.cpp); the rows kernel's kRows*LaneCosts
// (rows.hpp).

// The implemented kernel (WarpScreenThreshold, kernels/select_arrays.cu at commit 4ceede2, nvcc 13.0
// -O3, sm_90), from sass_regions.py's scenarios on fused_select_kernel<ArraySource<float>, G, 256>:
// the expected instructions of the warp's path (the race is warp-uniform; a follower draw is one
// lane's path through the draw, the drawing lanes together). Every cost is issued once per warp.
struct WarpCosts {
  double tile;           // per tile, 32 lanes: staging + scan, screen, the bound, the word's load and
                         // shuffle, the reach and its warp max, the test (bookkeeping: screen_test 79 / 76)
  double pass;           // a tile whose widest reach clears T: the pending ballot, the loop's entry
                         // and exit, the compare of T after the tile
  double race;           // a race, 32 lanes: the widest pending lane (warp max, ballot), the argument
                         // shuffles, the leader's time and lane from the lane that drew them
                         // (race_of_lane), leader noise, each lane's utility load, the leader's score
                         // and shuffle, the follower test, the offer, the warp max of T, the ballot
                         // of the lanes still pending; where race_block is 0, also the race block
  double follower_draw;  // a race where some follower draws (drawing lanes): a generator block, E',
                         // Gumbel, the fma
  double publish;        // lane 0's atomic max of T on the grid-wide word
  double once_per_warp;  // bound table fill before the tile loop, block reduction after it
  double race_block;     // own_group_race at a tile's first race: every pending lane's race block, E_V
                         // and leader; 0 for the kernels whose race draws its own block
};
// The values: kChaChaWarpCosts and kPhiloxWarpCosts (fused_pass.hpp); the rows kernel's
// kRows*WarpCosts (rows.hpp, rows_whatifs.cpp).

// A warp-wide race: the lanes that own a tile's pending groups draw their race blocks together at
// its first race (own_group_race), one block's instructions for the warp, and every race takes its
// leader from the owner (race_of_lane). Kernels before that (race_block 0) drew the block in every
// race.
inline double warp_race_cost(const WarpCosts& c, bool first_in_tile) {
  return c.race + (first_in_tile ? c.race_block : 0.0);
}

// ---------------------------------------------------------------------------------------------
// Measured on the H100 (the values: fused_pass.cpp, rows.hpp), and what the time model converts
// instructions with: the clock and one read of the benchmark's array.
struct Measured {
  double ipc_active;      // Executed Ipc Active, warp instructions per active SM cycle
  double ipc_elapsed;     // Executed Ipc Elapsed
  double sm_active_cycles;
  double duration_ms;
  double active_lanes;  // Avg. Active Threads Per Warp
};
constexpr double kClockHz = 1.98e9;          // SM frequency under load (ncu)
constexpr double kReadMs = 1.399;            // gpu_read/float/n:2^30 (gpu.txt, same machine)
// The H200: the same 132 SMs at the same clock, so the same issue time; one read of the same array
// (gpu_read/float/n:2^30): 0.956 ms (H200, 2026-12-04, bench/results/2026-12-04-nvidia-h200,
// 4.23 TB/s; 0.976 ms in bench/results/2026-11-26-nvidia-h200/).
constexpr double kReadH200Ms = 0.956;
constexpr double kBenchmarkTiles = 1 << 20;  // 2^30 candidates

// ---------------------------------------------------------------------------------------------
// Data shapes: float32 utilities computed from the index (no 4 GiB array).
enum class ShapeKind { bench, sorted, linear32, linear1024, steep, equal, pareto };

struct Shape {
  std::string name;
  ShapeKind kind;
  double epsilon;
};

// The benchmark's array sorted ascending, exactly: its values are k * 2^-24 * 1000 for the
// 2^24 values of k = h >> 40, so a counting sort of k gives, for every index, the k there.
struct SortedBench {
  std::vector<std::uint32_t> first;  // first[k]: first sorted index holding bucket k; size 2^24 + 1
  explicit SortedBench(std::uint64_t n) : first((1u << 24) + 1, 0) {
    const int threads = omp_get_max_threads();
    std::vector<std::vector<std::uint32_t>> counts(threads, std::vector<std::uint32_t>(1u << 24, 0));
#pragma omp parallel
    {
      std::vector<std::uint32_t>& mine = counts[omp_get_thread_num()];
#pragma omp for schedule(static)
      for (std::int64_t i = 0; i < static_cast<std::int64_t>(n); ++i) {
        ++mine[splitmix64(static_cast<std::uint64_t>(i) ^ kDataSeed) >> 40];
      }
    }
    std::uint64_t total = 0;
    for (std::uint32_t k = 0; k < (1u << 24); ++k) {
      first[k] = static_cast<std::uint32_t>(total);
      for (int t = 0; t < threads; ++t) total += counts[t][k];
    }
    first[1u << 24] = static_cast<std::uint32_t>(total);
  }
};

inline float bench_value(std::uint64_t k) {  // fill_kernel's float arithmetic, in float
  return static_cast<float>(k) * 0x1p-24f * 1000.0f;
}

// The heavy-tailed count of 53-bit value x: floor(u^(-1/1.2)) - 1 with u = (x + 1) 2^-53, which
// is decreasing in u. A table over the top 12 bits of x holds the count at both ends of each
// cell; where they agree (all but about 3 % of the values) that is the count, elsewhere pow.
inline float pareto_count(std::uint64_t x) {
  constexpr int kCellBits = 12;
  constexpr int kShift = 53 - kCellBits;
  static const auto count = [](std::uint64_t v) {
    return static_cast<float>(std::floor(std::pow((static_cast<double>(v) + 1.0) * 0x1p-53, -1.0 / 1.2)) - 1.0);
  };
  static const std::vector<float> cells = [] {
    std::vector<float> t(std::size_t{1} << kCellBits);
    for (std::uint64_t c = 0; c < t.size(); ++c) {
      const float high = count(c << kShift);                      // smallest x of the cell: largest count
      const float low = count(((c + 1) << kShift) - 1);           // largest x: smallest count
      t[c] = high == low ? low : -1.0f;
    }
    return t;
  }();
  const float cell = cells[x >> kShift];
  return cell >= 0.0f ? cell : count(x);
}

struct Data {
  const Shape* shape;
  const SortedBench* sorted;  // for ShapeKind::sorted
  // Where candidate 0 sits in the array the utilities are computed from: a row of the rows
  // benchmark's matrix (row r of C columns: r * C), 0 for a single pass.
  std::uint64_t offset = 0;

  // The 32 utilities of group g.
  void group(std::uint64_t g, float (&v)[kLanes]) const {
    const std::uint64_t first = g * kLanes + offset;
    switch (shape->kind) {
      case ShapeKind::bench:
        for (unsigned j = 0; j < kLanes; ++j) v[j] = bench_value(splitmix64((first + j) ^ kDataSeed) >> 40);
        return;
      case ShapeKind::sorted: {
        const auto& f = sorted->first;
        std::uint64_t k = static_cast<std::uint64_t>(std::upper_bound(f.begin(), f.end(), first) - f.begin()) - 1;
        for (unsigned j = 0; j < kLanes; ++j) {
          while (f[k + 1] <= first + j) ++k;
          v[j] = bench_value(k);
        }
        return;
      }
      case ShapeKind::linear32:  // u(i) = i / 32, rounded to float
        for (unsigned j = 0; j < kLanes; ++j) v[j] = static_cast<float>(static_cast<double>(first + j) / 32.0);
        return;
      case ShapeKind::linear1024:  // u(i) = i / 1024, rounded to float
        for (unsigned j = 0; j < kLanes; ++j) v[j] = static_cast<float>(static_cast<double>(first + j) / 1024.0);
        return;
      case ShapeKind::steep:  // u(i) = i, rounded to float
        for (unsigned j = 0; j < kLanes; ++j) v[j] = static_cast<float>(first + j);
        return;
      case ShapeKind::equal:
        for (unsigned j = 0; j < kLanes; ++j) v[j] = 500.0f;
        return;
      case ShapeKind::pareto:
        // Heavy-tailed counts: P(u >= k) = (k + 1)^-1.2 (a discrete Pareto / Zipf-like law),
        // u = floor(U^(-1/1.2)) - 1 from a 53-bit uniform U of the hash. Mostly 0 and 1, the
        // largest of 2^30 near 3 * 10^7.
        for (unsigned j = 0; j < kLanes; ++j) v[j] = pareto_count(splitmix64((first + j) ^ kDataSeed) >> 11);
        return;
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Random bits: the screens the kernel hands each lane.

// The 32 screens of tile t, as the kernel's TileScreens<G> hands them out: ChaCha20 block t of the
// stream (lane l: half of word l / 2), or Philox blocks 4t .. 4t + 3 (8 lanes each).
template <Generator G>
void tile_screens(const detail::NoiseSpec& spec, std::uint64_t tile, std::uint32_t (&screens)[kLanes]) {
  if constexpr (G == Generator::chacha20) {
    std::uint32_t words[16];
    dpselect::chacha20_stream_block(spec.key.chacha, spec.stream, tile, words);
    for (unsigned l = 0; l < kLanes; ++l) {
      screens[l] = detail::screen_bits(dpselect::chacha20_quarter(words, l / 8), l % 8);
    }
  } else {
    for (unsigned q = 0; q < 4; ++q) {
      const RandomBlock block = dpselect::philox_block(spec.key.philox, spec.stream, 4 * tile + q);
      for (unsigned l = 8 * q; l < 8 * q + 8; ++l) screens[l] = detail::screen_bits(block, l % 8);
    }
  }
}

struct LaneValues {  // score_scanned_group's utility_of_lane: the scan's values again
  const float* values;
  double operator()(unsigned lane) const { return static_cast<double>(values[lane]); }
};

// The best (score, index) over several offers, for the warp-wide policy and the round maxima.
struct Best {
  double score = -kInfinity;
  std::uint64_t index = dpselect::kNoIndex;
  void offer(double s, std::uint64_t i) {
    if (detail::ranks_before(s, i, score, index)) {
      score = s;
      index = i;
    }
  }
  double threshold() const { return score; }
};

// ---------------------------------------------------------------------------------------------
// Counting.

struct Tally {
  double warp = 0;        // warp instructions issued
  double lane = 0;        // lane instructions (a warp instruction times its active lanes)
  double race_warp = 0;   // the same, in race regions only (race, loop, offers, draws)
  double race_lane = 0;
  double draw_warp = 0;   // warp instructions of follower draws alone
  double tiles = 0;
  double groups = 0;
  double raced_groups = 0;  // groups that passed the screen and drew their race block
  double race_tiles = 0;    // tiles where a race region was issued at all
  double draws = 0;         // follower blocks drawn (lanes)
  double draw_issues = 0;   // warp-level issues of the follower-draw region
  double publishes = 0;
  double warps = 0;

  void issue(double cost, unsigned active, bool race_region) {
    warp += cost;
    lane += cost * active;
    if (race_region) {
      race_warp += cost;
      race_lane += cost * active;
    }
  }
  // A warp's pass begins: its once-per-warp costs.
  void start_warp(double once_per_warp) {
    warps = 1;
    issue(once_per_warp, kLanes, false);
  }
  // A tile's scan and screen, all lanes.
  void start_tile(double cost) {
    tiles += 1;
    groups += kLanes;
    issue(cost, kLanes, false);
  }
  // One issue of the follower-draw region by `drawing` lanes (none: nothing issued).
  void follower_draws(double cost, unsigned drawing) {
    if (drawing == 0) return;
    issue(cost, drawing, true);
    draw_warp += cost;
    draws += drawing;
    draw_issues += 1;
  }
  // One race_group_by_warp: the race, all lanes (warp_race_cost), and its followers' draws.
  void warp_race(const WarpCosts& c, unsigned drawing, bool first_in_tile) {
    raced_groups += 1;
    issue(warp_race_cost(c, first_in_tile), kLanes, true);
    follower_draws(c.follower_draw, drawing);
  }
  void add(const Tally& o) {
    warp += o.warp; lane += o.lane; race_warp += o.race_warp; race_lane += o.race_lane; draw_warp += o.draw_warp;
    tiles += o.tiles; groups += o.groups; raced_groups += o.raced_groups; race_tiles += o.race_tiles;
    draws += o.draws; draw_issues += o.draw_issues; publishes += o.publishes; warps += o.warps;
  }
};

// ---------------------------------------------------------------------------------------------
// One tile's inputs, as every replay reads them.

struct TileInputs {
  float values[kLanes][kLanes];
  std::uint32_t screens[kLanes];
  double bound[kLanes];
  double reach[kLanes];  // fma(c, largest utility, bound): the screen test's left side
  detail::GroupScan scan[kLanes];
};

template <Generator G>
void load_tile(const detail::NoiseSpec& spec, const Data& data, const double* bounds, std::uint64_t tile,
               TileInputs& in) {
  tile_screens<G>(spec, tile, in.screens);
  for (unsigned l = 0; l < kLanes; ++l) {
    data.group(tile * kLanes + l, in.values[l]);
    float largest = -std::numeric_limits<float>::infinity();
    for (unsigned j = 0; j < kLanes; ++j) largest = in.values[l][j] > largest ? in.values[l][j] : largest;
    in.bound[l] = bounds[detail::screen_bound_slot(in.screens[l])];
    in.scan[l] = detail::GroupScan{static_cast<double>(largest), detail::kWholeGroup, 0u};
    in.reach[l] = detail::fma_rn(spec.score_scale, in.scan[l].largest_utility, in.bound[l]);
  }
}

// The widest of the `pending` lanes (non-empty), the lowest on ties (widest_pending_lane: warp
// max, then the ballot's first lane).
inline unsigned widest_pending(std::uint32_t pending, const double (&reach)[kLanes]) {
  unsigned next = kLanes;
  for (unsigned l = 0; l < kLanes; ++l) {
    if (((pending >> l) & 1u) != 0 && (next == kLanes || reach[l] > reach[next])) next = l;
  }
  return next;
}

// race_group_by_warp (include/dpselect/detail/device_groups.cuh) on group `lane` of the loaded
// tile `tile`: every lane draws the race block; the leader's score is offered, then each follower
// whose bound clears the threshold draws its own block: by_leader (the single pick, rows), the
// larger of the leader's score and `threshold`; by_threshold_only (top-k, whose followers meet
// the k-th score), `threshold`. Only the candidates of `lanes` are scored (score_scanned_group
// over a window of them, as the per-lane top-k kernel did). `offer(lane, score, index)` takes each
// score. Returns the threshold the followers met, and which followers drew.
enum class FollowersMeet { by_leader, by_threshold_only };
struct WarpRaceOutcome {
  double threshold;
  unsigned drawing;      // followers that drew
  std::uint32_t drawn;   // their lanes
  unsigned leader_lane;  // the race's leader
};

template <Generator G, class Offer>
WarpRaceOutcome replay_warp_race(const detail::NoiseSpec& spec, const TileInputs& in, std::uint64_t tile,
                                 unsigned lane, double threshold, Offer&& offer,
                                 FollowersMeet meet = FollowersMeet::by_leader, std::uint32_t lanes = ~0u) {
  const std::uint64_t group = tile * kLanes + lane;
  const std::uint64_t first_index = group * kLanes;
  const float(&values)[kLanes] = in.values[lane];
  const detail::GroupRace race = detail::group_race<detail::GeneratorBlocks<G>>(spec, group, in.screens[lane]);
  const double leader_noise = detail::race_noise(spec.mechanism, race.leader_time);
  const double leader_score =
      detail::fma_rn(spec.score_scale, static_cast<double>(values[race.leader_lane]), leader_noise);
  if (((lanes >> race.leader_lane) & 1u) != 0) offer(race.leader_lane, leader_score, first_index + race.leader_lane);
  const double follower_threshold =
      meet == FollowersMeet::by_leader && leader_score > threshold ? leader_score : threshold;
  const double follower_bound = detail::add_rn(leader_noise, detail::kScreenMargin);
  WarpRaceOutcome out{follower_threshold, 0, 0, race.leader_lane};
  for (unsigned j = 0; j < kLanes; ++j) {
    if (j == race.leader_lane || ((lanes >> j) & 1u) == 0) continue;
    const double u = static_cast<double>(values[j]);
    if (detail::fma_rn(spec.score_scale, u, follower_bound) < follower_threshold) continue;
    ++out.drawing;
    out.drawn |= 1u << j;
    const double time = detail::follower_time<detail::GeneratorBlocks<G>>(spec, race, first_index + j);
    offer(j, detail::fma_rn(spec.score_scale, u, detail::race_noise(spec.mechanism, time)), first_index + j);
  }
  return out;
}

// Scores into `best` every group of the loaded tile `tile` whose reach clears best's score as it
// stands, the widest first (score_scanned_group, the per-lane scoring): the exact best of the
// tile's candidates wherever it beats `best`.
template <Generator G>
void score_tile_widest_first(const detail::NoiseSpec& spec, const TileInputs& in, std::uint64_t tile, Best& best) {
  unsigned order[kLanes];
  unsigned passing = 0;
  for (unsigned l = 0; l < kLanes; ++l) {
    if (!(in.reach[l] < best.score)) order[passing++] = l;
  }
  std::sort(order, order + passing, [&](unsigned a, unsigned b) { return in.reach[a] > in.reach[b]; });
  for (unsigned k = 0; k < passing; ++k) {
    const unsigned l = order[k];
    if (in.reach[l] < best.score) break;
    detail::score_scanned_group<detail::GeneratorBlocks<G>>(spec, tile * kLanes + l, in.screens[l], in.bound[l],
                                                            in.scan[l], LaneValues{in.values[l]}, best);
  }
}

// ---------------------------------------------------------------------------------------------
// Policies and options.

enum class Policy { per_lane, shared, warp_wide, implemented };
inline const char* policy_name(Policy p) {
  return p == Policy::per_lane ? "per-lane"
         : p == Policy::shared ? "shared"
         : p == Policy::warp_wide ? "warp-wide"
                                  : "implemented";
}

// The options both kernels read (the rows kernel's own: RowsOptions, rows.hpp).
struct Options {
  std::vector<Policy> policies{Policy::per_lane, Policy::shared, Policy::warp_wide, Policy::implemented};
  std::vector<Generator> generators{Generator::chacha20, Generator::philox};
  std::vector<std::string> shapes;  // empty: all
  int log2_n = 30;
  std::uint64_t warp_stride = 8;  // replay warps 0, s, 2s, ...
  std::uint64_t steep_warp_stride = 32;
  bool check = false;
  // The single pass's mechanism (--mechanism): the replay's races, draws and bounds are that
  // mechanism's (the library's group_race, follower_time and race_noise); the prices stay the
  // exponential mechanism's SASS costs (sass_regions.py never takes the other noise branches).
  Mechanism mechanism = Mechanism::exponential;
};

// Every shape --shape names, in the order of the tables.
inline std::vector<Shape> all_shapes() {
  return {{"bench", ShapeKind::bench, 1.0},         {"bench-eps0.01", ShapeKind::bench, 0.01},
          {"bench-eps100", ShapeKind::bench, 100.0}, {"sorted", ShapeKind::sorted, 1.0},
          {"linear-i/32", ShapeKind::linear32, 1.0}, {"gentle-i/1024", ShapeKind::linear1024, 1.0},
          {"steep-i", ShapeKind::steep, 1.0},
          {"equal", ShapeKind::equal, 1.0},          {"pareto", ShapeKind::pareto, 1.0}};
}

}  // namespace schedule_model
