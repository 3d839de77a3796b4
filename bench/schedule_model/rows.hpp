// SPDX-License-Identifier: Apache-2.0
// The rows kernel (--kernel rows): what its replay (rows.cpp) and its what-if layouts
// (rows_whatifs.cpp) share: the per-region costs of its SASS, its measurement on the H100, the
// options, and the entry points main calls.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schedule_model.hpp"

namespace schedule_model {

// Per-region costs of select_rows_kernel<float, G, 256> (sass_regions.py on its sm_90 SASS, nvcc
// 13.0 -O3, the library's flags): `lane` the per-lane kernel of commit 1900c764 (measured on the
// H100), `warp` the warp-wide one (WarpScreenThreshold on team_published, below). The
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
// The warp-wide kernel with own_group_race (the working tree's; pass = 21.0 + race_block 1085.1
// with ChaCha20, 23.0 + 154.5 with Philox: sass-regions-rows-own-race.txt of
// bench/results/2026-12-01-schedule-model-top-k/). Commit 686d043's, whose races drew their own
// blocks: {549.8, 17.0, 1303.1, 1127.1, 28.0} and {515.0, 19.0, 377.5, 224.5, 28.0}.
constexpr WarpCosts kRowsChaChaWarpCosts{555.8, 21.0, 217.0, 1159.6, 28.0, 0.0, 1085.1};
constexpr WarpCosts kRowsPhiloxWarpCosts{514.0, 23.0, 218.0, 224.5, 28.0, 0.0, 154.5};
constexpr RowsExtras kRowsChaChaWarpExtras{985.0, 524.0, 188.0};
constexpr RowsExtras kRowsPhiloxWarpExtras{0.0, 527.0, 185.0};

// Measured (H100 80GB HBM3, 2026-11-24, commit 1900c764, ncu-rows.txt): select_rows_kernel<float,
// chacha20, 256> over 4096 x 131072, 264 blocks. Warp Cycles Per Issued Instruction 5.76 at 3.72
// active warps per scheduler: Executed Ipc Active / 4 = 0.645 = 3.72 / 5.76.
constexpr Measured kRowsMeasured{2.58, 2.50, 22937677.20, 11.98, 4.14};
constexpr std::uint64_t kRowsMeasuredRows = 4096;
constexpr std::uint64_t kRowsMeasuredCols = 131072;
// Blocks per SM of select_rows_kernel (kRowsMinBlocksPerMultiprocessor), either generator.
constexpr int kRowsBlocksPerSm = 2;

struct RowsOptions {
  std::uint64_t rows = kRowsMeasuredRows;
  std::uint64_t cols = kRowsMeasuredCols;
  std::uint64_t row_stride = 1;  // replay rows 0, s, 2s, ... (each with all its warps)
};

// A what-if layout of the rows kernel as --policy names it (rows_whatifs.cpp says what each is).
struct WhatIf {
  std::string name;
  unsigned warps = 8;          // warps per row (per segment)
  bool segmented = false;
  std::uint64_t segments = 0;  // segmented: S, 0 for 264 / R
  bool seeded = false;
  bool widest = false;
  bool oracle = false;
};

// Appends the what-ifs `name` names to `out` (whatif: all of them); false if it names none.
bool parse_whatif(const std::string& name, std::vector<WhatIf>& out);

// The rows kernel over rows_opt.rows x rows_opt.cols: its calibration inputs, a table row per
// generator, shape and policy (per-lane, implemented), then the what-ifs' table if any are asked
// for.
void run_rows_kernel(const Options& opt, const RowsOptions& rows_opt, const std::vector<Shape>& shapes,
                     const std::vector<WhatIf>& whatifs);

// The what-ifs' table (rows_whatifs.cpp); one_block_e: the issue rate of an SM holding one block.
void run_rows_whatifs(const Options& opt, const RowsOptions& rows_opt, const std::vector<Shape>& shapes,
                      double one_block_e, const std::vector<WhatIf>& whatifs);

}  // namespace schedule_model
