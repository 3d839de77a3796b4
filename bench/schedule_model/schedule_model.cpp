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
// --kernel rows: the rows kernel (kernels/select_rows.cu, select_rows_kernel<float, G, 256>), R
// releases over an R x C matrix, a block of 8 warps per row, each row replayed with the per-lane
// and implemented replays (run_rows below).
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
// `tiles`: the warp's tiles in order (its step s takes tiles[s] and reads the word global[s]).
// `first` (the rows what-ifs' seeded teams): the threshold after the warp's first race at its step
// 0 and the instructions of the pass, that race and its draw. `skip_group` (the what-ifs' widest
// seed): a group raced before the tile loop, never raced again.
struct FirstRace {
  double threshold = -kInfinity;
  double instructions = 0;
};
template <Generator G>
Tally run_implemented_tiles(const detail::NoiseSpec& spec, const Data& data, const double* bounds,
                            const WarpCosts& c, const std::vector<std::uint64_t>& tiles,
                            const std::vector<double>& global, Best& result, FirstRace* first = nullptr,
                            std::uint64_t skip_group = ~std::uint64_t{0}) {
  Tally t;
  t.warps = 1;
  t.issue(c.once_per_warp, kLanes, false);
  detail::ShardAccumulator acc[kLanes];
  double warp_threshold = -kInfinity;  // threshold_: known_score is -inf in the benchmark
  TileInputs in;
  for (std::uint64_t step = 0; step < tiles.size(); ++step) {
    const std::uint64_t tile = tiles[step];
    load_tile<G>(spec, data, bounds, tile, in);
    if (skip_group / kLanes == tile) in.reach[skip_group % kLanes] = -kInfinity;  // raced already (what-ifs)
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
      if (first != nullptr && step == 0 && t.raced_groups == 1) {
        first->threshold = threshold;
        first->instructions = c.pass + c.race + (drawing != 0 ? c.follower_draw : 0.0);
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

// Warp `warp` of `grid`: tiles warp, warp + grid.warps, ...
template <Generator G>
Tally run_implemented(const detail::NoiseSpec& spec, const Data& data, const double* bounds, const WarpCosts& c,
                      const Grid& grid, std::uint64_t warp, const std::vector<double>& global, Best& result) {
  std::vector<std::uint64_t> tiles;
  for (std::uint64_t tile = warp; tile < grid.tiles; tile += grid.warps) tiles.push_back(tile);
  return run_implemented_tiles<G>(spec, data, bounds, c, tiles, global, result);
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

// ---------------------------------------------------------------------------------------------
// The rows kernel (kernels/select_rows.cu, select_rows_kernel<float, G, 256>): R releases, one per
// row of an R x C float matrix, row r with its own NoiseSpec (stream r of the call's block of
// streams). For C > 2048 each row is scored by a team of a whole block, 8 warps, warp w taking the
// row's tiles w, w + 8, ...; the block's rows are blockIdx.x, + gridDim.x, ..., the grid min(R,
// resident blocks) = min(R, 264) blocks (2 per SM, kRowsMinBlocksPerMultiprocessor, either
// generator). Per row: a TileScreens of its own (ChaCha20: a block per lane at the warp's steps 0,
// 32, ..., so a warp with 16 steps in a row computes 32 blocks and uses 16), an accumulator per
// thread, the team's reduction and store, and under `implemented` a WarpScreenThreshold on the
// team's word in shared memory (team_published, reset for each row), shared by its 8 warps as the
// single pass shares the grid-wide word. A row is replayed as the grid of 8 warps over its tiles
// (the word modelled in rounds, as for the single pass) with the per-lane and implemented replays
// above, its data and stream the benchmark's.
//
// The rows benchmark (bench/batched_gpu_bench.cu, gpu_rows/float/rows:R/cols:C): the matrix is
// device_array<float>(R * C), data[i] as in the single pass (i = r C + c); select_rows with
// Context::with_fixed_seed(kContextSeed) (ChaCha20), the exponential mechanism, epsilon 1,
// sensitivity 1; the call draws R consecutive streams from the context (host/engine/rows.cpp,
// ContextAccess::draw_streams), its first call streams 0 .. R - 1: row r, stream r. (Later
// iterations of the benchmark draw the next R; the ncu profile is of the first call.)

// Per-region costs of select_rows_kernel<float, G, 256> (sass_regions.py on its sm_90 SASS, nvcc
// 13.0 -O3, the library's flags): `lane` the per-lane kernel of commit 1900c764 (measured on the
// H100), `warp` the warp-wide one of commit 686d043 (WarpScreenThreshold on team_published). The
// tile costs are as sass_regions.py prints them, with a 32nd of the ChaCha20 screen block in
// each; the replay charges tile - screen_block / 32 per tile and screen_block at each warp's steps
// 0, 32, ... of a row.
struct RowsExtras {
  double screen_block;    // TileScreens<chacha20>'s block (owner == 0), one warp-level issue
  double per_row;         // one warp, per row: the team's reduction and store, the next row's set-up
  double once_per_block;  // one warp, once per block: the bound table's fill, the first row's set-up
};
constexpr RegionCosts kRowsChaChaLaneCosts{498.8, 1146.6, 25.0, 9.0, 1129.4, 0.0};
constexpr RegionCosts kRowsPhiloxLaneCosts{451.0, 226.5, 21.0, 9.0, 234.7, 0.0};
constexpr RowsExtras kRowsChaChaLaneExtras{986.0, 513.0, 179.0};
constexpr RowsExtras kRowsPhiloxLaneExtras{0.0, 511.0, 179.0};
constexpr WarpCosts kRowsChaChaWarpCosts{549.8, 17.0, 1303.1, 1127.1, 28.0, 0.0};
constexpr WarpCosts kRowsPhiloxWarpCosts{515.0, 19.0, 377.5, 224.5, 28.0, 0.0};
constexpr RowsExtras kRowsChaChaWarpExtras{985.0, 524.0, 188.0};
constexpr RowsExtras kRowsPhiloxWarpExtras{0.0, 527.0, 185.0};

// Measured (H100 80GB HBM3, 2026-11-24, commit 1900c764, ncu-rows.txt): select_rows_kernel<float,
// chacha20, 256> over 4096 x 131072, 264 blocks. Warp Cycles Per Issued Instruction 5.76 at 3.72
// active warps per scheduler: Executed Ipc Active / 4 = 0.645 = 3.72 / 5.76.
constexpr Measured kRowsMeasured{2.58, 2.50, 22937677.20, 11.98, 4.14};
constexpr std::uint64_t kRowsMeasuredRows = 4096;
constexpr std::uint64_t kRowsMeasuredCols = 131072;
constexpr double kRowsEndToEndMs = 14.88;  // gpu_rows/float/rows:4096/cols:131072 (gpu.txt)
constexpr int kRowsBlocksPerSm = 2;
constexpr unsigned kTeamWarps = kWarpsPerBlock;

struct RowsOptions {
  std::uint64_t rows = kRowsMeasuredRows;
  std::uint64_t cols = kRowsMeasuredCols;
  std::uint64_t row_stride = 1;  // replay rows 0, s, 2s, ... (each with all its warps)
};

// One row under one policy: all 8 warps of its team.
struct RowReplay {
  Tally tally;
  double instructions = 0;  // the row's warp instructions, all warps (tally.warp)
  double max_warp = 0;      // the row's busiest warp
  double screen = 0;        // of which TileScreens' ChaCha20 blocks
};

// Row `row` of the matrix (its data), scored with stream `stream` (the benchmark's first call: the
// row's index).
template <Generator G>
RowReplay replay_row(Policy policy, const Shape& shape, std::uint64_t row, std::uint64_t stream, std::uint64_t cols,
                     const double* bounds, bool check) {
  detail::NoiseSpec spec{};
  spec.mechanism = Mechanism::exponential;
  spec.score_scale = shape.epsilon / 2.0;
  spec.key = dpselect::RandomKey::from_seed(kContextSeed, G);
  spec.stream = stream;
  spec.utility_limit = kInfinity;
  const Data data{&shape, nullptr, row * cols};
  const Grid grid{kTeamWarps, cols / (kLanes * kLanes)};
  const RowsExtras& extras = policy == Policy::per_lane
                                 ? (G == Generator::chacha20 ? kRowsChaChaLaneExtras : kRowsPhiloxLaneExtras)
                                 : (G == Generator::chacha20 ? kRowsChaChaWarpExtras : kRowsPhiloxWarpExtras);
  RegionCosts lane = G == Generator::chacha20 ? kRowsChaChaLaneCosts : kRowsPhiloxLaneCosts;
  WarpCosts warp = G == Generator::chacha20 ? kRowsChaChaWarpCosts : kRowsPhiloxWarpCosts;
  lane.tile -= extras.screen_block / kLanes;
  warp.tile -= extras.screen_block / kLanes;
  std::vector<double> word;
  Best exact;
  if (policy == Policy::implemented || check) word = grid_word<G>(spec, data, bounds, grid, exact);
  RowReplay r;
  Best best;
  for (std::uint64_t w = 0; w < kTeamWarps; ++w) {
    Best found;
    Tally t = policy == Policy::per_lane ? run_per_lane<G>(spec, data, bounds, lane, grid, w, found)
                                         : run_implemented<G>(spec, data, bounds, warp, grid, w, word, found);
    const std::uint64_t steps = w < grid.tiles ? (grid.tiles - w + kTeamWarps - 1) / kTeamWarps : 0;
    const double blocks = static_cast<double>((steps + kLanes - 1) / kLanes);  // steps 0, 32, ...
    t.issue(extras.screen_block * blocks, kLanes, false);
    t.issue(extras.per_row, kLanes, false);
    r.screen += extras.screen_block * blocks;
    r.max_warp = std::max(r.max_warp, t.warp);
    r.tally.add(t);
    best.offer(found.score, found.index);
  }
  r.instructions = r.tally.warp;
  if (check && (best.score != exact.score || best.index != exact.index)) {
    std::fprintf(stderr, "CHECK FAILED: row %llu, %s found (%.17g, %llu), the exact maximum is (%.17g, %llu)\n",
                 static_cast<unsigned long long>(row), policy_name(policy), best.score,
                 static_cast<unsigned long long>(best.index), exact.score, static_cast<unsigned long long>(exact.index));
    std::exit(1);
  }
  return r;
}

void print_rows_header() {
  std::printf("%-11s %-8s %-14s %5s %7s %5s %7s %8s %8s %8s %7s %8s %7s %8s %8s %8s %7s %7s %8s %6s %9s %9s %9s %8s %7s "
              "%7s %7s\n",
              "policy", "gen", "shape", "rows", "cols", "blks", "replay", "pass%", "races/t", "draws/t", "rtile%", "lanes_r",
              "lanes", "winst/t", "wi_race", "wi_draw", "wi_scr", "wi_row", "inst/row", "rowsSM", "issue_ms",
              "issue1_ms", "occ_ms", "read_ms", "x_read", "x_read1", "x_occ");
}

// The issue rate of an SM that holds one block of the rows kernel (8 warps, 2 per scheduler): the
// single-row benchmarks (gpu_rows/float/rows:1/cols:C, one block on one SM, the per-lane kernel,
// end to end) against the replay's instructions for the same row and streams, t = a + I / (4 e f)
// fitted over C = 32768, 131072, 262144 (a: the call's fixed cost). Each benchmark iteration draws
// the next stream, over the same row: the replay averages streams 0 .. kOneBlockStreams - 1.
constexpr std::uint64_t kOneBlockCols[3] = {32768, 131072, 262144};
constexpr double kOneBlockMeasuredUs[3] = {202.03, 447.73, 713.10};  // gpu.json, real_time
constexpr std::uint64_t kOneBlockStreams = 64;

double one_block_issue_rate() {
  const Shape shape = all_shapes().front();
  double bounds[detail::kScreenBoundSlots];
  for (unsigned slot = 0; slot < detail::kScreenBoundSlots; ++slot) {
    bounds[slot] = detail::group_noise_upper_bound(Mechanism::exponential, detail::screen_of_bound_slot(slot));
  }
  double x[3];
  for (int k = 0; k < 3; ++k) {
    std::vector<double> each(kOneBlockStreams);
#pragma omp parallel for schedule(dynamic, 1)
    for (std::int64_t s = 0; s < static_cast<std::int64_t>(kOneBlockStreams); ++s) {
      each[s] = replay_row<Generator::chacha20>(Policy::per_lane, shape, 0, static_cast<std::uint64_t>(s),
                                                kOneBlockCols[k], bounds, false)
                    .instructions;
    }
    double sum = 0;
    for (const double v : each) sum += v;
    x[k] = sum / static_cast<double>(kOneBlockStreams) + kTeamWarps * kRowsChaChaLaneExtras.once_per_block;
  }
  const double mx = (x[0] + x[1] + x[2]) / 3.0;
  const double my = (kOneBlockMeasuredUs[0] + kOneBlockMeasuredUs[1] + kOneBlockMeasuredUs[2]) / 3.0;
  double sxy = 0;
  double sxx = 0;
  for (int k = 0; k < 3; ++k) {
    sxy += (x[k] - mx) * (kOneBlockMeasuredUs[k] - my);
    sxx += (x[k] - mx) * (x[k] - mx);
  }
  const double slope_us = sxy / sxx;  // microseconds per warp instruction
  const double intercept = my - slope_us * mx;
  const double e = 1.0 / (4.0 * kClockHz * slope_us * 1e-6);
  std::printf("# one block per SM (gpu_rows/float/rows:1, per-lane, ChaCha20; streams 0..%llu):",
              static_cast<unsigned long long>(kOneBlockStreams - 1));
  for (int k = 0; k < 3; ++k) {
    std::printf(" C = %llu: %.4g instructions, %.1f us measured, %.1f fitted;",
                static_cast<unsigned long long>(kOneBlockCols[k]), x[k], kOneBlockMeasuredUs[k],
                intercept + slope_us * x[k]);
  }
  std::printf(" fixed cost %.1f us, issue rate e1 = %.3f\n", intercept, e);
  std::fflush(stdout);
  return e;
}

// The kernel's time: each SM issues its blocks' rows; the grid's blocks are min(R, 264), block b
// holding rows b, b + blocks, ..., and SM s blocks s and s + 132. Issue time of the busiest SM at
// e instructions per scheduler per cycle: e = Executed Ipc Active / 4 of the measured rows kernel
// (0.645, 2 blocks, 16 warps, per SM), 1 (issue1_ms), and the rate measured for the busiest SM's
// occupancy (occ_ms: 0.645 with 2 blocks, e1 of one_block_issue_rate with one). The read: one
// read of the R x C floats at the single pass's measured 3.07 TB/s (gpu_read/float/n:2^30, 1.399
// ms for 4 GiB).
template <Generator G>
void run_rows(const Options& opt, const RowsOptions& ro, const std::vector<Shape>& shapes, double one_block_e) {
  const std::uint64_t rows = ro.rows;
  const std::uint64_t cols = ro.cols;
  const std::uint64_t stride = ro.row_stride;
  const std::uint64_t resident = static_cast<std::uint64_t>(kMultiprocessors) * kRowsBlocksPerSm;
  const std::uint64_t blocks = std::min(rows, resident);
  for (const Shape& shape : shapes) {
    double bounds[detail::kScreenBoundSlots];
    for (unsigned slot = 0; slot < detail::kScreenBoundSlots; ++slot) {
      bounds[slot] = detail::group_noise_upper_bound(Mechanism::exponential, detail::screen_of_bound_slot(slot));
    }
    std::vector<std::uint64_t> sampled;
    for (std::uint64_t r = 0; r < rows; r += stride) sampled.push_back(r);
    for (const Policy policy : opt.policies) {
      if (policy != Policy::per_lane && policy != Policy::implemented) continue;
      const auto start = std::chrono::steady_clock::now();
      std::vector<RowReplay> replays(sampled.size());
#pragma omp parallel for schedule(dynamic, 1)
      for (std::int64_t k = 0; k < static_cast<std::int64_t>(sampled.size()); ++k) {
        replays[k] = replay_row<G>(policy, shape, sampled[k], sampled[k], cols, bounds, opt.check);
      }
      Tally total;
      double screen = 0;
      double mean_max_warp = 0;
      double max_warp = 0;
      for (const RowReplay& r : replays) {
        total.add(r.tally);
        screen += r.screen;
        mean_max_warp += r.max_warp;
        max_warp = std::max(max_warp, r.max_warp);
      }
      const double n_sampled = static_cast<double>(sampled.size());
      const double per_row = total.warp / n_sampled;
      mean_max_warp /= n_sampled;
      const RowsExtras& extras = policy == Policy::per_lane
                                     ? (G == Generator::chacha20 ? kRowsChaChaLaneExtras : kRowsPhiloxLaneExtras)
                                     : (G == Generator::chacha20 ? kRowsChaChaWarpExtras : kRowsPhiloxWarpExtras);
      const double once = kTeamWarps * extras.once_per_block;
      // Instructions of each SM: its blocks' rows, each row its replayed cost where every row was
      // replayed, else the sampled rows' mean.
      std::vector<double> sm(kMultiprocessors, 0.0);
      std::vector<double> sm_rows(kMultiprocessors, 0.0);
      for (std::uint64_t b = 0; b < blocks; ++b) {
        const std::uint64_t s = b % kMultiprocessors;
        sm[s] += once;
        for (std::uint64_t r = b; r < rows; r += blocks) {
          sm[s] += stride == 1 ? replays[r].instructions : per_row;
          sm_rows[s] += 1;
        }
      }
      const std::size_t busiest = static_cast<std::size_t>(std::max_element(sm.begin(), sm.end()) - sm.begin());
      const double blocks_on_busiest = static_cast<double>(busiest < blocks ? 1 : 0) +
                                       static_cast<double>(busiest + kMultiprocessors < blocks ? 1 : 0);
      const double e = kRowsMeasured.ipc_active / 4.0;
      const double issue_ms = sm[busiest] / (4.0 * e * kClockHz) * 1e3;
      const double issue1_ms = sm[busiest] / (4.0 * kClockHz) * 1e3;
      const double occ_ms = blocks_on_busiest >= 2 ? issue_ms : sm[busiest] / (4.0 * one_block_e * kClockHz) * 1e3;
      const double read_ms = kReadMs * static_cast<double>(rows * cols) / static_cast<double>(kBenchmarkTiles * 1024);
      const double tiles = total.tiles;
      const double waste = screen / tiles - extras.screen_block / kLanes;
      std::printf("%-11s %-8s %-14s %5llu %7llu %5llu %7zu %8.3f %8.3f %8.3f %7.2f %8.2f %7.2f %8.0f %8.0f %8.0f %7.1f "
                  "%7.1f %8.0f %6.0f %9.3f %9.3f %9.3f %8.4f %7.2f %7.2f %7.2f\n",
                  policy_name(policy), G == Generator::chacha20 ? "chacha20" : "philox", shape.name.c_str(),
                  static_cast<unsigned long long>(rows), static_cast<unsigned long long>(cols),
                  static_cast<unsigned long long>(blocks), sampled.size(), 100.0 * total.raced_groups / total.groups,
                  total.raced_groups / tiles, total.draws / tiles, 100.0 * total.race_tiles / tiles,
                  total.race_warp > 0 ? total.race_lane / total.race_warp : 0.0, total.lane / total.warp,
                  total.warp / tiles, (total.race_warp - total.draw_warp) / tiles, total.draw_warp / tiles,
                  screen / tiles, kTeamWarps * extras.per_row * n_sampled / tiles, per_row, sm_rows[busiest], issue_ms,
                  issue1_ms, occ_ms, read_ms, std::max(read_ms, issue_ms) / read_ms,
                  std::max(read_ms, issue1_ms) / read_ms, std::max(read_ms, occ_ms) / read_ms);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::fprintf(stderr,
                   "  rows %s %s %s: %zu of %llu rows replayed (stride %llu), every warp of each; %.1f s; "
                   "busiest SM %zu: %.0f rows, %.4g instructions; busiest warp of a row %.0f (mean); "
                   "screen blocks beyond a 32nd of one per tile: %.1f per tile\n",
                   policy_name(policy), G == Generator::chacha20 ? "chacha20" : "philox", shape.name.c_str(),
                   sampled.size(), static_cast<unsigned long long>(rows), static_cast<unsigned long long>(stride),
                   seconds, busiest, sm_rows[busiest], sm[busiest], mean_max_warp, waste);
      std::printf("#   %s %s %s: a row's busiest warp issues %.0f instructions (mean over rows; the most: %.0f), its "
                  "8 warps %.0f (the busiest SM: %.0f); TileScreens' ChaCha20 blocks %.1f per tile, %.1f of them "
                  "beyond a 32nd of a block per tile\n",
                  policy_name(policy), G == Generator::chacha20 ? "chacha20" : "philox", shape.name.c_str(),
                  mean_max_warp, max_warp, per_row, sm[busiest], screen / tiles, waste);
      std::fflush(stdout);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// What-if layouts of the rows kernel (--kernel rows --policy NAME[,NAME]: none of them is a kernel
// of the library). Each runs the implemented kernel's per-tile code (WarpScreenThreshold::score
// and race_group, run_implemented_tiles above) on every warp's tiles and is priced with the same
// SASS region costs; they differ in how many warps score a row, in which tiles each warp takes,
// and in what the warps' shared threshold word holds:
//   warps-per-row=K  K warps (K = 1, 2, 4, 8) score a row, 8 / K rows per block of 256 threads:
//                    team j of block b takes rows b (8 / K) + j, + gridDim (8 / K), ...; warp w of
//                    a team the row's tiles w, w + K, ...; the team's word (shared memory) is read
//                    by its K warps only. K = 8 is the implemented kernel. K = 1 (warp-per-row) is
//                    select_rows_kernel<T, G, 32>, the kernel's warp teams (today for rows of at
//                    most 2 tiles) run on long rows, priced by that instantiation's own SASS
//                    (kRows*WarpTeam*: add_tiles with warps = 1, a cub::WarpReduce of the
//                    ShardResult per row). K = 2, 4: the block kernel's tile costs; per row the
//                    warp team's plus (K - 1) / 7 of the block reduction's excess over it
//                    (estimate: a warp reduction, K - 1 merges and a named barrier).
//   +seeded          (K = 8 or segmented) before the team's warps test their first tiles, warp 0
//                    races the widest group of its first tile (tile 0 of the row or segment) and
//                    publishes the threshold after that race; the other warps wait at a block
//                    barrier placed after their step-0 scan and screen, and read the word. Warp 0
//                    then goes on as the kernel does (the rest of tile 0's pending groups, ...).
//                    Costs (estimated): kSeedBarrier per warp per row, warp 0's extra publish; the
//                    wait: the 7 warps idle while warp 0 issues the pass, the race, its draw and
//                    the publish (W instructions), charged to the SM as lost issue (below) and to
//                    the waiting warps' chains.
//   segmented[=S]    each row cut into S segments of consecutive tiles (segment g: tiles
//                    [g T / S, (g + 1) T / S)), each scored by a block of 8 warps (warp w: the
//                    segment's tiles first + w, + 8, ...); item (row r, segment g) is block
//                    (r S + g) mod blocks, blocks = min(R S, 264). The row's word lies in device
//                    memory, shared by its S blocks (lane 0 loads it every tile, as the single
//                    pass's grid-wide word: the same instructions; the atomic max after a tile whose
//                    threshold rose is the global one, kSegmentPublish). The S block results are
//                    merged by the row's last block to finish (kSegmentMerge*). S defaults to
//                    264 / R (at least 1); with S = 1 it is the block team itself (the word in
//                    shared memory, no merge).
//   +widest          (K = 1, 8 or segmented) two phases per row (per segment): the team's warps first
//                    scan all their tiles, keeping each group's reach and screen in shared memory,
//                    and find the team's widest group (largest reach, lowest index on ties); the
//                    warp that holds it races it while the others wait (barrier), and publishes the
//                    threshold; then every warp tests its tiles' stored reaches against the word in
//                    tile order as the kernel does (that group not again). Costs (estimated):
//                    kWidestTile per tile (the stores and loads of the reach and screen, the
//                    running arg-max), kWidestRow per warp per row (the team's arg-max, two
//                    barriers); the wait as for +seeded (none for K = 1). Shared memory: 8 bytes
//                    per group (the reach as a float rounded up, the screen), 32 KiB per block of
//                    8 warps at C = 131072, 256 KiB for 8 warps with a row each (K = 1: too much).
//   +oracle          (a bound, not a schedule) the word holds the row's exact best score from the
//                    start: the fewest races any order of the row's tiles can give with these
//                    screens (every group whose reach is at least the row's best score races).
// Aliases: warp-per-row = warps-per-row=1, seeded = warps-per-row=8+seeded, widest-seeded =
// warps-per-row=8+widest, oracle-seeded = warps-per-row=8+oracle; whatif = warps-per-row=1,2,4,8,
// seeded, widest-seeded, oracle-seeded, warps-per-row=1+widest, warps-per-row=1+oracle, segmented,
// segmented+seeded, segmented+widest, segmented+oracle.
//
// The team word is modelled in rounds, as for the implemented kernel: at step s every warp of a
// row reads the best exact score of the row's tiles of steps 0 .. s - 1 (of all its segments), and
// a seeded team's warps other than warp 0 read the seed at step 0.
//
// Time: each SM issues its blocks' items; an SM with 2 blocks at e = 0.645, with one at e1 (occ_ms,
// as for the kernel; issue_ms all at 0.645, issue1_ms at 1). Also the critical chain (chain_ms):
// each team's rows one after another, each row as long as its busiest warp (the team's reduction
// waits for it) plus the per-row costs, at e1 / 2 instructions per cycle per warp (two warps per
// scheduler: a warp no faster alone, so an upper bound where warps finish unevenly). The
// predicted time is max(occ_ms, chain_ms) (x_time).

// select_rows_kernel<float, G, 32>, commit 686d043 (SASS_KERNEL=rows SASS_TEAM=32: sass_regions.py):
// its tile loop is add_tiles with warps = 1; per row the warp reduction of ShardResult (389), the
// store, the next row's spec.
constexpr WarpCosts kRowsChaChaWarpTeamCosts{539.7, 17.0, 1286.6, 1126.1, 28.0, 0.0};
constexpr WarpCosts kRowsPhiloxWarpTeamCosts{494.0, 19.0, 374.0, 224.0, 28.0, 0.0};
constexpr RowsExtras kRowsChaChaWarpTeamExtras{983.0, 454.0, 177.0};
constexpr RowsExtras kRowsPhiloxWarpTeamExtras{0.0, 456.0, 177.0};
// Estimates. The seed: per warp per row the test of the warp's index, BAR.SYNC and its
// re-convergence (10). The segmented word: lane 0's atomic max on a global word, the single pass's
// publish (13, fused_select_kernel's SASS). The merge, per block: warp 0 stores its partial
// ShardResult (store_whole, 17), a fence and the atomic count of the row's finished blocks (10),
// the block's test of "last" through shared memory and a barrier (5 per warp): 70; the last block
// of a row: warp 0 loads the S partials (one per lane, 15), reduces them (the warp reduction, 389),
// stores the row's result (17) and resets the counter and the row's word for the next call (5):
// 426 more. Its latency at the kernel's end: the fence, the atomic and the partials' loads, about
// three round trips to L2 and a fence: 1.5 us (a merge kernel instead: a launch, 2-4 us).
constexpr double kSeedBarrier = 10.0;
constexpr double kSegmentPublish = 13.0;
constexpr double kSegmentMergeBlock = 70.0;
constexpr double kSegmentMergeLast = 426.0;
constexpr double kSegmentMergeLatencyMs = 1.5e-3;
// +widest: per tile, the reach and screen stored in phase 1 and loaded in phase 2 (2 STS, 2 LDS,
// their addresses, the conversion of the reach to a float rounded up) and the running arg-max
// (16); per warp per row, the team's arg-max (the warp's max of reach and index, 30; through
// shared memory to warp 0 and back, 40) and a second barrier (10) beside the first (kSeedBarrier).
constexpr double kWidestTile = 16.0;
constexpr double kWidestRow = 80.0;

struct WhatIf {
  std::string name;
  unsigned warps = 8;          // warps per row (per segment)
  bool segmented = false;
  std::uint64_t segments = 0;  // segmented: S, 0 for 264 / R
  bool seeded = false;
  bool widest = false;
  bool oracle = false;
};

bool parse_whatif(const std::string& name, std::vector<WhatIf>& out) {
  if (name == "whatif") {
    for (const char* n : {"warps-per-row=1", "warps-per-row=2", "warps-per-row=4", "warps-per-row=8", "seeded",
                          "widest-seeded", "oracle-seeded", "warps-per-row=1+widest", "warps-per-row=1+oracle",
                          "segmented", "segmented+seeded", "segmented+widest", "segmented+oracle"}) {
      parse_whatif(n, out);
    }
    return true;
  }
  std::string base = name;
  std::string modifier;
  if (const std::size_t plus = name.find('+'); plus != std::string::npos) {
    base = name.substr(0, plus);
    modifier = name.substr(plus + 1);
  }
  WhatIf w;
  w.name = name;
  if (base == "warp-per-row") {
    w.warps = 1;
  } else if (base == "seeded") {
    w.seeded = true;
  } else if (base == "oracle-seeded") {
    w.oracle = true;
  } else if (base == "widest-seeded") {
    w.widest = true;
  } else if (base.rfind("warps-per-row=", 0) == 0) {
    w.warps = static_cast<unsigned>(std::atoi(base.c_str() + 14));
    if (w.warps != 1 && w.warps != 2 && w.warps != 4 && w.warps != 8) return false;
  } else if (base == "segmented" || base.rfind("segmented=", 0) == 0) {
    w.segmented = true;
    if (base.size() > 9) {
      w.segments = std::strtoull(base.c_str() + 10, nullptr, 10);
      if (w.segments == 0) return false;
    }
  } else {
    return false;
  }
  if (modifier == "seeded") w.seeded = true;
  else if (modifier == "widest") w.widest = true;
  else if (modifier == "oracle") w.oracle = true;
  else if (!modifier.empty()) return false;
  if (w.seeded + w.widest + w.oracle > 1) return false;
  // the seed's wait is modelled for a block team (a warp team has none to wait for +widest)
  if (w.seeded && !w.segmented && w.warps != 8) return false;
  if (w.widest && !w.segmented && w.warps != 8 && w.warps != 1) return false;
  out.push_back(w);
  return true;
}

struct WhatIfCosts {
  WarpCosts warp;     // tile: less a 32nd of the screen block, charged at steps 0, 32, ...
  RowsExtras extras;  // per_row: as used (K = 2, 4: estimated)
};

// segments: the row's segments (segmented with S = 1 is the block team itself: its word in shared
// memory, no merge).
template <Generator G>
WhatIfCosts whatif_costs(const WhatIf& w, std::uint64_t segments) {
  const bool c = G == Generator::chacha20;
  const RowsExtras& team = c ? kRowsChaChaWarpTeamExtras : kRowsPhiloxWarpTeamExtras;
  WhatIfCosts k;
  if (!w.segmented && w.warps == 1) {
    k.warp = c ? kRowsChaChaWarpTeamCosts : kRowsPhiloxWarpTeamCosts;
    k.extras = team;
  } else {
    k.warp = c ? kRowsChaChaWarpCosts : kRowsPhiloxWarpCosts;
    k.extras = c ? kRowsChaChaWarpExtras : kRowsPhiloxWarpExtras;
    k.extras.per_row = team.per_row + (k.extras.per_row - team.per_row) * (w.warps - 1) / 7.0;
  }
  if (segments > 1) k.warp.publish = kSegmentPublish;
  k.warp.tile -= k.extras.screen_block / kLanes;
  return k;
}

// The row's word in rounds: word[s] the best exact score over the tiles of steps 0 .. s - 1
// (step_tiles[s]: every warp's s-th tile), each step's tiles screened against the word so far and
// their passing groups scored in decreasing reach (as grid_word). `reaches`: every group's reach
// and group, 32 a tile.
template <Generator G>
std::vector<double> rounds_word(const detail::NoiseSpec& spec, const Data& data, const double* bounds,
                                const std::vector<std::vector<std::uint64_t>>& step_tiles, Best& overall,
                                std::vector<std::pair<double, std::uint64_t>>& reaches) {
  std::vector<double> word(step_tiles.size() + 1, -kInfinity);
  Best carried;
  TileInputs in;
  for (std::size_t s = 0; s < step_tiles.size(); ++s) {
    Best mine;
    mine.score = carried.score;
    for (const std::uint64_t tile : step_tiles[s]) {
      load_tile<G>(spec, data, bounds, tile, in);
      unsigned order[kLanes];
      unsigned passing = 0;
      for (unsigned l = 0; l < kLanes; ++l) {
        reaches.emplace_back(in.reach[l], tile * kLanes + l);
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
    if (mine.index != dpselect::kNoIndex) carried.offer(mine.score, mine.index);
    word[s + 1] = carried.score;
  }
  overall = carried;
  return word;
}

// +widest: the team's widest group (largest reach, lowest group on ties) over the tiles of warps
// first .. first + warps - 1, raced alone at threshold -inf as race_group does; its tally is the
// race (and the draw issue) by the warp that holds it.
struct WidestSeed {
  unsigned warp = 0;
  std::uint64_t group = 0;
  double threshold = -kInfinity;  // the warp max after the race: the best score it offered
  Best found;
  Tally tally;
};

template <Generator G>
WidestSeed race_widest(const detail::NoiseSpec& spec, const Data& data, const double* bounds, const WarpCosts& c,
                       const std::vector<std::vector<std::uint64_t>>& warp_tiles, std::uint64_t first,
                       unsigned warps) {
  WidestSeed seed;
  double widest = -kInfinity;
  std::uint64_t widest_tile = 0;
  unsigned widest_lane = 0;
  TileInputs in;
  for (unsigned j = 0; j < warps; ++j) {
    for (const std::uint64_t tile : warp_tiles[first + j]) {
      load_tile<G>(spec, data, bounds, tile, in);
      for (unsigned l = 0; l < kLanes; ++l) {
        const std::uint64_t group = tile * kLanes + l;
        if (in.reach[l] > widest || (in.reach[l] == widest && group < seed.group)) {
          widest = in.reach[l];
          seed.group = group;
          seed.warp = j;
          widest_tile = tile;
          widest_lane = l;
        }
      }
    }
  }
  load_tile<G>(spec, data, bounds, widest_tile, in);
  const std::uint64_t first_index = seed.group * kLanes;
  const detail::GroupRace race = detail::group_race<detail::GeneratorBlocks<G>>(spec, seed.group, in.screens[widest_lane]);
  const double leader_noise = detail::race_noise(spec.mechanism, race.leader_time);
  const double leader_score =
      detail::fma_rn(spec.score_scale, static_cast<double>(in.values[widest_lane][race.leader_lane]), leader_noise);
  seed.found.offer(leader_score, first_index + race.leader_lane);
  const double follower_bound = detail::add_rn(leader_noise, detail::kScreenMargin);
  unsigned drawing = 0;
  for (unsigned j = 0; j < kLanes; ++j) {
    if (j == race.leader_lane) continue;
    const double u = static_cast<double>(in.values[widest_lane][j]);
    if (detail::fma_rn(spec.score_scale, u, follower_bound) < leader_score) continue;
    ++drawing;
    const double time = detail::follower_time<detail::GeneratorBlocks<G>>(spec, race, first_index + j);
    seed.found.offer(detail::fma_rn(spec.score_scale, u, detail::race_noise(spec.mechanism, time)), first_index + j);
  }
  seed.threshold = seed.found.score;
  seed.tally.raced_groups += 1;
  seed.tally.issue(c.race, kLanes, true);
  if (drawing != 0) {
    seed.tally.issue(c.follower_draw, drawing, true);
    seed.tally.draw_warp += c.follower_draw;
    seed.tally.draws += drawing;
    seed.tally.draw_issues += 1;
  }
  return seed;
}

// One row under a what-if: every warp of its team (of each of its S segment blocks).
struct WhatIfRow {
  Tally tally;                  // every warp, with the per-row costs
  std::vector<double> item;     // per segment (one item unless segmented): its warps' instructions
  std::vector<double> chain;    // per segment: its busiest warp (with the seed's wait) + per-row costs
  std::vector<double> wait;     // per segment: the seed's exposed instructions W (warp 0's), 0 unseeded
  double screen = 0;            // TileScreens' ChaCha20 blocks
  double overhead = 0;          // per-row and per-block costs: reduction, set-up, seed, merge
  double unavoidable = 0;       // groups whose reach is at least the row's best score
  double unavoidable_tiles = 0; // tiles with such a group
  double sorted = 0;            // races of a row-wide widest-first order (groups in decreasing reach)
  double sorted_segments = 0;   // segmented: of a widest-first order in each segment alone
};

template <Generator G>
WhatIfRow replay_row_whatif(const WhatIf& w, std::uint64_t segments, const Shape& shape, std::uint64_t row,
                            std::uint64_t stream, std::uint64_t cols, const double* bounds, bool check) {
  detail::NoiseSpec spec{};
  spec.mechanism = Mechanism::exponential;
  spec.score_scale = shape.epsilon / 2.0;
  spec.key = dpselect::RandomKey::from_seed(kContextSeed, G);
  spec.stream = stream;
  spec.utility_limit = kInfinity;
  const Data data{&shape, nullptr, row * cols};
  const WhatIfCosts k = whatif_costs<G>(w, segments);
  const std::uint64_t tiles = cols / (kLanes * kLanes);
  const unsigned warps = w.warps;
  // The warps' tiles: segment g's warp j takes first + j, + warps, ... below the segment's end.
  std::vector<std::vector<std::uint64_t>> warp_tiles(segments * warps);
  std::vector<std::vector<std::uint64_t>> step_tiles;
  for (std::uint64_t g = 0; g < segments; ++g) {
    const std::uint64_t first = g * tiles / segments;
    const std::uint64_t end = (g + 1) * tiles / segments;
    for (unsigned j = 0; j < warps; ++j) {
      std::vector<std::uint64_t>& mine = warp_tiles[g * warps + j];
      for (std::uint64_t t = first + j; t < end; t += warps) mine.push_back(t);
      for (std::size_t s = 0; s < mine.size(); ++s) {
        if (step_tiles.size() <= s) step_tiles.emplace_back();
        step_tiles[s].push_back(mine[s]);
      }
    }
  }
  Best exact;
  std::vector<std::pair<double, std::uint64_t>> reaches;
  std::vector<double> word = rounds_word<G>(spec, data, bounds, step_tiles, exact, reaches);
  if (w.oracle) std::fill(word.begin(), word.end(), exact.score);
  WhatIfRow r;
  for (std::size_t i = 0; i < reaches.size(); i += kLanes) {
    unsigned n = 0;
    for (unsigned l = 0; l < kLanes; ++l) n += !(reaches[i + l].first < exact.score);
    r.unavoidable += n;
    r.unavoidable_tiles += n != 0;
  }
  {
    // The races of a row-wide widest-first order: the row's groups in decreasing reach (lowest
    // group on ties), each raced while its reach clears the best score so far.
    std::sort(reaches.begin(), reaches.end(),
              [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
    // Segmented: the same within each segment alone (no word shared between the segments).
    std::vector<Best> sorted(segments + 1);
    TileInputs in;
    for (const auto& [reach, group] : reaches) {
      const std::uint64_t tile = group / kLanes;
      std::uint64_t g = 0;
      while ((g + 1) * tiles / segments <= tile) ++g;
      const bool row_wide = !(reach < sorted[segments].score);
      const bool in_segment = segments > 1 && !(reach < sorted[g].score);
      if (!row_wide && !in_segment) continue;
      load_tile<G>(spec, data, bounds, tile, in);
      const unsigned l = static_cast<unsigned>(group % kLanes);
      for (const std::uint64_t which : {segments, g}) {
        if (which == segments ? !row_wide : !in_segment) continue;
        detail::score_scanned_group<detail::GeneratorBlocks<G>>(spec, group, in.screens[l], in.bound[l], in.scan[l],
                                                                LaneValues{in.values[l]}, sorted[which]);
        (which == segments ? r.sorted : r.sorted_segments) += 1;
      }
    }
  }
  r.item.assign(segments, 0.0);
  r.chain.assign(segments, 0.0);
  r.wait.assign(segments, 0.0);
  Best best;
  // +widest: each team's widest group, raced before its tile loop by the warp that holds it.
  std::vector<WidestSeed> widest(w.widest ? segments : 0);
  double all_seeds = -kInfinity;
  for (std::uint64_t g = 0; g < widest.size(); ++g) {
    widest[g] = race_widest<G>(spec, data, bounds, k.warp, warp_tiles, g * warps, warps);
    best.offer(widest[g].found.score, widest[g].found.index);
    all_seeds = std::max(all_seeds, widest[g].threshold);
  }
  for (std::uint64_t g = 0; g < segments; ++g) {
    double seed = -kInfinity;
    double busiest = 0;  // the segment's busiest warp, with the seed's wait
    if (w.widest) r.wait[g] = warps > 1 ? widest[g].tally.warp + k.warp.publish + kSeedBarrier : 0.0;
    for (unsigned j = 0; j < warps; ++j) {
      const std::vector<std::uint64_t>& mine = warp_tiles[g * warps + j];
      std::vector<double> seen = word;
      if (w.seeded && j != 0) seen[0] = std::max(seen[0], seed);  // the seed, read after the barrier
      if (w.widest) {  // the team's seed from the start, every team's from step 1
        seen[0] = std::max(seen[0], widest[g].threshold);
        for (std::size_t s = 1; s < seen.size(); ++s) seen[s] = std::max(seen[s], all_seeds);
      }
      const bool owner = w.widest && widest[g].warp == j;
      Best found;
      FirstRace first;
      Tally t = run_implemented_tiles<G>(spec, data, bounds, k.warp, mine, seen, found,
                                         w.seeded && j == 0 ? &first : nullptr,
                                         owner ? widest[g].group : ~std::uint64_t{0});
      if (owner) t.add(widest[g].tally);
      const double blocks = static_cast<double>((mine.size() + kLanes - 1) / kLanes);  // steps 0, 32, ...
      t.issue(k.extras.screen_block * blocks, kLanes, false);
      r.screen += k.extras.screen_block * blocks;
      double overhead = k.extras.per_row;
      if (w.seeded) {
        overhead += kSeedBarrier;
        if (j == 0) {
          seed = first.threshold;
          r.wait[g] = first.instructions + k.warp.publish + kSeedBarrier;
          overhead += k.warp.publish;  // the seed's publish
        }
      }
      if (w.widest) {
        overhead += kWidestRow + kSeedBarrier + kWidestTile * static_cast<double>(mine.size());
        if (owner) overhead += k.warp.publish;
      }
      if (segments > 1 && j == 0) overhead += kSegmentMergeBlock;
      t.issue(overhead, kLanes, false);
      r.overhead += overhead;
      r.item[g] += t.warp;
      busiest = std::max(busiest, t.warp + ((w.seeded && j != 0) || (w.widest && !owner) ? r.wait[g] : 0.0));
      r.tally.add(t);
      best.offer(found.score, found.index);
    }
    r.chain[g] = busiest;
  }
  if (segments > 1) {
    // The row's last block to finish merges the S results: the segment with the longest chain.
    const std::size_t last =
        static_cast<std::size_t>(std::max_element(r.chain.begin(), r.chain.end()) - r.chain.begin());
    r.item[last] += kSegmentMergeLast;
    r.chain[last] += kSegmentMergeLast;
    r.tally.issue(kSegmentMergeLast, kLanes, false);
    r.overhead += kSegmentMergeLast;
  }
  if (check && (best.score != exact.score || best.index != exact.index)) {
    std::fprintf(stderr, "CHECK FAILED: row %llu, %s found (%.17g, %llu), the exact maximum is (%.17g, %llu)\n",
                 static_cast<unsigned long long>(row), w.name.c_str(), best.score,
                 static_cast<unsigned long long>(best.index), exact.score, static_cast<unsigned long long>(exact.index));
    std::exit(1);
  }
  return r;
}

void print_whatif_header() {
  std::printf("# what-if layouts of the rows kernel (not kernels of the library), priced by the implemented\n"
              "# kernel's SASS and the estimates of schedule_model.cpp (each what-if's on its comment line): K warps\n"
              "# per row (per segment), S segments per row; races/r warp-wide races per row, unav/r groups whose\n"
              "# reach is at least the row's best score (raced under any order); wi_ovh per-row and per-block costs\n"
              "# per tile (reduction, set-up, bound table, seed, merge), wi_wait the seed's wait as lost issue per\n"
              "# tile; chain_ms the busiest team's chain at e1 / 2 per warp; time_ms = max(occ_ms, chain_ms)\n"
              "# (segmented: + %.1f us of merge latency in every time); x_time = max(read, time) / read\n",
              kSegmentMergeLatencyMs * 1e3);
  std::printf("%-20s %-8s %5s %7s %2s %3s %5s %7s %8s %8s %7s %8s %7s %8s %8s %8s %7s %7s %7s %8s %8s %9s %9s %9s %9s "
              "%9s %8s %7s %7s %7s %7s\n",
              "what-if", "gen", "rows", "cols", "K", "S", "blks", "pass%", "races/t", "draws/t", "rtile%", "lanes_r",
              "lanes", "winst/t", "wi_race", "wi_draw", "wi_scr", "wi_ovh", "wi_wait", "races/r", "unav/r", "issue_ms",
              "issue1_ms", "occ_ms", "chain_ms", "time_ms", "read_ms", "x_read", "x_read1", "x_occ", "x_time");
}

template <Generator G>
void run_rows_whatif(const Options& opt, const RowsOptions& ro, const std::vector<Shape>& shapes, double one_block_e,
                     const std::vector<WhatIf>& whatifs) {
  const std::uint64_t rows = ro.rows;
  const std::uint64_t cols = ro.cols;
  const std::uint64_t stride = ro.row_stride;
  const std::uint64_t resident = static_cast<std::uint64_t>(kMultiprocessors) * kRowsBlocksPerSm;
  const double e = kRowsMeasured.ipc_active / 4.0;
  const char* gen = G == Generator::chacha20 ? "chacha20" : "philox";
  for (const Shape& shape : shapes) {
    double bounds[detail::kScreenBoundSlots];
    for (unsigned slot = 0; slot < detail::kScreenBoundSlots; ++slot) {
      bounds[slot] = detail::group_noise_upper_bound(Mechanism::exponential, detail::screen_of_bound_slot(slot));
    }
    std::vector<std::uint64_t> sampled;
    for (std::uint64_t r = 0; r < rows; r += stride) sampled.push_back(r);
    for (const WhatIf& w : whatifs) {
      const auto start = std::chrono::steady_clock::now();
      const std::uint64_t segments =
          !w.segmented ? 1 : std::min(cols / 1024, w.segments != 0 ? w.segments : std::max<std::uint64_t>(1, resident / rows));
      const std::uint64_t teams_per_block = w.segmented ? 1 : kWarpsPerBlock / w.warps;
      // Blocks and the block of each item (row r, segment g).
      const std::uint64_t blocks = w.segmented ? std::min(resident, rows * segments)
                                               : std::min(resident, (rows + teams_per_block - 1) / teams_per_block);
      const std::uint64_t teams = blocks * teams_per_block;
      std::vector<WhatIfRow> replays(sampled.size());
#pragma omp parallel for schedule(dynamic, 1)
      for (std::int64_t k = 0; k < static_cast<std::int64_t>(sampled.size()); ++k) {
        replays[k] = replay_row_whatif<G>(w, segments, shape, sampled[k], sampled[k], cols, bounds, opt.check);
      }
      Tally total;
      double screen = 0, overhead = 0, unavoidable = 0, unavoidable_tiles = 0, wait_sum = 0, sorted = 0;
      double sorted_segments = 0;
      std::vector<double> mean_item(segments, 0.0), mean_chain(segments, 0.0), mean_wait(segments, 0.0);
      for (const WhatIfRow& r : replays) {
        total.add(r.tally);
        screen += r.screen;
        overhead += r.overhead;
        unavoidable += r.unavoidable;
        unavoidable_tiles += r.unavoidable_tiles;
        sorted += r.sorted;
        sorted_segments += r.sorted_segments;
        for (std::uint64_t g = 0; g < segments; ++g) {
          mean_item[g] += r.item[g] / static_cast<double>(replays.size());
          mean_chain[g] += r.chain[g] / static_cast<double>(replays.size());
          mean_wait[g] += r.wait[g] / static_cast<double>(replays.size());
          wait_sum += r.wait[g];
        }
      }
      const WhatIfCosts costs = whatif_costs<G>(w, segments);
      const double once = kWarpsPerBlock * costs.extras.once_per_block;
      // Each SM: its blocks (b mod 132), each block's items; each team's chain: its rows in turn.
      std::vector<double> sm(kMultiprocessors, 0.0), sm_blocks(kMultiprocessors, 0.0);
      std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> sm_items(kMultiprocessors);  // (row, g)
      std::vector<double> chain(w.segmented ? blocks : teams, 0.0);
      for (std::uint64_t b = 0; b < blocks; ++b) {
        sm[b % kMultiprocessors] += once;
        sm_blocks[b % kMultiprocessors] += 1;
      }
      for (std::uint64_t r = 0; r < rows; ++r) {
        const bool replayed = stride == 1;
        for (std::uint64_t g = 0; g < segments; ++g) {
          const std::uint64_t block = w.segmented ? (r * segments + g) % blocks : (r % teams) / teams_per_block;
          const std::uint64_t chain_of = w.segmented ? block : r % teams;
          sm[block % kMultiprocessors] += replayed ? replays[r].item[g] : mean_item[g];
          sm_items[block % kMultiprocessors].emplace_back(r, g);
          chain[chain_of] += replayed ? replays[r].chain[g] : mean_chain[g];
        }
      }
      // The seed's wait as lost issue: while warp 0 issues its W instructions at e1 / 2 per cycle the
      // block's other 7 warps wait; an SM with another block then issues at e1 rather than e, so
      // loses 8 W (e - e1) / e1 slots; an SM with this block alone loses the other warps' 7 W.
      std::vector<double> wait(kMultiprocessors, 0.0);
      for (unsigned s = 0; s < static_cast<unsigned>(kMultiprocessors); ++s) {
        const double factor = sm_blocks[s] >= 2 ? 8.0 * (e - one_block_e) / one_block_e : 7.0;
        for (const auto& [r, g] : sm_items[s]) wait[s] += factor * (stride == 1 ? replays[r].wait[g] : mean_wait[g]);
      }
      double issue_ms = 0, issue1_ms = 0, occ_ms = 0, wait_total = 0;
      for (unsigned s = 0; s < static_cast<unsigned>(kMultiprocessors); ++s) {
        const double inst = sm[s] + wait[s];
        wait_total += wait[s];
        issue_ms = std::max(issue_ms, inst / (4.0 * e * kClockHz) * 1e3);
        issue1_ms = std::max(issue1_ms, inst / (4.0 * kClockHz) * 1e3);
        occ_ms = std::max(occ_ms, inst / (4.0 * (sm_blocks[s] >= 2 ? e : one_block_e) * kClockHz) * 1e3);
      }
      const double max_chain = *std::max_element(chain.begin(), chain.end());
      double chain_ms = max_chain * (2.0 / one_block_e) / kClockHz * 1e3;
      if (segments > 1) {
        issue_ms += kSegmentMergeLatencyMs;
        issue1_ms += kSegmentMergeLatencyMs;
        occ_ms += kSegmentMergeLatencyMs;
        chain_ms += kSegmentMergeLatencyMs;
      }
      const double time_ms = std::max(occ_ms, chain_ms);
      const double read_ms = kReadMs * static_cast<double>(rows * cols) / static_cast<double>(kBenchmarkTiles * 1024);
      const double tiles = total.tiles;
      const double n = static_cast<double>(sampled.size());
      const double all_tiles = static_cast<double>(rows * (cols / 1024));
      std::printf("%-20s %-8s %5llu %7llu %2u %3llu %5llu %7.3f %8.3f %8.3f %7.2f %8.2f %7.2f %8.0f %8.0f %8.0f %7.1f "
                  "%7.1f %7.1f %8.1f %8.1f %9.4f %9.4f %9.4f %9.4f %9.4f %8.4f %7.2f %7.2f %7.2f %7.2f\n",
                  w.name.c_str(), gen, static_cast<unsigned long long>(rows), static_cast<unsigned long long>(cols),
                  w.warps, static_cast<unsigned long long>(segments), static_cast<unsigned long long>(blocks),
                  100.0 * total.raced_groups / total.groups, total.raced_groups / tiles, total.draws / tiles,
                  100.0 * total.race_tiles / tiles, total.race_warp > 0 ? total.race_lane / total.race_warp : 0.0,
                  total.lane / total.warp, total.warp / tiles + once * static_cast<double>(blocks) / all_tiles,
                  (total.race_warp - total.draw_warp) / tiles, total.draw_warp / tiles, screen / tiles,
                  overhead / tiles + once * static_cast<double>(blocks) / all_tiles, wait_total / all_tiles,
                  total.raced_groups / n, unavoidable / n, issue_ms, issue1_ms, occ_ms, chain_ms, time_ms, read_ms,
                  std::max(read_ms, issue_ms) / read_ms, std::max(read_ms, issue1_ms) / read_ms,
                  std::max(read_ms, occ_ms) / read_ms, std::max(read_ms, time_ms) / read_ms);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::fprintf(stderr, "  what-if %s %s %s: %zu of %llu rows replayed (stride %llu); %.1f s\n", w.name.c_str(), gen,
                   shape.name.c_str(), sampled.size(), static_cast<unsigned long long>(rows),
                   static_cast<unsigned long long>(stride), seconds);
      const std::size_t busiest = static_cast<std::size_t>(std::max_element(sm.begin(), sm.end()) - sm.begin());
      std::printf("#   %s %s: K %u, S %llu, %llu blocks (%llu teams); costs tile %.1f + screen block %.0f at steps 0, "
                  "32, ..., pass %.1f, race %.1f, draw %.1f, publish %.1f, per row %.0f per warp, once per block %.0f "
                  "per warp%s%s; per row %.1f races (%.1f of them unavoidable: groups reaching the row's best score, in "
                  "%.1f tiles; a row-wide widest-first order: %.1f races, one in each segment alone: %.1f), %.0f instructions; seed wait W %.0f instructions per seeded team (mean); busiest SM "
                  "%zu: %.0f blocks, %.4g instructions + %.3g of wait; busiest chain %.4g instructions\n",
                  w.name.c_str(), gen, w.warps, static_cast<unsigned long long>(segments),
                  static_cast<unsigned long long>(blocks), static_cast<unsigned long long>(teams),
                  costs.warp.tile + costs.extras.screen_block / kLanes, costs.extras.screen_block, costs.warp.pass,
                  costs.warp.race, costs.warp.follower_draw, costs.warp.publish, costs.extras.per_row,
                  costs.extras.once_per_block,
                  w.seeded ? "; seed: barrier 10 per warp, warp 0's publish"
                  : w.widest ? "; widest: 16 per tile, 80 + barrier 10 per warp per row, the owner's publish" : "",
                  segments > 1 ? "; merge 70 per block, 426 per row, 1.5 us" : "", total.raced_groups / n,
                  unavoidable / n, unavoidable_tiles / n, sorted / n, segments > 1 ? sorted_segments / n : sorted / n,
                  total.warp / n,
                  w.seeded || w.widest ? wait_sum / (n * static_cast<double>(segments)) : 0.0,
                  busiest, sm_blocks[busiest], sm[busiest], wait[busiest], max_chain);
      std::fflush(stdout);
    }
  }
}

void print_rows_calibration_inputs(const RowsOptions& ro) {
  const Measured& m = kRowsMeasured;
  const double tiles = static_cast<double>(kRowsMeasuredRows * kRowsMeasuredCols / 1024);
  const double active = m.ipc_active * m.sm_active_cycles * kMultiprocessors;
  const double elapsed = m.ipc_elapsed * (m.duration_ms * 1e-3 * kClockHz) * kMultiprocessors;
  std::printf("# rows kernel, measured (H100, commit 1900c764, 4096 x 131072 float, ChaCha20): %.2f IPC x %.0f active "
              "cycles x 132 SMs = %.4g warp instructions = %.0f per tile (Ipc Elapsed x duration: %.0f); %.2f active "
              "lanes; %.2f ms kernel, %.2f ms end to end\n",
              m.ipc_active, m.sm_active_cycles, active, active / tiles, elapsed / tiles, m.active_lanes,
              m.duration_ms, kRowsEndToEndMs);
  for (const Generator g : {Generator::chacha20, Generator::philox}) {
    const bool c = g == Generator::chacha20;
    const RegionCosts& l = c ? kRowsChaChaLaneCosts : kRowsPhiloxLaneCosts;
    const RowsExtras& le = c ? kRowsChaChaLaneExtras : kRowsPhiloxLaneExtras;
    const WarpCosts& w = c ? kRowsChaChaWarpCosts : kRowsPhiloxWarpCosts;
    const RowsExtras& we = c ? kRowsChaChaWarpExtras : kRowsPhiloxWarpExtras;
    std::printf("# rows costs per-lane %-8s (1900c764): tile %.1f, race %.1f, loop iteration %.1f, leader offer %.1f, "
                "follower draw %.1f; screen block %.0f, per row %.0f, once per block %.0f (per warp)\n",
                c ? "chacha20" : "philox", l.tile, l.race, l.loop_iteration, l.leader_offer, l.follower_draw,
                le.screen_block, le.per_row, le.once_per_block);
    std::printf("# rows costs implemented %-8s (686d043): tile %.1f, pass %.1f, race %.1f, follower draw %.1f, "
                "publish %.1f; screen block %.0f, per row %.0f, once per block %.0f (per warp)\n",
                c ? "chacha20" : "philox", w.tile, w.pass, w.race, w.follower_draw, w.publish, we.screen_block,
                we.per_row, we.once_per_block);
  }
  std::printf("# matrix %llu x %llu float32: one read %.4f ms (3.07 TB/s, gpu_read/float/n:2^30); issue rate e = "
              "Executed Ipc Active / 4 = %.3f\n",
              static_cast<unsigned long long>(ro.rows), static_cast<unsigned long long>(ro.cols),
              kReadMs * static_cast<double>(ro.rows * ro.cols) / static_cast<double>(kBenchmarkTiles * 1024),
              kRowsMeasured.ipc_active / 4.0);
  std::printf("# columns: blks blocks in the grid; replay rows replayed (every warp of each); pass%% groups raced;\n"
              "# races/t per tile; draws/t follower blocks drawn per tile; rtile%% tiles with a race; lanes_r\n"
              "# active lanes in race regions; lanes over the kernel; winst/t warp instructions per tile, of\n"
              "# which wi_race in races (race, leader, loop, offers),\n"
              "# wi_draw follower draws, wi_scr TileScreens' ChaCha20 blocks, wi_row the per-row reduction and\n"
              "# set-up; inst/row warp instructions per row (8 warps); rowsSM rows on the busiest SM; issue_ms its\n"
              "# issue time at e = 0.645, issue1_ms at e = 1, occ_ms at e1 where it holds one block; read_ms one\n"
              "# read of the matrix; x_read = max(read, issue) / read, x_read1 and x_occ the same at e = 1 and occ\n");
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
               "       schedule_model --kernel rows [--rows R] [--cols C] [--row-stride S] [--policy per-lane,implemented]\n"
               "                      [--generator ...] [--shape bench|bench-eps0.01|bench-eps100] [--check]\n"
               "policies: per-lane shared warp-wide implemented (rows: per-lane implemented)\n"
               "rows what-ifs: warps-per-row=K (K 1 2 4 8) warp-per-row seeded oracle-seeded segmented[=S]\n"
               "               segmented[=S]+seeded segmented[=S]+oracle warps-per-row=8+oracle whatif (all)\n"
               "shapes: bench bench-eps0.01 bench-eps100 sorted linear-i/32 gentle-i/1024 steep-i equal pareto\n"
               "rows: C a multiple of 1024 above 2048 (a block per row), default 4096 x 131072\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  RowsOptions rows_opt;
  bool rows_kernel = false;
  std::vector<WhatIf> whatifs;  // the rows kernel's what-if layouts
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
          else if (!parse_whatif(name, whatifs)) usage();
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
    } else if (a == "--kernel") {
      const std::string v = value();
      if (v == "rows") rows_kernel = true;
      else if (v != "fused") usage();
    } else if (a == "--rows") {
      rows_opt.rows = std::strtoull(value().c_str(), nullptr, 10);
    } else if (a == "--cols") {
      rows_opt.cols = std::strtoull(value().c_str(), nullptr, 10);
    } else if (a == "--row-stride") {
      rows_opt.row_stride = std::strtoull(value().c_str(), nullptr, 10);
    } else {
      usage();
    }
  }
  if (opt.log2_n < 10 || opt.log2_n > 32 || opt.warp_stride == 0 || opt.steep_warp_stride == 0 ||
      rows_opt.row_stride == 0 || (!whatifs.empty() && !rows_kernel)) {
    usage();
  }
  std::vector<Shape> shapes;
  for (const Shape& s : all_shapes()) {
    if (opt.shapes.empty() || std::find(opt.shapes.begin(), opt.shapes.end(), s.name) != opt.shapes.end()) {
      shapes.push_back(s);
    }
  }
  if (shapes.empty()) usage();
  if (opt.check) check_screens();
  if (rows_kernel) {
    // The rows benchmark's matrix: the single pass's data, by flat index; epsilon by shape.
    if (opt.shapes.empty()) shapes = {all_shapes().front()};
    if (std::any_of(shapes.begin(), shapes.end(), [](const Shape& s) { return s.kind != ShapeKind::bench; }) ||
        rows_opt.rows == 0 || rows_opt.cols % 1024 != 0 || rows_opt.cols <= 2048) {
      usage();
    }
    std::printf("# schedule model, rows kernel: %llu x %llu float32, %d threads\n",
                static_cast<unsigned long long>(rows_opt.rows), static_cast<unsigned long long>(rows_opt.cols),
                omp_get_max_threads());
    print_rows_calibration_inputs(rows_opt);
    const double one_block_e = one_block_issue_rate();
    print_rows_header();
    for (const Generator g : opt.generators) {
      if (g == Generator::chacha20) {
        run_rows<Generator::chacha20>(opt, rows_opt, shapes, one_block_e);
      } else {
        run_rows<Generator::philox>(opt, rows_opt, shapes, one_block_e);
      }
    }
    if (!whatifs.empty()) {
      print_whatif_header();
      for (const Generator g : opt.generators) {
        if (g == Generator::chacha20) {
          run_rows_whatif<Generator::chacha20>(opt, rows_opt, shapes, one_block_e, whatifs);
        } else {
          run_rows_whatif<Generator::philox>(opt, rows_opt, shapes, one_block_e, whatifs);
        }
      }
    }
    return 0;
  }
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
