// SPDX-License-Identifier: Apache-2.0
// What-if layouts of the rows kernel (--kernel rows --policy NAME[,NAME]: none of them is a kernel
// of the library). Each runs the implemented kernel's per-tile code (WarpScreenThreshold::score
// and race_group: run_implemented_tiles, fused_pass.cpp) on every warp's tiles and is priced with
// the same SASS region costs; they differ in how many warps score a row, in which tiles each
// warp takes, and in what the warps' shared threshold word holds:
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
#include <chrono>
#include <cstdlib>
#include <utility>

#include "fused_pass.hpp"
#include "rows.hpp"

namespace schedule_model {
namespace {

// select_rows_kernel<float, G, 32> (SASS_KERNEL=rows SASS_TEAM=32: sass_regions.py):
// its tile loop is add_tiles with warps = 1; per row the warp reduction of ShardResult (389), the
// store, the next row's spec. With own_group_race (the working tree's; sass-regions-rows-team32-
// own-race.txt of bench/results/2026-12-01-schedule-model-top-k/); at commit 686d043, whose races
// drew their own blocks: {539.7, 17.0, 1286.6, 1126.1, 28.0} and {494.0, 19.0, 374.0, 224.0, 28.0}.
constexpr WarpCosts kRowsChaChaWarpTeamCosts{546.7, 21.0, 213.0, 1158.6, 28.0, 0.0, 1085.1};
constexpr WarpCosts kRowsPhiloxWarpTeamCosts{489.0, 24.0, 213.0, 224.0, 28.0, 0.0, 153.5};
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

}  // namespace

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

namespace {

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
      for (unsigned l = 0; l < kLanes; ++l) reaches.emplace_back(in.reach[l], tile * kLanes + l);
      score_tile_widest_first<G>(spec, in, tile, mine);
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
  const WarpRaceOutcome raced = replay_warp_race<G>(
      spec, in, widest_tile, widest_lane, -kInfinity,
      [&](unsigned, double score, std::uint64_t index) { seed.found.offer(score, index); });
  seed.threshold = seed.found.score;
  seed.tally.warp_race(c, raced.drawing, true);
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
  const detail::NoiseSpec spec = benchmark_spec(G, shape.epsilon, stream);
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
              "# kernel's SASS and the estimates of rows_whatifs.cpp (each what-if's on its comment line): K warps\n"
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
    fill_screen_bounds(bounds);
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

}  // namespace

void run_rows_whatifs(const Options& opt, const RowsOptions& rows_opt, const std::vector<Shape>& shapes,
                      double one_block_e, const std::vector<WhatIf>& whatifs) {
  print_whatif_header();
  for (const Generator g : opt.generators) {
    if (g == Generator::chacha20) {
      run_rows_whatif<Generator::chacha20>(opt, rows_opt, shapes, one_block_e, whatifs);
    } else {
      run_rows_whatif<Generator::philox>(opt, rows_opt, shapes, one_block_e, whatifs);
    }
  }
}

}  // namespace schedule_model
