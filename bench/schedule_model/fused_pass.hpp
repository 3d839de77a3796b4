// SPDX-License-Identifier: Apache-2.0
// The single pass (fused_select_kernel): the warp replays the rows kernel reuses for each of its
// rows, and the single pass's driver (--kernel fused, the default). Defined in fused_pass.cpp, the
// templates instantiated there for both generators.
#pragma once

#include <cstdint>
#include <vector>

#include "schedule_model.hpp"

namespace schedule_model {

// The single pass's costs (RegionCosts, WarpCosts: schedule_model.hpp says what each is), also the
// top-k model's (top_k.cpp: the same scan, screen and races).

// ChaCha20: a generator block is 960 instructions of quarter rounds; the tile's screen block is
// computed once per 32 tiles (30 per tile) and handed out with 16 shuffles.
inline constexpr RegionCosts kChaChaCosts{499.2, 1121.8, 24.0, 10.0, 1136.0, 912.0};
// Philox: a generator block is about 100 instructions; every lane computes its screen block.
inline constexpr RegionCosts kPhiloxCosts{461.0, 228.5, 23.0, 10.0, 237.2, 896.0};

// The implemented kernel (WarpScreenThreshold with own_group_race), from its own SASS
// (SASS=1 MODEL=0 bench/schedule_model/run.sh: pass = 23.0 + race_block 1052.8 with ChaCha20,
// 42.0 + 137.0 with Philox).
inline constexpr WarpCosts kChaChaWarpCosts{545.2, 23.0, 217.0, 1119.8, 13.0, 921.0, 1052.8};
inline constexpr WarpCosts kPhiloxWarpCosts{511.0, 42.0, 223.0, 223.0, 13.0, 901.0, 137.0};
// The same kernel at commit fa66307, whose races drew their blocks with all 32 lanes (SASS=1
// SASS_COMMIT=fa66307): the top-k model's warp-races schedule.
inline constexpr WarpCosts kChaChaWarpCostsBlockPerRace{551.2, 20.0, 1256.1, 1119.8, 13.0, 921.0, 0.0};
inline constexpr WarpCosts kPhiloxWarpCostsBlockPerRace{513.0, 20.0, 375.0, 222.0, 13.0, 902.0, 0.0};

// Measured (H100 80GB HBM3, 2026-11-24, ncu --clock-control none; the files say how): the per-lane
// kernel, whose Executed Ipc Elapsed / 4 is the issue rate of the per-lane, shared and warp-wide
// rows.
inline constexpr Measured kChaChaMeasured{1.92, 1.81, 22239432.79, 11.91, 4.64};
inline constexpr Measured kPhiloxMeasured{2.57, 2.49, 6846260.36, 3.57, 8.60};

// The implemented kernel's issue rate, warp instructions per scheduler per cycle (H200, 2026-12-04,
// bench/results/2026-12-04-nvidia-h200, gpu.txt): its whole-call times over the three ascending
// shapes, where the pass is issue-bound (gpu_select_shape/float/{linear,gentle,steep}_ascending/
// exponential/G/n:2^30: ChaCha20 4,195, 3,846 and 3,663 us; Philox 1,892, 1,875 and 1,860 us),
// against the replay's warp instructions per tile for the same shapes (ChaCha20 3,108, 2,971,
// 2,973; Philox 1,197, 1,158, 1,152; every 32nd warp): the rate at which the three predicted times
// sum to the three measured (each shape within 5 %). The H200 has the H100's 132 SMs at the same
// clock, so the rate is the H100's too. (The per-lane kernel's 0.45 with ChaCha20 spent 43 % of its
// cycles waiting for instruction fetches over 61 KB of loop code; this kernel's loop without a
// race is 8 KB. Philox: 0.62 before, 0.63 now.) The calls' fixed costs are inside these times,
// which biases the rates low by up to 1.5 % (ChaCha20) and 3 % (Philox). Where the issue time is
// below the read (uniform, all-equal data) max(read, issue) is a lower bound: the kernel measured
// 1.14-1.28x one read there. bench/results/2026-12-04-schedule-model-h200/.
inline constexpr double kChaChaImplementedIssueRate = 0.776;
inline constexpr double kPhiloxImplementedIssueRate = 0.625;

// The warps replayed together and the tiles they share: warp w of `warps` takes tiles w, w + warps,
// ... below `tiles` (the single pass's grid; a rows-kernel row's team of 8 warps).
struct Grid {
  std::uint64_t warps;
  std::uint64_t tiles;
};

// The per-lane kernel (commit e7c9489): each lane screens its group against its own running best.
// `result`: the warp's best candidate.
template <Generator G>
Tally run_per_lane(const detail::NoiseSpec& spec, const Data& data, const double* bounds, const RegionCosts& c,
                   const Grid& grid, std::uint64_t warp, Best& result);

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
                            std::uint64_t skip_group = ~std::uint64_t{0});

// Warp `warp` of `grid`: tiles warp, warp + grid.warps, ...
template <Generator G>
Tally run_implemented(const detail::NoiseSpec& spec, const Data& data, const double* bounds, const WarpCosts& c,
                      const Grid& grid, std::uint64_t warp, const std::vector<double>& global, Best& result);

// The grid-wide word at every step (word[s]: what a warp reads at its step s), and in `overall`
// the pass's exact arg-max.
template <Generator G>
std::vector<double> grid_word(const detail::NoiseSpec& spec, const Data& data, const double* bounds,
                              const Grid& grid, Best& overall);

// The single pass at 2^opt.log2_n candidates: the calibration inputs, then a table row per
// generator, shape and policy.
void run_fused_pass(const Options& opt, const std::vector<Shape>& shapes);

}  // namespace schedule_model
