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
// The files (bench/schedule_model/):
//   schedule_model.hpp   what both kernels' replays share: the benchmark's set-up, the data shapes,
//                        each tile's screens and inputs, the cost, measurement and tally types, the
//                        options
//   fused_pass.hpp, .cpp the single pass (fused_select_kernel): one warp's tiles under each policy,
//                        the grid-wide word, the pass's table; the rows kernel reuses its per-lane
//                        and implemented warp replays for each of its rows
//   rows.hpp, .cpp       --kernel rows: select_rows_kernel, a team of warps per row, its costs and
//                        time
//   rows_whatifs.cpp     --kernel rows --policy whatif,...: layouts of the rows kernel that are not
//                        kernels of the library
//   schedule_model.cpp   this file: the options, the --check of the tile screens, main
//
// Policies (--policy per-lane, shared, warp-wide, implemented): fused_pass.cpp says what each does.
//
// --kernel rows: the rows kernel (kernels/select_rows.cu, select_rows_kernel<float, G, 256>), R
// releases over an R x C matrix, a block of 8 warps per row, each row replayed with the per-lane
// and implemented replays (rows.cpp).
//
// Build and run: bench/schedule_model/run.sh (or the command in README.md).
#include <cstdlib>
#include <string>
#include <vector>

#include "fused_pass.hpp"
#include "rows.hpp"
#include "top_k.hpp"
#include "schedule_model.hpp"

namespace schedule_model {
namespace {

// The replay's screens are the library's: TileScreens' hand-out equals group_screen for every lane.
void check_screens() {
  for (const Generator g : {Generator::chacha20, Generator::philox}) {
    const detail::NoiseSpec spec = benchmark_spec(g, 1.0, kStream);
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

[[noreturn]] void usage() {
  std::fprintf(stderr,
               "usage: schedule_model [--policy POLICY[,POLICY...]|all] [--generator chacha20|philox|all]\n"
               "                      [--shape NAME[,NAME...]|all] [--log2-n N] [--warp-stride S]\n"
               "                      [--steep-warp-stride S] [--mechanism exponential|permute-and-flip|laplace-noisy-max]\n"
               "                      [--check]\n"
               "       schedule_model --kernel rows [--rows R] [--cols C] [--row-stride S] [--policy per-lane,implemented]\n"
               "                      [--generator ...] [--shape bench|bench-eps0.01|bench-eps100] [--check]\n"
               "policies: per-lane shared warp-wide implemented (rows: per-lane implemented)\n"
               "rows what-ifs: warps-per-row=K (K 1 2 4 8) warp-per-row seeded oracle-seeded segmented[=S]\n"
               "               segmented[=S]+seeded segmented[=S]+oracle warps-per-row=8+oracle whatif (all)\n"
               "shapes: bench bench-eps0.01 bench-eps100 sorted linear-i/32 gentle-i/1024 steep-i equal pareto\n"
               "rows: C a multiple of 1024 above 2048 (a block per row), default 4096 x 131072\n"
               "       schedule_model --kernel top-k [--k K[,K...]] [--log2-n N] [--generator ...]\n"
               "                      [--shape bench|bench-eps0.01|bench-eps100] [--check]\n");
  std::exit(2);
}

}  // namespace
}  // namespace schedule_model

int main(int argc, char** argv) {
  using namespace schedule_model;
  Options opt;
  RowsOptions rows_opt;
  bool rows_kernel = false;
  bool top_k_kernel = false;
  TopKOptions top_k_opt;
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
    } else if (a == "--mechanism") {
      const std::string v = value();
      if (v == "exponential") opt.mechanism = Mechanism::exponential;
      else if (v == "permute-and-flip") opt.mechanism = Mechanism::permute_and_flip;
      else if (v == "laplace-noisy-max") opt.mechanism = Mechanism::laplace_noisy_max;
      else usage();
    } else if (a == "--check") {
      opt.check = true;
    } else if (a == "--kernel") {
      const std::string v = value();
      if (v == "rows") rows_kernel = true;
      else if (v == "top-k") top_k_kernel = true;
      else if (v != "fused") usage();
    } else if (a == "--k") {
      const std::string v = value();
      top_k_opt.ks.clear();
      std::size_t p = 0;
      while (p <= v.size()) {
        const std::size_t q = std::min(v.find(',', p), v.size());
        const std::uint64_t k = std::strtoull(v.substr(p, q - p).c_str(), nullptr, 10);
        if (k == 0 || k > 1024) usage();  // kGpuTopKMax
        top_k_opt.ks.push_back(k);
        p = q + 1;
      }
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
      rows_opt.row_stride == 0 || (!whatifs.empty() && !rows_kernel) ||
      (opt.mechanism != Mechanism::exponential && (rows_kernel || top_k_kernel))) {  // their benchmarks: EM
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
    run_rows_kernel(opt, rows_opt, shapes, whatifs);
    return 0;
  }
  if (top_k_kernel) {
    if (opt.shapes.empty()) shapes = {all_shapes().front()};
    if (std::any_of(shapes.begin(), shapes.end(), [](const Shape& s) { return s.kind != ShapeKind::bench; })) usage();
    run_top_k_kernel(opt, top_k_opt, shapes);
    return 0;
  }
  run_fused_pass(opt, shapes);
  return 0;
}
