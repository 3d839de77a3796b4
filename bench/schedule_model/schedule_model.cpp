// SPDX-License-Identifier: Apache-2.0
// Schedule model of the fused GPU selection pass (include/dpselect/detail/fused_select_kernel.cuh,
// warp_tiles.cuh): replays, on the CPU, which groups of 32 candidates each warp of the H100 grid
// screens, races and draws followers for, with the library's own functions and the benchmark's
// key, and prices what it finds in warp-level instructions per region of the kernel's SASS
// (sass_regions.py). Its output is warp instructions per 1,024-candidate tile, the average number
// of active lanes where races run, and a predicted pass time relative to one read of the array.
//
// Why a model: the pass is bound neither by memory nor by arithmetic but by how many warp
// instructions it issues, and most of them are issued by one or two lanes of a warp (a race, run
// by the lane whose group passed the screen, while the other 31 wait). How many depends on the
// data, the generator and the threshold policy, which a CPU replay can count exactly; the GPU is
// needed only to calibrate one constant (the measured issue rate).
//
// Policies (--policy):
//   per-lane   the measured kernel (commit e7c9489; 1900c764 on the H100): each lane screens its
//              group against its own running best; a passing group is raced by its lane alone
//              (score_scanned_group), while the warp's other passing lanes race in the same
//              divergent region.
//   shared     the warp's threshold T = max(every lane's running best, a grid-wide word read once
//              per tile); the lane with the largest reach races first (one lane active), T rises to
//              the warp's best, then the other lanes whose reach still clears T race (divergent).
//              The grid-wide word is modelled in rounds: at step s every warp processes its s-th
//              tile, and the word it reads is the largest score published by the end of step s-1.
//   warp-wide  what-if: the same screening as `shared`, but each race is run by the whole warp,
//              one candidate per lane: one generator block for the race, one (per drawing lane)
//              for the followers, and the threshold updated after each race.
//   implemented  the kernel since commit 4ceede2 (WarpScreenThreshold, device_groups.cuh): a
//              warp-uniform threshold T = max(the warp's running threshold, the grid-wide word read
//              by lane 0 each tile); a tile whose widest reach is below T is done; else the pending
//              lanes (reach >= T) are raced one at a time by the whole warp, the widest pending
//              first (lowest lane on ties), T raised after each race to the warp max of every
//              lane's best and the leader's score, and the pending lanes whose reach fell below T
//              dropped; lane 0 publishes T with an atomic max when it rose over the tile. Priced
//              by the per-region costs of that kernel's own SASS (WarpCosts).
//
// per-lane, shared and warp-wide keep the scoring of the measured kernel (commit e7c9489), in
// which a group's lanes are looked at in increasing order, the leader offered at its turn
// (score_group_e7c9489 below); `implemented` follows race_group, the leader offered first.
//
// Build and run: bench/schedule_model/run.sh (or the command in README.md).
#include <omp.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "dpselect/detail/noise_positions.hpp"
#include "dpselect/detail/screened_scoring.hpp"
#include "dpselect/noise.hpp"
#include "dpselect/random_key.hpp"
#include "dpselect/shard_result.hpp"

namespace {

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

// The H100 of the measurements (bench/results/2026-11-24-nvidia-h100-80gb-hbm3/): 132 SMs,
// 256-thread blocks, 2 blocks per SM with ChaCha20 and 3 with Philox
// (kSelectMinBlocksPerMultiprocessor), one resident wave: warp w takes tiles w, w + W, ...
constexpr int kMultiprocessors = 132;
constexpr int kWarpsPerBlock = 8;
constexpr unsigned kLanes = 32;

std::uint64_t splitmix64(std::uint64_t x) {
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
// ChaCha20: a generator block is 960 instructions of quarter rounds; the tile's screen block is
// computed once per 32 tiles (30 per tile) and handed out with 16 shuffles.
constexpr RegionCosts kChaChaCosts{499.2, 1121.8, 24.0, 10.0, 1136.0, 912.0};
// Philox: a generator block is about 100 instructions; every lane computes its screen block.
constexpr RegionCosts kPhiloxCosts{461.0, 228.5, 23.0, 10.0, 237.2, 896.0};

// Costs of the new policies' own bookkeeping, estimated (no SASS yet): a warp-wide max of 64-bit
// values is 5 butterfly steps of 2 shuffles, a compare and 2 selects (25); the reach's arg-max
// carries a lane too (30); the grid-wide word is one load. Per tile: both reductions, the load and
// the ballot of the lanes that pass (about 65). After the first race: the warp max again (25).
// A publish (an atomic max on the grid-wide word) by one lane: about 10.
constexpr double kSharedTileExtra = 65.0;
constexpr double kSharedSecondMax = 25.0;
constexpr double kPublish = 10.0;
// warp-wide: per race, the leader's time and lane broadcast (4), each lane's coalesced reload of
// its utility and follower test (8), and the warp arg-max of the scores (40), at 32 lanes.
constexpr double kWarpWideRaceExtra = 52.0;

// The implemented kernel (WarpScreenThreshold, kernels/select_arrays.cu at commit 4ceede2, nvcc 13.0
// -O3, sm_90), from sass_regions.py's scenarios on fused_select_kernel<ArraySource<float>, G, 256>:
// the expected instructions of the warp's path (the race is warp-uniform; a follower draw is one
// lane's path through the draw, the drawing lanes together). Every cost is issued once per warp.
struct WarpCosts {
  double tile;           // per tile, 32 lanes: staging + scan, screen, the bound, the word's load and
                         // shuffle, the reach and its warp max, the test (bookkeeping: screen_test 79 / 76)
  double pass;           // a tile whose widest reach clears T: the pending ballot, the loop's entry
                         // and exit, the compare of T after the tile
  double race;           // a race, 32 lanes: the widest pending lane (warp max, ballot), 5 argument
                         // shuffles, race block, E_V, leader noise, each lane's utility load, the
                         // leader's score and shuffle, the follower test, the offer, the warp max
                         // of T, the ballot of the lanes still pending
  double follower_draw;  // a race where some follower draws (drawing lanes): a generator block, E',
                         // Gumbel, the fma
  double publish;        // lane 0's atomic max of T on the grid-wide word
  double once_per_warp;  // bound table fill before the tile loop, block reduction after it
};
constexpr WarpCosts kChaChaWarpCosts{548.2, 20.0, 1267.6, 1119.8, 13.0, 921.0};
constexpr WarpCosts kPhiloxWarpCosts{510.0, 20.0, 378.0, 222.0, 13.0, 902.0};

// ---------------------------------------------------------------------------------------------
// Measured (H100 80GB HBM3, 2026-11-24, ncu --clock-control none; the files say how).
struct Measured {
  double ipc_active;      // Executed Ipc Active, warp instructions per active SM cycle
  double ipc_elapsed;     // Executed Ipc Elapsed
  double sm_active_cycles;
  double duration_ms;
  double active_lanes;  // Avg. Active Threads Per Warp
};
constexpr Measured kChaChaMeasured{1.92, 1.81, 22239432.79, 11.91, 4.64};
constexpr Measured kPhiloxMeasured{2.57, 2.49, 6846260.36, 3.57, 8.60};
constexpr double kClockHz = 1.98e9;          // SM frequency under load (ncu)
constexpr double kReadMs = 1.399;            // gpu_read/float/n:2^30 (gpu.txt, same machine)
// The H200 (bench/results/2026-11-26-nvidia-h200/): the same 132 SMs at the same clock, so the same
// issue time; one read of the same array: 0.976 ms.
constexpr double kReadH200Ms = 0.976;
constexpr double kCubArgMaxMs = 1.477;       // gpu_cub_argmax/float/n:2^30
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

float bench_value(std::uint64_t k) {  // fill_kernel's float arithmetic, in float
  return static_cast<float>(k) * 0x1p-24f * 1000.0f;
}

// The heavy-tailed count of 53-bit value x: floor(u^(-1/1.2)) - 1 with u = (x + 1) 2^-53, which
// is decreasing in u. A table over the top 12 bits of x holds the count at both ends of each
// cell; where they agree (all but about 3 % of the values) that is the count, elsewhere pow.
float pareto_count(std::uint64_t x) {
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

  // The 32 utilities of group g.
  void group(std::uint64_t g, float (&v)[kLanes]) const {
    const std::uint64_t first = g * kLanes;
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
// Random bits: the library's blocks, with a record of what a group's scoring drew.

// What a group's scoring drew: whether it raced, its leader's lane, and the lanes whose follower
// block it drew.
struct DrawLog {
  bool raced = false;
  unsigned leader_lane = 0;
  std::uint32_t draws = 0;
};
thread_local DrawLog g_log;

// detail::GeneratorBlocks<G> with a record of the positions read: race blocks (2^61 + g) and
// candidate blocks (2^63 + i). Passed as score_group_e7c9489's Blocks, so the replay runs the
// measured kernel's scoring with the library's own race and follower draws, and sees exactly which
// draws it makes.
template <Generator G>
struct RecordingBlocks {
  static RandomBlock at(const dpselect::RandomKey& key, std::uint64_t stream, std::uint64_t position) {
    const RandomBlock block = detail::GeneratorBlocks<G>::at(key, stream, position);
    if (position >= detail::kDetailPositionOffset) {
      g_log.draws |= 1u << ((position - detail::kDetailPositionOffset) % kLanes);
    } else if (position >= detail::kRacePositionOffset) {
      g_log.raced = true;
      g_log.leader_lane = detail::race_leader_lane(block);
    }
    return block;
  }
};

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

// score_scanned_group as the measured kernel (commit e7c9489) ran it, for the per-lane, shared and
// warp-wide replays: the group's lanes in increasing order, the leader offered at its turn, each
// follower tested against the sink's threshold as it stands then. (The library's definition now
// offers the leader first; the per-lane calibration is that of the kernel that was measured.)
template <class Blocks, class Sink, class LaneUtility>
void score_group_e7c9489(const detail::NoiseSpec& spec, std::uint64_t group, std::uint32_t screen, double bound,
                         const detail::GroupScan& scan, const LaneUtility& utility_of_lane, Sink& sink) {
  const std::uint64_t first_index = group * detail::kCandidatesPerGroup;
  if (scan.excluded != 0 && sink.threshold() == -kInfinity) {
    for (unsigned int lanes = scan.excluded; lanes != 0; lanes &= lanes - 1) {
      sink.offer(-kInfinity, first_index + detail::lowest_lane(lanes));
    }
  }
  if (scan.valid == 0 || detail::fma_rn(spec.score_scale, scan.largest_utility, bound) < sink.threshold()) return;
  const detail::GroupRace race = detail::group_race<Blocks>(spec, group, screen);
  const double leader_noise = detail::race_noise(spec.mechanism, race.leader_time);
  const double follower_bound = detail::add_rn(leader_noise, detail::kScreenMargin);
  for (unsigned int lanes = scan.valid; lanes != 0; lanes &= lanes - 1) {
    const unsigned int lane = detail::lowest_lane(lanes);
    const double u = utility_of_lane(lane);
    const std::uint64_t index = first_index + lane;
    if (lane == race.leader_lane) {
      sink.offer(detail::fma_rn(spec.score_scale, u, leader_noise), index);
    } else if (!(detail::fma_rn(spec.score_scale, u, follower_bound) < sink.threshold())) {
      sink.offer(detail::fma_rn(spec.score_scale, u,
                                detail::race_noise(spec.mechanism, detail::follower_time<Blocks>(spec, race, index))),
                 index);
    }
  }
}

struct LaneValues {  // score_scanned_group's utility_of_lane: the scan's values again
  const float* values;
  double operator()(unsigned lane) const { return static_cast<double>(values[lane]); }
};

// A lane's sink under a shared threshold: offers go to the lane's own accumulator, the threshold
// is the larger of its best and the warp's T (a score some candidate is known to reach).
struct SharedSink {
  dpselect::detail::ShardAccumulator& own;
  double floor;
  double threshold() const { return std::max(own.threshold(), floor); }
  void offer(double score, std::uint64_t index) { own.offer(score, index); }
};

// The best (score, index) over several offers, for the warp-wide policy and the round maxima.
struct Best {
  double score = -kInfinity;
  std::uint64_t index = dpselect::kNoIndex;
  void offer(double s, std::uint64_t i) {
    if (s > score || (s == score && i < index)) {
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
  void add(const Tally& o) {
    warp += o.warp; lane += o.lane; race_warp += o.race_warp; race_lane += o.race_lane; draw_warp += o.draw_warp;
    tiles += o.tiles; groups += o.groups; raced_groups += o.raced_groups; race_tiles += o.race_tiles;
    draws += o.draws; draw_issues += o.draw_issues; publishes += o.publishes; warps += o.warps;
  }
};

// The races of one divergent region: `lanes` raced together in the kernel's lockstep follower
// loop. Charges the race region once for all of them, each of the 32 loop iterations once, and a
// leader offer or a follower draw at iteration j once if any of them makes one there.
void charge_divergent_races(Tally& t, const RegionCosts& c, const DrawLog (&logs)[kLanes], std::uint32_t lanes) {
  const unsigned racing = static_cast<unsigned>(std::popcount(lanes));
  if (racing == 0) return;
  t.raced_groups += racing;
  t.issue(c.race + kLanes * c.loop_iteration, racing, true);
  for (unsigned j = 0; j < kLanes; ++j) {
    unsigned leaders = 0;
    unsigned drawing = 0;
    for (std::uint32_t rest = lanes; rest != 0; rest &= rest - 1) {
      const DrawLog& log = logs[std::countr_zero(rest)];
      leaders += log.leader_lane == j;
      drawing += (log.draws >> j) & 1u;
    }
    if (leaders != 0) t.issue(c.leader_offer, leaders, true);
    if (drawing != 0) {
      t.issue(c.follower_draw, drawing, true);
      t.draw_warp += c.follower_draw;
      t.draws += drawing;
      t.draw_issues += 1;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// One warp's whole pass under each policy. `global` (shared, warp-wide): the grid-wide word seen
// at each step.

struct Grid {
  std::uint64_t warps;
  std::uint64_t tiles;
};

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

template <Generator G>
Tally run_per_lane(const detail::NoiseSpec& spec, const Data& data, const double* bounds, const RegionCosts& c,
                   const Grid& grid, std::uint64_t warp, Best& result) {
  Tally t;
  t.warps = 1;
  t.issue(c.once_per_warp, kLanes, false);
  detail::ShardAccumulator acc[kLanes];
  TileInputs in;
  DrawLog logs[kLanes];
  for (std::uint64_t tile = warp; tile < grid.tiles; tile += grid.warps) {
    load_tile<G>(spec, data, bounds, tile, in);
    t.tiles += 1;
    t.groups += kLanes;
    t.issue(c.tile, kLanes, false);
    std::uint32_t racing = 0;
    for (unsigned l = 0; l < kLanes; ++l) {
      g_log = DrawLog{};
      score_group_e7c9489<RecordingBlocks<G>>(spec, tile * kLanes + l, in.screens[l], in.bound[l], in.scan[l],
                                              LaneValues{in.values[l]}, acc[l]);
      logs[l] = g_log;
      if (g_log.raced) racing |= 1u << l;
    }
    charge_divergent_races(t, c, logs, racing);
    if (racing != 0) t.race_tiles += 1;
  }
  for (unsigned l = 0; l < kLanes; ++l) result.offer(acc[l].result.best_score, acc[l].result.best_index);
  return t;
}

template <Generator G>
Tally run_shared(const detail::NoiseSpec& spec, const Data& data, const double* bounds, const RegionCosts& c,
                 const Grid& grid, std::uint64_t warp, const std::vector<double>& global, Best& result) {
  Tally t;
  t.warps = 1;
  t.issue(c.once_per_warp, kLanes, false);
  detail::ShardAccumulator acc[kLanes];
  TileInputs in;
  DrawLog logs[kLanes];
  std::uint64_t step = 0;
  for (std::uint64_t tile = warp; tile < grid.tiles; tile += grid.warps, ++step) {
    load_tile<G>(spec, data, bounds, tile, in);
    t.tiles += 1;
    t.groups += kLanes;
    t.issue(c.tile + kSharedTileExtra, kLanes, false);
    double warp_best = -kInfinity;
    for (unsigned l = 0; l < kLanes; ++l) warp_best = std::max(warp_best, acc[l].threshold());
    const double best_before = warp_best;
    double floor = std::max(warp_best, global[step]);
    // The most promising group first, alone (lowest lane on ties).
    unsigned first = 0;
    for (unsigned l = 1; l < kLanes; ++l) first = in.reach[l] > in.reach[first] ? l : first;
    std::uint32_t done = 0;
    bool any = false;
    if (!(in.reach[first] < floor)) {
      g_log = DrawLog{};
      SharedSink sink{acc[first], floor};
      score_group_e7c9489<RecordingBlocks<G>>(spec, tile * kLanes + first, in.screens[first], in.bound[first],
                                              in.scan[first], LaneValues{in.values[first]}, sink);
      logs[first] = g_log;
      charge_divergent_races(t, c, logs, g_log.raced ? 1u << first : 0u);
      any = g_log.raced;
      for (unsigned l = 0; l < kLanes; ++l) warp_best = std::max(warp_best, acc[l].threshold());
      floor = std::max(floor, warp_best);
      t.issue(kSharedSecondMax, kLanes, false);
      done = 1u << first;
    }
    // Then every other lane that still clears T, together (divergent, as in the per-lane kernel).
    std::uint32_t racing = 0;
    for (unsigned l = 0; l < kLanes; ++l) {
      if ((done >> l) & 1u) continue;
      g_log = DrawLog{};
      SharedSink sink{acc[l], floor};
      score_group_e7c9489<RecordingBlocks<G>>(spec, tile * kLanes + l, in.screens[l], in.bound[l], in.scan[l],
                                              LaneValues{in.values[l]}, sink);
      logs[l] = g_log;
      if (g_log.raced) racing |= 1u << l;
    }
    charge_divergent_races(t, c, logs, racing);
    if (any || racing != 0) t.race_tiles += 1;
    for (unsigned l = 0; l < kLanes; ++l) warp_best = std::max(warp_best, acc[l].threshold());
    if (warp_best > best_before) {  // the kernel publishes whenever its best rose
      t.publishes += 1;
      t.issue(kPublish, 1, false);
    }
  }
  for (unsigned l = 0; l < kLanes; ++l) result.offer(acc[l].result.best_score, acc[l].result.best_index);
  return t;
}

template <Generator G>
Tally run_warp_wide(const detail::NoiseSpec& spec, const Data& data, const double* bounds, const RegionCosts& c,
                    const Grid& grid, std::uint64_t warp, const std::vector<double>& global, Best& result) {
  Tally t;
  t.warps = 1;
  t.issue(c.once_per_warp, kLanes, false);
  Best best;  // the warp's; lanes no longer keep bests of their own
  TileInputs in;
  std::uint64_t step = 0;
  for (std::uint64_t tile = warp; tile < grid.tiles; tile += grid.warps, ++step) {
    load_tile<G>(spec, data, bounds, tile, in);
    t.tiles += 1;
    t.groups += kLanes;
    t.issue(c.tile + kSharedTileExtra, kLanes, false);
    const double best_before = best.score;
    unsigned first = 0;
    for (unsigned l = 1; l < kLanes; ++l) first = in.reach[l] > in.reach[first] ? l : first;
    // The queue: the most promising group, then the others in lane order; each is tested against
    // the threshold as it stands when its turn comes.
    unsigned order[kLanes];
    order[0] = first;
    for (unsigned l = 0, k = 1; l < kLanes; ++l) {
      if (l != first) order[k++] = l;
    }
    bool any = false;
    for (unsigned k = 0; k < kLanes; ++k) {
      const unsigned l = order[k];
      const double floor = std::max(best.score, global[step]);
      if (in.reach[l] < floor) continue;
      const std::uint64_t group = tile * kLanes + l;
      // The race, by the whole warp: the race block and the leader's noise (every lane, 32
      // active), the leader offered first so that the followers are tested against its score.
      const detail::GroupRace race = detail::group_race<detail::GeneratorBlocks<G>>(spec, group, in.screens[l]);
      const double leader_noise = detail::race_noise(spec.mechanism, race.leader_time);
      const double follower_bound = detail::add_rn(leader_noise, detail::kScreenMargin);
      const std::uint64_t first_index = group * kLanes;
      best.offer(detail::fma_rn(spec.score_scale, in.values[l][race.leader_lane], leader_noise),
                 first_index + race.leader_lane);
      const double tested = std::max(best.score, global[step]);
      unsigned drawing = 0;
      Best followers;
      for (unsigned j = 0; j < kLanes; ++j) {
        if (j == race.leader_lane) continue;
        const double u = in.values[l][j];
        if (detail::fma_rn(spec.score_scale, u, follower_bound) < tested) continue;
        ++drawing;
        const double time = detail::follower_time<detail::GeneratorBlocks<G>>(spec, race, first_index + j);
        followers.offer(detail::fma_rn(spec.score_scale, u, detail::race_noise(spec.mechanism, time)), first_index + j);
      }
      best.offer(followers.score, followers.index);
      any = true;
      t.raced_groups += 1;
      t.issue(c.race + kWarpWideRaceExtra, kLanes, true);
      if (drawing != 0) {
        t.issue(c.follower_draw, drawing, true);
        t.draw_warp += c.follower_draw;
        t.draws += drawing;
        t.draw_issues += 1;
      }
    }
    if (any) t.race_tiles += 1;
    if (best.score > best_before) {
      t.publishes += 1;
      t.issue(kPublish, 1, false);
    }
  }
  result.offer(best.score, best.index);
  return t;
}

// The implemented kernel, WarpScreenThreshold::score and race_group (device_groups.cuh), step by
// step: `threshold_` is the warp's running threshold, each lane keeps its own accumulator (lane j
// offers candidate 32 g + j of every group g the warp races), and every test is the kernel's.
template <Generator G>
Tally run_implemented(const detail::NoiseSpec& spec, const Data& data, const double* bounds, const WarpCosts& c,
                      const Grid& grid, std::uint64_t warp, const std::vector<double>& global, Best& result) {
  Tally t;
  t.warps = 1;
  t.issue(c.once_per_warp, kLanes, false);
  detail::ShardAccumulator acc[kLanes];
  double warp_threshold = -kInfinity;  // threshold_: known_score is -inf in the benchmark
  TileInputs in;
  std::uint64_t step = 0;
  for (std::uint64_t tile = warp; tile < grid.tiles; tile += grid.warps, ++step) {
    load_tile<G>(spec, data, bounds, tile, in);
    t.tiles += 1;
    t.groups += kLanes;
    t.issue(c.tile, kLanes, false);
    // Lane 0's load of the word, shuffled to the warp.
    if (global[step] > warp_threshold) warp_threshold = global[step];
    double widest = -kInfinity;
    for (unsigned l = 0; l < kLanes; ++l) widest = std::max(widest, in.reach[l]);
    if (widest < warp_threshold) continue;
    t.issue(c.pass, kLanes, false);
    double threshold = warp_threshold;
    std::uint32_t pending = 0;
    for (unsigned l = 0; l < kLanes; ++l) {
      if (!(in.reach[l] < threshold)) pending |= 1u << l;
    }
    t.race_tiles += 1;
    while (pending != 0) {
      // The widest pending lane, the lowest on ties (warp max, then the ballot's first lane).
      unsigned next = 0;
      double pending_reach = -kInfinity;
      for (unsigned l = 0; l < kLanes; ++l) {
        if (((pending >> l) & 1u) != 0 && in.reach[l] > pending_reach) {
          pending_reach = in.reach[l];
          next = l;
        }
      }
      // race_group: every lane draws the race block; lane j scores candidate 32 g + j.
      const std::uint64_t group = tile * kLanes + next;
      const std::uint64_t first_index = group * kLanes;
      const detail::GroupRace race = detail::group_race<detail::GeneratorBlocks<G>>(spec, group, in.screens[next]);
      const double leader_noise = detail::race_noise(spec.mechanism, race.leader_time);
      const double leader_score =
          detail::fma_rn(spec.score_scale, static_cast<double>(in.values[next][race.leader_lane]), leader_noise);
      acc[race.leader_lane].offer(leader_score, first_index + race.leader_lane);
      const double follower_threshold = leader_score > threshold ? leader_score : threshold;
      const double follower_bound = detail::add_rn(leader_noise, detail::kScreenMargin);
      unsigned drawing = 0;
      for (unsigned j = 0; j < kLanes; ++j) {
        if (j == race.leader_lane) continue;
        const double u = static_cast<double>(in.values[next][j]);
        if (detail::fma_rn(spec.score_scale, u, follower_bound) < follower_threshold) continue;
        ++drawing;
        const double time = detail::follower_time<detail::GeneratorBlocks<G>>(spec, race, first_index + j);
        acc[j].offer(detail::fma_rn(spec.score_scale, u, detail::race_noise(spec.mechanism, time)), first_index + j);
      }
      threshold = follower_threshold;
      for (unsigned l = 0; l < kLanes; ++l) threshold = std::max(threshold, acc[l].threshold());
      t.raced_groups += 1;
      t.issue(c.race, kLanes, true);
      if (drawing != 0) {
        t.issue(c.follower_draw, drawing, true);
        t.draw_warp += c.follower_draw;
        t.draws += drawing;
        t.draw_issues += 1;
      }
      // The lanes still pending: those whose reach clears the new threshold.
      pending &= ~(1u << next);
      for (unsigned l = 0; l < kLanes; ++l) {
        if (in.reach[l] < threshold) pending &= ~(1u << l);
      }
    }
    if (threshold > warp_threshold) {
      warp_threshold = threshold;
      t.publishes += 1;
      t.issue(c.publish, 1, false);
    }
  }
  for (unsigned l = 0; l < kLanes; ++l) result.offer(acc[l].result.best_score, acc[l].result.best_index);
  return t;
}

// The grid-wide word at every step: by the end of step s, every warp whose best rose has
// published it, and the largest score of the candidates of steps 0..s is never screened out
// (every threshold is a score some candidate reaches), so the word read at step s + 1 is the
// largest exact score over the tiles of steps 0..s. Computed here by a screened pass over each
// step's tiles (the tiles' groups in decreasing reach, the threshold carried along), which only
// needs to know whether a step beats the word so far, and by how much.
template <Generator G>
std::vector<double> grid_word(const detail::NoiseSpec& spec, const Data& data, const double* bounds,
                              const Grid& grid, Best& overall) {
  const std::uint64_t steps = (grid.tiles + grid.warps - 1) / grid.warps;
  std::vector<double> word(steps + 1, -kInfinity);
  Best carried;
  for (std::uint64_t s = 0; s < steps; ++s) {
    const std::uint64_t begin = s * grid.warps;
    const std::uint64_t end = std::min(grid.tiles, begin + grid.warps);
    const double floor = carried.score;
    std::vector<Best> bests(omp_get_max_threads());
#pragma omp parallel
    {
      Best mine;
      mine.score = floor;
      TileInputs in;
#pragma omp for schedule(static)
      for (std::int64_t k = 0; k < static_cast<std::int64_t>(end - begin); ++k) {
        const std::uint64_t tile = end - 1 - static_cast<std::uint64_t>(k);  // high tiles first
        load_tile<G>(spec, data, bounds, tile, in);
        unsigned order[kLanes];
        unsigned passing = 0;
        for (unsigned l = 0; l < kLanes; ++l) {
          if (!(in.reach[l] < mine.score)) order[passing++] = l;
        }
        std::sort(order, order + passing, [&](unsigned a, unsigned b) { return in.reach[a] > in.reach[b]; });
        for (unsigned k = 0; k < passing; ++k) {
          const unsigned l = order[k];
          if (in.reach[l] < mine.score) break;
          detail::score_scanned_group<detail::GeneratorBlocks<G>>(spec, tile * kLanes + l, in.screens[l], in.bound[l],
                                                                  in.scan[l], LaneValues{in.values[l]}, mine);
        }
      }
      bests[omp_get_thread_num()] = mine;
    }
    for (const Best& b : bests) {
      if (b.index != dpselect::kNoIndex) carried.offer(b.score, b.index);
    }
    word[s + 1] = carried.score;
  }
  overall = carried;
  return word;
}

// ---------------------------------------------------------------------------------------------
// Driver.

enum class Policy { per_lane, shared, warp_wide, implemented };
const char* policy_name(Policy p) {
  return p == Policy::per_lane ? "per-lane"
         : p == Policy::shared ? "shared"
         : p == Policy::warp_wide ? "warp-wide"
                                  : "implemented";
}

struct Options {
  std::vector<Policy> policies{Policy::per_lane, Policy::shared, Policy::warp_wide, Policy::implemented};
  std::vector<Generator> generators{Generator::chacha20, Generator::philox};
  std::vector<std::string> shapes;  // empty: all
  int log2_n = 30;
  std::uint64_t warp_stride = 8;  // replay warps 0, s, 2s, ...
  std::uint64_t steep_warp_stride = 32;
  bool check = false;
};

std::vector<Shape> all_shapes() {
  return {{"bench", ShapeKind::bench, 1.0},         {"bench-eps0.01", ShapeKind::bench, 0.01},
          {"bench-eps100", ShapeKind::bench, 100.0}, {"sorted", ShapeKind::sorted, 1.0},
          {"linear-i/32", ShapeKind::linear32, 1.0}, {"gentle-i/1024", ShapeKind::linear1024, 1.0},
          {"steep-i", ShapeKind::steep, 1.0},
          {"equal", ShapeKind::equal, 1.0},          {"pareto", ShapeKind::pareto, 1.0}};
}

// Shapes where most groups race with 31 follower draws under the per-lane policy: the replay
// samples fewer warps there to stay within the time budget.
bool is_expensive(const Shape& s) {
  return s.kind == ShapeKind::sorted || s.kind == ShapeKind::linear32 || s.kind == ShapeKind::linear1024 ||
         s.kind == ShapeKind::steep;
}

struct Row {
  Tally tally;
  double sampled_warps;
};

void print_header() {
  std::printf("%-11s %-8s %-14s %6s %7s %8s %8s %7s %8s %7s %8s %8s %8s %9s %8s %7s %7s %7s\n", "policy", "gen",
              "shape", "warps", "pass%", "races/t", "draws/t", "rtile%", "lanes_r", "lanes", "winst/t", "wi_race",
              "wi_draw", "issue_ms", "pass_ms", "x_read", "x_read1", "x_h200");
}

void print_row(Policy p, Generator g, const Shape& s, const Tally& t, const Grid& grid) {
  const Measured& m = g == Generator::chacha20 ? kChaChaMeasured : kPhiloxMeasured;
  const double per_tile = t.warp / t.tiles;
  // The pass's warp instructions for the whole grid: per tile times tiles (the once-per-warp part
  // is inside per_tile, spread over the sampled warps' tiles).
  const double total = per_tile * static_cast<double>(grid.tiles);
  // Issue time at the measured kernel's issue rate (Executed Ipc Elapsed / 4 per scheduler), and
  // at one instruction per scheduler per cycle (x_read1, the bound a converged kernel approaches).
  const double efficiency = m.ipc_elapsed / 4.0;
  const double issue_ms = total / (kMultiprocessors * 4.0 * efficiency * kClockHz) * 1e3;
  const double issue1_ms = total / (kMultiprocessors * 4.0 * kClockHz) * 1e3;
  const double read_ms = kReadMs * static_cast<double>(grid.tiles) / kBenchmarkTiles;
  const double read_h200_ms = kReadH200Ms * static_cast<double>(grid.tiles) / kBenchmarkTiles;
  std::printf("%-11s %-8s %-14s %6.0f %7.3f %8.3f %8.3f %7.2f %8.2f %7.2f %8.0f %8.0f %8.0f %9.3f %8.3f %7.2f %7.2f "
              "%7.2f\n",
              policy_name(p),
              g == Generator::chacha20 ? "chacha20" : "philox", s.name.c_str(), t.warps,
              100.0 * t.raced_groups / t.groups, t.raced_groups / t.tiles, t.draws / t.tiles,
              100.0 * t.race_tiles / t.tiles, t.race_warp > 0 ? t.race_lane / t.race_warp : 0.0, t.lane / t.warp,
              per_tile, (t.race_warp - t.draw_warp) / t.tiles, t.draw_warp / t.tiles, issue_ms,
              std::max(read_ms, issue_ms), std::max(read_ms, issue_ms) / read_ms,
              std::max(read_ms, issue1_ms) / read_ms, std::max(read_h200_ms, issue_ms) / read_h200_ms);
  std::fflush(stdout);
}

template <Generator G>
void run_generator(const Options& opt, const std::vector<Shape>& shapes, const SortedBench* sorted) {
  const std::uint64_t n = std::uint64_t{1} << opt.log2_n;
  const int blocks_per_sm = G == Generator::philox ? 3 : 2;
  const Grid grid{static_cast<std::uint64_t>(kMultiprocessors) * blocks_per_sm * kWarpsPerBlock,
                  n / (kLanes * kLanes)};
  const RegionCosts& costs = G == Generator::chacha20 ? kChaChaCosts : kPhiloxCosts;
  const WarpCosts& warp_costs = G == Generator::chacha20 ? kChaChaWarpCosts : kPhiloxWarpCosts;
  for (const Shape& shape : shapes) {
    detail::NoiseSpec spec{};
    spec.mechanism = Mechanism::exponential;
    spec.score_scale = shape.epsilon / 2.0;  // epsilon / (2 sensitivity), sensitivity 1
    spec.key = dpselect::RandomKey::from_seed(kContextSeed, G);
    spec.stream = kStream;
    spec.utility_limit = kInfinity;
    double bounds[detail::kScreenBoundSlots];
    for (unsigned slot = 0; slot < detail::kScreenBoundSlots; ++slot) {
      bounds[slot] = detail::group_noise_upper_bound(spec.mechanism, detail::screen_of_bound_slot(slot));
    }
    const Data data{&shape, sorted};
    const std::uint64_t stride = is_expensive(shape) ? opt.steep_warp_stride : opt.warp_stride;
    std::vector<std::uint64_t> warps;
    for (std::uint64_t w = 0; w < grid.warps; w += stride) warps.push_back(w);
    std::vector<double> word;
    Best exact;
    const bool needs_word = std::any_of(opt.policies.begin(), opt.policies.end(),
                                        [](Policy p) { return p != Policy::per_lane; });
    const auto start = std::chrono::steady_clock::now();
    if (needs_word) word = grid_word<G>(spec, data, bounds, grid, exact);
    for (const Policy policy : opt.policies) {
      Tally total;
      Best best;
      std::vector<Tally> parts(warps.size());
      std::vector<Best> bests(warps.size());
#pragma omp parallel for schedule(dynamic, 1)
      for (std::int64_t k = 0; k < static_cast<std::int64_t>(warps.size()); ++k) {
        if (policy == Policy::per_lane) {
          parts[k] = run_per_lane<G>(spec, data, bounds, costs, grid, warps[k], bests[k]);
        } else if (policy == Policy::shared) {
          parts[k] = run_shared<G>(spec, data, bounds, costs, grid, warps[k], word, bests[k]);
        } else if (policy == Policy::warp_wide) {
          parts[k] = run_warp_wide<G>(spec, data, bounds, costs, grid, warps[k], word, bests[k]);
        } else {
          parts[k] = run_implemented<G>(spec, data, bounds, warp_costs, grid, warps[k], word, bests[k]);
        }
      }
      for (std::size_t k = 0; k < warps.size(); ++k) {
        total.add(parts[k]);
        best.offer(bests[k].score, bests[k].index);
      }
      print_row(policy, G, shape, total, grid);
      // With every warp replayed, each policy must find the one exact arg-max of the pass.
      if (opt.check && stride == 1 && needs_word && (best.score != exact.score || best.index != exact.index)) {
        std::fprintf(stderr, "CHECK FAILED: %s found (%.17g, %llu), the exact maximum is (%.17g, %llu)\n",
                     policy_name(policy), best.score, static_cast<unsigned long long>(best.index), exact.score,
                     static_cast<unsigned long long>(exact.index));
        std::exit(1);
      }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "  %s %s: %zu of %llu warps replayed (stride %llu), %.1f s\n",
                 G == Generator::chacha20 ? "chacha20" : "philox", shape.name.c_str(), warps.size(),
                 static_cast<unsigned long long>(grid.warps), static_cast<unsigned long long>(stride), seconds);
  }
}

// The replay's screens are the library's: TileScreens' hand-out equals group_screen for every lane.
void check_screens() {
  for (const Generator g : {Generator::chacha20, Generator::philox}) {
    detail::NoiseSpec spec{};
    spec.mechanism = Mechanism::exponential;
    spec.score_scale = 0.5;
    spec.key = dpselect::RandomKey::from_seed(kContextSeed, g);
    spec.stream = kStream;
    spec.utility_limit = kInfinity;
    for (std::uint64_t tile : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{12345}, std::uint64_t{1048575}}) {
      std::uint32_t screens[kLanes];
      if (g == Generator::chacha20) {
        tile_screens<Generator::chacha20>(spec, tile, screens);
      } else {
        tile_screens<Generator::philox>(spec, tile, screens);
      }
      for (unsigned l = 0; l < kLanes; ++l) {
        if (screens[l] != detail::group_screen(spec, tile * kLanes + l)) {
          std::fprintf(stderr, "CHECK FAILED: screen of tile %llu lane %u\n", static_cast<unsigned long long>(tile), l);
          std::exit(1);
        }
      }
    }
  }
  std::fprintf(stderr, "check: tile screens equal group_screen\n");
}

void print_calibration_inputs() {
  for (const Generator g : {Generator::chacha20, Generator::philox}) {
    const Measured& m = g == Generator::chacha20 ? kChaChaMeasured : kPhiloxMeasured;
    const double total = m.ipc_active * m.sm_active_cycles * kMultiprocessors;
    std::printf("# measured %-8s: %.2f IPC x %.0f active cycles x 132 SMs = %.4g warp instructions = %.0f per tile; "
                "%.2f active lanes; %.2f ms\n",
                g == Generator::chacha20 ? "chacha20" : "philox", m.ipc_active, m.sm_active_cycles, total,
                total / kBenchmarkTiles, m.active_lanes, m.duration_ms);
  }
  for (const Generator g : {Generator::chacha20, Generator::philox}) {
    const RegionCosts& c = g == Generator::chacha20 ? kChaChaCosts : kPhiloxCosts;
    std::printf("# region costs %-8s: tile %.1f, race %.1f, loop iteration %.1f (x 32), leader offer %.1f, "
                "follower draw %.1f, once per warp %.0f\n",
                g == Generator::chacha20 ? "chacha20" : "philox", c.tile, c.race, c.loop_iteration, c.leader_offer,
                c.follower_draw, c.once_per_warp);
  }
  std::printf("# one read of 2^30 float32: %.3f ms (CUB ArgMax: %.3f ms), H100, same run; H200: %.3f ms\n", kReadMs,
              kCubArgMaxMs, kReadH200Ms);
  std::printf("# shared / warp-wide bookkeeping (estimated): %.0f per tile, %.0f after the first race, %.0f per "
              "publish, warp-wide %.0f per race\n",
              kSharedTileExtra, kSharedSecondMax, kPublish, kWarpWideRaceExtra);
  for (const Generator g : {Generator::chacha20, Generator::philox}) {
    const WarpCosts& c = g == Generator::chacha20 ? kChaChaWarpCosts : kPhiloxWarpCosts;
    std::printf("# implemented costs %-8s: tile %.1f, pass %.1f, race %.1f, follower draw %.1f, publish %.1f, "
                "once per warp %.0f\n",
                g == Generator::chacha20 ? "chacha20" : "philox", c.tile, c.pass, c.race, c.follower_draw, c.publish,
                c.once_per_warp);
  }
}

[[noreturn]] void usage() {
  std::fprintf(stderr,
               "usage: schedule_model [--policy POLICY[,POLICY...]|all] [--generator chacha20|philox|all]\n"
               "                      [--shape NAME[,NAME...]|all] [--log2-n N] [--warp-stride S]\n"
               "                      [--steep-warp-stride S] [--check]\n"
               "policies: per-lane shared warp-wide implemented\n"
               "shapes: bench bench-eps0.01 bench-eps100 sorted linear-i/32 gentle-i/1024 steep-i equal pareto\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (a == "--policy") {
      const std::string v = value();
      if (v != "all") {
        opt.policies.clear();
        std::size_t p = 0;
        while (p <= v.size()) {
          const std::size_t q = std::min(v.find(',', p), v.size());
          const std::string name = v.substr(p, q - p);
          if (name == "per-lane") opt.policies.push_back(Policy::per_lane);
          else if (name == "shared") opt.policies.push_back(Policy::shared);
          else if (name == "warp-wide") opt.policies.push_back(Policy::warp_wide);
          else if (name == "implemented") opt.policies.push_back(Policy::implemented);
          else usage();
          p = q + 1;
        }
      }
    } else if (a == "--generator") {
      const std::string v = value();
      if (v == "chacha20") opt.generators = {Generator::chacha20};
      else if (v == "philox") opt.generators = {Generator::philox};
      else if (v != "all") usage();
    } else if (a == "--shape") {
      const std::string v = value();
      if (v != "all") {
        std::size_t p = 0;
        while (p <= v.size()) {
          const std::size_t q = std::min(v.find(',', p), v.size());
          opt.shapes.push_back(v.substr(p, q - p));
          p = q + 1;
        }
      }
    } else if (a == "--log2-n") {
      opt.log2_n = std::atoi(value().c_str());
    } else if (a == "--warp-stride") {
      opt.warp_stride = std::strtoull(value().c_str(), nullptr, 10);
    } else if (a == "--steep-warp-stride") {
      opt.steep_warp_stride = std::strtoull(value().c_str(), nullptr, 10);
    } else if (a == "--check") {
      opt.check = true;
    } else {
      usage();
    }
  }
  if (opt.log2_n < 10 || opt.log2_n > 32 || opt.warp_stride == 0 || opt.steep_warp_stride == 0) usage();
  std::vector<Shape> shapes;
  for (const Shape& s : all_shapes()) {
    if (opt.shapes.empty() || std::find(opt.shapes.begin(), opt.shapes.end(), s.name) != opt.shapes.end()) {
      shapes.push_back(s);
    }
  }
  if (shapes.empty()) usage();
  if (opt.check) check_screens();
  std::unique_ptr<SortedBench> sorted;
  if (std::any_of(shapes.begin(), shapes.end(), [](const Shape& s) { return s.kind == ShapeKind::sorted; })) {
    sorted = std::make_unique<SortedBench>(std::uint64_t{1} << opt.log2_n);
  }
  std::printf("# schedule model: n = 2^%d candidates, %d threads\n", opt.log2_n, omp_get_max_threads());
  print_calibration_inputs();
  std::printf("# columns: warps replayed; pass%% groups passing the screen; races/t and draws/t per tile;\n"
              "# rtile%% tiles with a race region; lanes_r active lanes in race regions; lanes over the whole\n"
              "# pass; winst/t warp instructions per tile, of which wi_race in races (race block, leader,\n"
              "# follower loop, offers) and wi_draw in follower draws; issue_ms at the measured issue rate;\n"
              "# pass_ms = max(read, issue); x_read = pass_ms / read (read: 1.399 ms for 2^30 float32, H100);\n"
              "# x_read1 the same at 1 instruction per scheduler per cycle; x_h200 = max(H200 read, issue) / H200\n"
              "# read (0.976 ms; same SMs and clock, so the same issue time)\n");
  print_header();
  for (const Generator g : opt.generators) {
    if (g == Generator::chacha20) {
      run_generator<Generator::chacha20>(opt, shapes, sorted.get());
    } else {
      run_generator<Generator::philox>(opt, shapes, sorted.get());
    }
  }
  return 0;
}
