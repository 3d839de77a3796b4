// SPDX-License-Identifier: Apache-2.0
// The single pass (fused_select_kernel): the warp replays the rows kernel reuses for each of its
// rows, and the single pass's driver (--kernel fused, the default). Defined in fused_pass.cpp, the
// templates instantiated there for both generators.
#pragma once

#include <cstdint>
#include <vector>

#include "schedule_model.hpp"

namespace schedule_model {

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
