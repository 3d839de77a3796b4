// SPDX-License-Identifier: Apache-2.0
// The single pass (fused_select_kernel, include/dpselect/detail/fused_select_kernel.cuh,
// warp_tiles.cuh): one warp's whole pass under each threshold policy, the grid-wide word, and the
// driver that replays a sample of the grid's warps and prints a table row per policy.
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
#include <bit>
#include <chrono>
#include <cstdlib>
#include <memory>

#include "fused_pass.hpp"

namespace schedule_model {
namespace {

// ---------------------------------------------------------------------------------------------
// The what-if policies' costs (the kernels' own: fused_pass.hpp).

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

constexpr double kCubArgMaxMs = 1.477;       // gpu_cub_argmax/float/n:2^30

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

// A lane's sink under a shared threshold: offers go to the lane's own accumulator, the threshold
// is the larger of its best and the warp's T (a score some candidate is known to reach).
struct SharedSink {
  dpselect::detail::ShardAccumulator& own;
  double floor;
  double threshold() const { return std::max(own.threshold(), floor); }
  void offer(double score, std::uint64_t index) { own.offer(score, index); }
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
    t.follower_draws(c.follower_draw, drawing);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// One warp's whole pass under each policy. `global` (shared, warp-wide): the grid-wide word seen
// at each step.

template <Generator G>
Tally run_per_lane(const detail::NoiseSpec& spec, const Data& data, const double* bounds, const RegionCosts& c,
                   const Grid& grid, std::uint64_t warp, Best& result) {
  Tally t;
  t.start_warp(c.once_per_warp);
  detail::ShardAccumulator acc[kLanes];
  TileInputs in;
  DrawLog logs[kLanes];
  for (std::uint64_t tile = warp; tile < grid.tiles; tile += grid.warps) {
    load_tile<G>(spec, data, bounds, tile, in);
    t.start_tile(c.tile);
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

namespace {

template <Generator G>
Tally run_shared(const detail::NoiseSpec& spec, const Data& data, const double* bounds, const RegionCosts& c,
                 const Grid& grid, std::uint64_t warp, const std::vector<double>& global, Best& result) {
  Tally t;
  t.start_warp(c.once_per_warp);
  detail::ShardAccumulator acc[kLanes];
  TileInputs in;
  DrawLog logs[kLanes];
  std::uint64_t step = 0;
  for (std::uint64_t tile = warp; tile < grid.tiles; tile += grid.warps, ++step) {
    load_tile<G>(spec, data, bounds, tile, in);
    t.start_tile(c.tile + kSharedTileExtra);
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
  t.start_warp(c.once_per_warp);
  Best best;  // the warp's; lanes no longer keep bests of their own
  TileInputs in;
  std::uint64_t step = 0;
  for (std::uint64_t tile = warp; tile < grid.tiles; tile += grid.warps, ++step) {
    load_tile<G>(spec, data, bounds, tile, in);
    t.start_tile(c.tile + kSharedTileExtra);
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
      // The race, by the whole warp: the race block and the leader's noise (every lane, 32
      // active), the leader offered first so that the followers are tested against its score.
      const WarpRaceOutcome raced = replay_warp_race<G>(
          spec, in, tile, l, floor, [&](unsigned, double score, std::uint64_t index) { best.offer(score, index); });
      any = true;
      t.raced_groups += 1;
      t.issue(c.race + kWarpWideRaceExtra, kLanes, true);
      t.follower_draws(c.follower_draw, raced.drawing);
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

}  // namespace

// The implemented kernel, WarpScreenThreshold::score and race_group (device_groups.cuh), step by
// step: `threshold_` is the warp's running threshold, each lane keeps its own accumulator (lane j
// offers candidate 32 g + j of every group g the warp races), and every test is the kernel's.
// Its parameters: fused_pass.hpp.
template <Generator G>
Tally run_implemented_tiles(const detail::NoiseSpec& spec, const Data& data, const double* bounds,
                            const WarpCosts& c, const std::vector<std::uint64_t>& tiles,
                            const std::vector<double>& global, Best& result, FirstRace* first,
                            std::uint64_t skip_group) {
  Tally t;
  t.start_warp(c.once_per_warp);
  detail::ShardAccumulator acc[kLanes];
  double warp_threshold = -kInfinity;  // threshold_: known_score is -inf in the benchmark
  TileInputs in;
  for (std::uint64_t step = 0; step < tiles.size(); ++step) {
    const std::uint64_t tile = tiles[step];
    load_tile<G>(spec, data, bounds, tile, in);
    if (skip_group / kLanes == tile) in.reach[skip_group % kLanes] = -kInfinity;  // raced already (what-ifs)
    t.start_tile(c.tile);
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
    bool first_in_tile = true;
    while (pending != 0) {
      const unsigned next = widest_pending(pending, in.reach);
      // race_group: the race block from the lane that owns the group; lane j scores candidate 32 g + j.
      const WarpRaceOutcome raced = replay_warp_race<G>(
          spec, in, tile, next, threshold,
          [&](unsigned lane, double score, std::uint64_t index) { acc[lane].offer(score, index); });
      const unsigned drawing = raced.drawing;
      threshold = raced.threshold;
      for (unsigned l = 0; l < kLanes; ++l) threshold = std::max(threshold, acc[l].threshold());
      t.warp_race(c, drawing, first_in_tile);
      if (first != nullptr && step == 0 && t.raced_groups == 1) {
        first->threshold = threshold;
        first->instructions = c.pass + warp_race_cost(c, true) + (drawing != 0 ? c.follower_draw : 0.0);
      }
      first_in_tile = false;
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
        score_tile_widest_first<G>(spec, in, tile, mine);
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

// The replays the rows kernel reuses (rows.cpp, rows_whatifs.cpp), for both generators.
template Tally run_per_lane<Generator::chacha20>(const detail::NoiseSpec&, const Data&, const double*,
                                                 const RegionCosts&, const Grid&, std::uint64_t, Best&);
template Tally run_per_lane<Generator::philox>(const detail::NoiseSpec&, const Data&, const double*,
                                               const RegionCosts&, const Grid&, std::uint64_t, Best&);
template Tally run_implemented_tiles<Generator::chacha20>(const detail::NoiseSpec&, const Data&, const double*,
                                                          const WarpCosts&, const std::vector<std::uint64_t>&,
                                                          const std::vector<double>&, Best&, FirstRace*,
                                                          std::uint64_t);
template Tally run_implemented_tiles<Generator::philox>(const detail::NoiseSpec&, const Data&, const double*,
                                                        const WarpCosts&, const std::vector<std::uint64_t>&,
                                                        const std::vector<double>&, Best&, FirstRace*,
                                                        std::uint64_t);
template Tally run_implemented<Generator::chacha20>(const detail::NoiseSpec&, const Data&, const double*,
                                                    const WarpCosts&, const Grid&, std::uint64_t,
                                                    const std::vector<double>&, Best&);
template Tally run_implemented<Generator::philox>(const detail::NoiseSpec&, const Data&, const double*,
                                                  const WarpCosts&, const Grid&, std::uint64_t,
                                                  const std::vector<double>&, Best&);
template std::vector<double> grid_word<Generator::chacha20>(const detail::NoiseSpec&, const Data&, const double*,
                                                            const Grid&, Best&);
template std::vector<double> grid_word<Generator::philox>(const detail::NoiseSpec&, const Data&, const double*,
                                                          const Grid&, Best&);

// ---------------------------------------------------------------------------------------------
// Driver.

namespace {

// Shapes where most groups race with 31 follower draws under the per-lane policy: the replay
// samples fewer warps there to stay within the time budget.
bool is_expensive(const Shape& s) {
  return s.kind == ShapeKind::sorted || s.kind == ShapeKind::linear32 || s.kind == ShapeKind::linear1024 ||
         s.kind == ShapeKind::steep;
}

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
  // Issue time at the measured issue rate (the per-lane kernel's Executed Ipc Elapsed / 4 per
  // scheduler; the implemented kernel's own, from its H200 times), and at one instruction per
  // scheduler per cycle (x_read1, the bound a converged kernel approaches).
  const double efficiency = p == Policy::implemented
                                ? (g == Generator::chacha20 ? kChaChaImplementedIssueRate : kPhiloxImplementedIssueRate)
                                : m.ipc_elapsed / 4.0;
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
    const detail::NoiseSpec spec = benchmark_spec(G, shape.epsilon, kStream, opt.mechanism);
    double bounds[detail::kScreenBoundSlots];
    fill_screen_bounds(bounds, opt.mechanism);
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
  std::printf("# issue rate (per scheduler per cycle): per-lane, shared, warp-wide the per-lane kernel's (H100 ncu: "
              "%.3f chacha20, %.3f philox); implemented its own (H200 times of the ascending shapes: %.3f, %.3f)\n",
              kChaChaMeasured.ipc_elapsed / 4.0, kPhiloxMeasured.ipc_elapsed / 4.0, kChaChaImplementedIssueRate,
              kPhiloxImplementedIssueRate);
  std::printf("# shared / warp-wide bookkeeping (estimated): %.0f per tile, %.0f after the first race, %.0f per "
              "publish, warp-wide %.0f per race\n",
              kSharedTileExtra, kSharedSecondMax, kPublish, kWarpWideRaceExtra);
  for (const Generator g : {Generator::chacha20, Generator::philox}) {
    const WarpCosts& c = g == Generator::chacha20 ? kChaChaWarpCosts : kPhiloxWarpCosts;
    std::printf("# implemented costs %-8s: tile %.1f, pass %.1f, race block %.1f (a tile's first race), race %.1f, "
                "follower draw %.1f, publish %.1f, once per warp %.0f\n",
                g == Generator::chacha20 ? "chacha20" : "philox", c.tile, c.pass, c.race_block, c.race,
                c.follower_draw, c.publish, c.once_per_warp);
  }
}

}  // namespace

void run_fused_pass(const Options& opt, const std::vector<Shape>& shapes) {
  std::unique_ptr<SortedBench> sorted;
  if (std::any_of(shapes.begin(), shapes.end(), [](const Shape& s) { return s.kind == ShapeKind::sorted; })) {
    sorted = std::make_unique<SortedBench>(std::uint64_t{1} << opt.log2_n);
  }
  std::printf("# schedule model: n = 2^%d candidates, %s mechanism%s, %d threads\n", opt.log2_n,
              mechanism_name(opt.mechanism),
              opt.mechanism == Mechanism::exponential ? "" : " (its races and draws; priced by the exponential's SASS)",
              omp_get_max_threads());
  print_calibration_inputs();
  std::printf("# columns: warps replayed; pass%% groups passing the screen; races/t and draws/t per tile;\n"
              "# rtile%% tiles with a race region; lanes_r active lanes in race regions; lanes over the whole\n"
              "# pass; winst/t warp instructions per tile, of which wi_race in races (race block, leader,\n"
              "# follower loop, offers) and wi_draw in follower draws; issue_ms at the measured issue rate (above);\n"
              "# pass_ms = max(read, issue); x_read = pass_ms / read (read: 1.399 ms for 2^30 float32, H100);\n"
              "# x_read1 the same at 1 instruction per scheduler per cycle; x_h200 = max(H200 read, issue) / H200\n"
              "# read (0.956 ms; same SMs and clock, so the same issue time)\n");
  print_header();
  for (const Generator g : opt.generators) {
    if (g == Generator::chacha20) {
      run_generator<Generator::chacha20>(opt, shapes, sorted.get());
    } else {
      run_generator<Generator::philox>(opt, shapes, sorted.get());
    }
  }
}

}  // namespace schedule_model
