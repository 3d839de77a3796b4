// SPDX-License-Identifier: Apache-2.0
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
// (fused_pass.cpp), its data and stream the benchmark's.
//
// The rows benchmark (bench/batched_gpu_bench.cu, gpu_rows/float/rows:R/cols:C): the matrix is
// device_array<float>(R * C), data[i] as in the single pass (i = r C + c); select_rows with
// Context::with_fixed_seed(kContextSeed) (ChaCha20), the exponential mechanism, epsilon 1,
// sensitivity 1; the call draws R consecutive streams from the context (host/rows/rows.cpp,
// ContextAccess::draw_streams), its first call streams 0 .. R - 1: row r, stream r. (Later
// iterations of the benchmark draw the next R; the ncu profile is of the first call.)
#include <chrono>
#include <cstdlib>

#include "fused_pass.hpp"
#include "rows.hpp"

namespace schedule_model {
namespace {

constexpr double kRowsEndToEndMs = 14.88;  // gpu_rows/float/rows:4096/cols:131072 (gpu.txt)
// A row's team: the block's 8 warps.
constexpr unsigned kTeamWarps = kWarpsPerBlock;

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
  const detail::NoiseSpec spec = benchmark_spec(G, shape.epsilon, stream);
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
  fill_screen_bounds(bounds);
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
    fill_screen_bounds(bounds);
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
    std::printf("# rows costs implemented %-8s: tile %.1f, pass %.1f, race block %.1f (a tile's first race), race %.1f, "
                "follower draw %.1f, publish %.1f; screen block %.0f, per row %.0f, once per block %.0f (per warp)\n",
                c ? "chacha20" : "philox", w.tile, w.pass, w.race_block, w.race, w.follower_draw, w.publish,
                we.screen_block, we.per_row, we.once_per_block);
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

}  // namespace

void run_rows_kernel(const Options& opt, const RowsOptions& rows_opt, const std::vector<Shape>& shapes,
                     const std::vector<WhatIf>& whatifs) {
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
  if (!whatifs.empty()) run_rows_whatifs(opt, rows_opt, shapes, one_block_e, whatifs);
}

}  // namespace schedule_model
