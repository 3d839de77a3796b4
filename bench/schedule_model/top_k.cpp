// SPDX-License-Identifier: Apache-2.0
// The top-k kernel's pass 1 (top_k_blocks_kernel, kernels/top_k.cu) replayed without a GPU, over
// the benchmark's data (bench/batched_gpu_bench.cu, bm_top_k: the single pass's float32 array,
// epsilon 1 per pick, ChaCha20 unless --generator says otherwise, its first stream), under two
// schedules:
//
//   measured     the kernel of the H100 run (commit 686d043 and before): each lane scores its own
//                group in four rounds of 8 of its lanes (score_scanned_group over a window),
//                drawing the group's race block again in each round where it passes the block's
//                threshold; every round ends with two block barriers, and the block keeps its k
//                best when the next round might not fit (more than 2,048 entries).
//   warp-races   commit fa66307: the groups whose reach clears the larger of the block's threshold
//                and the grid-wide bound are raced by the whole warp, widest first, at most 8 per
//                warp per round (race_group_by_warp, followers against the threshold), every lane
//                drawing the raced group's race block; a tile step where no warp races costs one
//                block barrier; after a round with races the block keeps k when the next round
//                might not fit or k entries have been appended since its last keep, and publishes
//                its k-th score to the grid's bound.
//   implemented  the kernel now: as warp-races, but at a tile step where a warp races, each lane
//                whose group is pending draws its own group's race block first (own_group_race:
//                the leader's time and lane), all in one warp-level issue of the block, and each
//                race takes its group's leader from that lane by shuffles (race_of_lane). The same
//                races, appends and keeps (the same bits), priced otherwise.
//
// Every block of the grid (132 SMs x 2 blocks of 8 warps) is replayed, in lockstep by tile step:
// a bound published at step s is read from step s + 1 on (the grid's order is not known; a block
// sees its own publish at once). The appends are the kernel's (every score from the round's
// threshold up), the keeps sort and merge them under the library's order, so both schedules end
// with the exact k best: --check compares them with a screened exact pass.
//
// Pricing: the races, draws and tile scans by the single pass's SASS costs (fused_pass.hpp: the
// per-lane RegionCosts for the measured kernel, WarpCosts of commit fa66307 for warp-races and of
// the working tree for implemented; the same scan, screen and race code); a round's bookkeeping, the appends and the keeps' sort and merge by the
// estimates below (not from the top-k kernel's SASS). Time: the larger of
//   issue_ms  each SM's two blocks' instructions at the single pass's measured issue rate
//             (Executed Ipc Active / 4 = 0.48 per scheduler, ChaCha20; 0.64 Philox), and
//   chain_ms  each block's barrier-bound path: every round lasts as long as its busiest warp
//             (the barrier waits for it), at the rows kernel's measured 5.76 cycles per issued
//             instruction of a warp (a warp is no faster alone: its own latencies).
// The measured kernel's prediction is set against the H100's gpu_top_k times (ChaCha20).
#include <chrono>
#include <cmath>
#include <cstring>

#include "fused_pass.hpp"
#include "top_k.hpp"

namespace schedule_model {
namespace {

constexpr unsigned kBlockWarps = 8;                      // kTopKThreads / 32
constexpr unsigned kCapacity = 4096;                     // kTopKCapacity
constexpr unsigned kOffersPerRound = 2048;               // either kernel: 256 threads x 8
constexpr unsigned kRacesPerRound = 8;                   // implemented: kRacesPerRound
constexpr unsigned kWindowLanes = 8;                     // measured: kLanesPerRound
constexpr unsigned kKeptPerThread = 4;                   // (kGpuTopKMax 1024 + 255) / 256
constexpr unsigned kTopKBlocksPerSm = 2;                 // __launch_bounds__(256, 2), 2 x 100 KiB shared

// Estimated costs, warp instructions (no SASS regions of the top-k kernel yet):
// a round of the measured kernel, per warp: the window, the screen test again, the follower loop's
// set-up, end_round's count load and compare between its two barriers (24);
constexpr double kMeasuredRound = 24.0;
// a round of the implemented kernel, per warp: the bound's load and shuffle, the threshold, the
// ballot of the pending lanes, the loop test, __syncthreads_or (15); after a round with races, the
// keep test and the second __syncthreads_or (10);
constexpr double kRound = 15.0;
constexpr double kRoundAfterRaces = 10.0;
// an append issue (atomicAdd on the count, two stores, the threshold test): 8;
constexpr double kAppend = 8.0;
// the keep: a warp issue of 32 bitonic pairs (the pair's positions, four 8-byte shared loads, the
// order test, four stores) 24, each stage's loop and barrier 6 per warp; the merge path's binary
// search 12 per step, each kept rank 16 (unrolled, kKeptPerThread per thread), and 40 per warp for
// the write-back, the threshold and the barriers.
constexpr double kSortPair = 24.0;
constexpr double kSortStage = 6.0;
constexpr double kMergeSplitStep = 12.0;
constexpr double kMergeRank = 16.0;
constexpr double kKeepFixed = 40.0;
// A warp's cycles per issued instruction (rows kernel, ncu: Warp Cycles Per Issued Instruction).
constexpr double kWarpCyclesPerInstruction = 5.76;

// Measured (H100 80GB HBM3, 2026-11-24, gpu.txt): gpu_top_k/float/k:K/n:2^30, ChaCha20, and one
// exponential-mechanism pass over the same array (gpu_select/float/exponential/chacha20/n:2^30).
struct TopKMeasured {
  std::uint64_t k;
  double ms;
};
constexpr TopKMeasured kTopKMeasured[] = {{1, 18.239}, {16, 13.319}, {128, 17.280}, {1024, 22.294}};
// The implemented kernel, measured (H200, 2026-12-04, bench/results/2026-12-04-nvidia-h200, gpu.txt):
// gpu_top_k/float/k:K/n:2^30, ChaCha20, whole calls (both passes, the result's copy): the implemented
// schedule's check, uncalibrated (the H200 has the H100's SMs and clock: the same issue and chain
// terms, its own read).
constexpr TopKMeasured kTopKMeasuredH200[] = {{16, 4.141}, {1024, 17.045}};
constexpr double kEmPassMs = 12.124;
constexpr double kEmPassPhiloxMs = 3.650;

enum class Schedule { measured, warp_races, implemented };

struct Entry {
  double score;
  std::uint64_t index;
};
bool ranks_before(const Entry& a, const Entry& b) {  // the library's order (ranked_lists.hpp)
  return detail::ranks_before(a.score, a.index, b.score, b.index);
}

// A block's shared slots: entries [0, sorted) best first (the last keep's), the rest appended.
struct Slots {
  std::vector<Entry> entries;
  std::size_t sorted = 0;
  double threshold = -kInfinity;
};

struct TopKTally {
  double tiles = 0;
  double steps = 0;
  double rounds = 0;         // implemented: race_tile_groups' rounds; measured: 4 per step
  double barriers = 0;       // block barriers outside the keeps
  double race_issues = 0;    // warp-level issues of a race region
  double race_blocks = 0;    // race blocks drawn (lanes: a per-lane race draws its own)
  double race_lanes = 0;     // active lanes over the race issues
  double draws = 0;          // follower blocks drawn
  double appends = 0;        // entries appended
  double keeps = 0;
  double sort_pairs = 0;     // bitonic compare-exchanges, padded
  double instructions = 0;   // warp instructions, all warps
  double race_instructions = 0;
  double keep_instructions = 0;
  double chain = 0;          // the block's barrier-bound path, warp instructions
  void add(const TopKTally& o) {
    tiles += o.tiles; steps += o.steps; rounds += o.rounds; barriers += o.barriers; race_issues += o.race_issues;
    race_blocks += o.race_blocks; race_lanes += o.race_lanes; draws += o.draws; appends += o.appends;
    keeps += o.keeps; sort_pairs += o.sort_pairs; instructions += o.instructions;
    race_instructions += o.race_instructions; keep_instructions += o.keep_instructions; chain += o.chain;
  }
};

// sort_and_keep: sorts the appended entries (bitonic over the next power of two), merges them with
// the kept ones, keeps the `k` best and sets the threshold (the k-th score once there are k).
// Charges the block's instructions and its path.
void keep_k(Slots& s, std::uint64_t k, TopKTally& t) {
  const std::size_t appended = s.entries.size() - s.sorted;
  double instructions = 0;
  double chain = 0;
  if (appended >= 2) {
    std::uint64_t padded = 1;
    unsigned levels = 0;
    while (padded < appended) {
      padded <<= 1;
      ++levels;
    }
    const double stages = levels * (levels + 1) / 2.0;
    const double pair_issues = std::ceil(static_cast<double>(padded) / 64.0);  // 32 pairs a warp issue
    instructions += stages * (pair_issues * kSortPair + kBlockWarps * kSortStage);
    chain += stages * (std::ceil(pair_issues / kBlockWarps) * kSortPair + kSortStage);
    t.sort_pairs += stages * static_cast<double>(padded) / 2.0;
  }
  const double search_steps = std::ceil(std::log2(static_cast<double>(s.entries.size()) + 1.0));
  const double per_warp = search_steps * kMergeSplitStep + kKeptPerThread * kMergeRank + kKeepFixed;
  instructions += kBlockWarps * per_warp;
  chain += per_warp;
  std::sort(s.entries.begin() + static_cast<std::ptrdiff_t>(s.sorted), s.entries.end(), ranks_before);
  std::inplace_merge(s.entries.begin(), s.entries.begin() + static_cast<std::ptrdiff_t>(s.sorted), s.entries.end(),
                     ranks_before);
  const std::size_t count = s.entries.size();
  if (count > k) s.entries.resize(k);
  s.sorted = s.entries.size();
  s.threshold = count >= k ? s.entries[k - 1].score : -kInfinity;
  t.keeps += 1;
  t.instructions += instructions;
  t.keep_instructions += instructions;
  t.chain += chain;
}

// One block's replay state under one schedule and k.
struct BlockState {
  Slots slots;
  TopKTally tally;
  double published = -kInfinity;  // the largest k-th score it published (implemented)
};

// The block's 8 tiles of one step (a warp's tile past the end: no lanes).
struct StepTiles {
  TileInputs in[kBlockWarps];
  std::uint64_t tile[kBlockWarps];
  bool valid[kBlockWarps];
};

template <Generator G>
void step_implemented(const detail::NoiseSpec& spec, const StepTiles& st, std::uint64_t k, double grid_bound,
                      const WarpCosts& c, BlockState& b) {
  bool drew_blocks[kBlockWarps] = {};  // the warp's race blocks of this step are drawn (own_group_race)
  TopKTally& t = b.tally;
  Slots& s = b.slots;
  std::uint32_t pending[kBlockWarps];
  double round_work[kBlockWarps];
  for (unsigned w = 0; w < kBlockWarps; ++w) {
    pending[w] = st.valid[w] ? ~0u : 0u;
    round_work[w] = c.tile;  // the scan, in the first round's path
    if (st.valid[w]) t.tiles += 1;
    t.instructions += c.tile;
  }
  t.steps += 1;
  double bound = std::max(grid_bound, b.published);
  for (;;) {
    const double threshold = std::max(bound, s.threshold);
    bool races = false;
    for (unsigned w = 0; w < kBlockWarps; ++w) {
      round_work[w] += kRound;
      t.instructions += kRound;
      for (unsigned l = 0; l < kLanes; ++l) {
        if (st.in[w].reach[l] < threshold) pending[w] &= ~(1u << l);
      }
      races = races || pending[w] != 0;
      for (unsigned r = 0; r < kRacesPerRound && pending[w] != 0; ++r) {
        const unsigned next = widest_pending(pending[w], st.in[w].reach);
        bool appended = false;
        const WarpRaceOutcome raced = replay_warp_race<G>(
            spec, st.in[w], st.tile[w], next, threshold,
            [&](unsigned, double score, std::uint64_t index) {
              if (score < threshold) return;
              s.entries.push_back({score, index});
              t.appends += 1;
              appended = true;
            },
            FollowersMeet::by_threshold_only);
        pending[w] &= ~(1u << next);
        const double race = warp_race_cost(c, !drew_blocks[w]);
        drew_blocks[w] = true;
        const double cost = race + (raced.drawing != 0 ? c.follower_draw : 0.0) + (appended ? kAppend : 0.0);
        round_work[w] += cost;
        t.instructions += cost;
        t.race_instructions += cost;
        t.race_issues += 1;
        t.race_blocks += 1;
        t.race_lanes += kLanes;
        t.draws += raced.drawing;
      }
    }
    t.rounds += 1;
    t.barriers += 1;
    if (!races) {
      t.chain += *std::max_element(round_work, round_work + kBlockWarps);
      return;
    }
    const bool keep = s.entries.size() > kCapacity - kOffersPerRound || s.entries.size() - s.sorted >= k;
    bool more = false;
    for (unsigned w = 0; w < kBlockWarps; ++w) {
      more = more || pending[w] != 0;
      round_work[w] += kRoundAfterRaces;
      t.instructions += kRoundAfterRaces;
    }
    t.barriers += 1;
    t.chain += *std::max_element(round_work, round_work + kBlockWarps);
    std::fill(round_work, round_work + kBlockWarps, 0.0);
    if (keep) {
      keep_k(s, k, t);
      // GridKthBound::publish: the block's k-th raises the bound; the block's threshold rises to it.
      if (s.threshold != -kInfinity) b.published = std::max(b.published, s.threshold);
      bound = std::max(bound, b.published);
      s.threshold = std::max(s.threshold, bound);
    }
    if (!more) return;
  }
}

template <Generator G>
void step_measured(const detail::NoiseSpec& spec, const StepTiles& st, std::uint64_t k, const RegionCosts& c,
                   BlockState& b) {
  TopKTally& t = b.tally;
  Slots& s = b.slots;
  t.steps += 1;
  for (unsigned w = 0; w < kBlockWarps; ++w) {
    if (st.valid[w]) t.tiles += 1;
  }
  for (unsigned round = 0; round < kLanes / kWindowLanes; ++round) {
    const std::uint32_t window = ((1u << kWindowLanes) - 1u) << (round * kWindowLanes);
    const double threshold = s.threshold;  // rises only at keeps, between rounds
    double busiest = 0;
    for (unsigned w = 0; w < kBlockWarps; ++w) {
      double work = kMeasuredRound + (round == 0 ? c.tile : 0.0);
      if (st.valid[w]) {
        // The lanes whose group passes race side by side: the race region once for all of them, each
        // of the window's follower-loop iterations once, and a leader offer, a follower draw or an
        // append at iteration j once if any of them makes one there.
        unsigned racing = 0;
        std::uint32_t leaders = 0;
        std::uint32_t drawing = 0;
        std::uint32_t appending = 0;
        for (unsigned l = 0; l < kLanes; ++l) {
          if (st.in[w].reach[l] < threshold) continue;
          ++racing;
          const WarpRaceOutcome raced = replay_warp_race<G>(
              spec, st.in[w], st.tile[w], l, threshold,
              [&](unsigned lane, double score, std::uint64_t index) {
                if (score < threshold) return;
                s.entries.push_back({score, index});
                t.appends += 1;
                appending |= 1u << lane;
              },
              FollowersMeet::by_threshold_only, window);
          leaders |= 1u << raced.leader_lane;
          drawing |= raced.drawn;
          t.draws += raced.drawing;
        }
        if (racing != 0) {
          const double cost = c.race + kWindowLanes * c.loop_iteration +
                              std::popcount(leaders & window) * c.leader_offer +
                              std::popcount(drawing) * c.follower_draw + std::popcount(appending) * kAppend;
          work += cost;
          t.race_instructions += cost;
          t.race_issues += 1;
          t.race_blocks += racing;
          t.race_lanes += racing;
        }
      }
      t.instructions += work;
      busiest = std::max(busiest, work);
    }
    t.rounds += 1;
    t.barriers += 2;  // end_round
    t.chain += busiest;
    if (s.entries.size() > kCapacity - kOffersPerRound) keep_k(s, k, t);
  }
}

// The exact k best of the whole range: every group whose reach clears the running k-th score,
// scored in full (score_scanned_group), widest first within a tile.
struct TopKSink {
  std::vector<Entry>* best;
  std::uint64_t k;
  double threshold() const { return best->size() < k ? -kInfinity : best->back().score; }
  void offer(double score, std::uint64_t index) {
    const Entry e{score, index};
    if (best->size() == k && !ranks_before(e, best->back())) return;
    best->insert(std::upper_bound(best->begin(), best->end(), e, ranks_before), e);
    if (best->size() > k) best->pop_back();
  }
};

template <Generator G>
std::vector<Entry> exact_top_k(const detail::NoiseSpec& spec, const Data& data, const double* bounds,
                               std::uint64_t tiles, std::uint64_t k) {
  std::vector<std::vector<Entry>> partial(static_cast<std::size_t>(omp_get_max_threads()));
#pragma omp parallel
  {
    std::vector<Entry>& mine = partial[static_cast<std::size_t>(omp_get_thread_num())];
    TopKSink sink{&mine, k};
    TileInputs in;
#pragma omp for schedule(static)
    for (std::int64_t tile = 0; tile < static_cast<std::int64_t>(tiles); ++tile) {
      load_tile<G>(spec, data, bounds, static_cast<std::uint64_t>(tile), in);
      for (unsigned l = 0; l < kLanes; ++l) {
        if (in.reach[l] < sink.threshold()) continue;
        detail::score_scanned_group<detail::GeneratorBlocks<G>>(spec, static_cast<std::uint64_t>(tile) * kLanes + l,
                                                                in.screens[l], in.bound[l], in.scan[l],
                                                                LaneValues{in.values[l]}, sink);
      }
    }
  }
  std::vector<Entry> all;
  for (const auto& p : partial) all.insert(all.end(), p.begin(), p.end());
  std::sort(all.begin(), all.end(), ranks_before);
  if (all.size() > k) all.resize(k);
  return all;
}

template <Generator G>
void run_top_k(const Options& opt, const TopKOptions& top_k, const Shape& shape) {
  const auto start = std::chrono::steady_clock::now();
  const detail::NoiseSpec spec = benchmark_spec(G, shape.epsilon, kStream);
  double bounds[detail::kScreenBoundSlots];
  fill_screen_bounds(bounds);
  const Data data{&shape, nullptr};
  const std::uint64_t tiles = (std::uint64_t{1} << opt.log2_n) / (kLanes * kLanes);
  const std::uint64_t blocks = static_cast<std::uint64_t>(kMultiprocessors) * kTopKBlocksPerSm;
  const std::uint64_t tile_step = blocks * kBlockWarps;
  const std::uint64_t steps = (tiles + tile_step - 1) / tile_step;
  const RegionCosts& lane_costs = G == Generator::chacha20 ? kChaChaCosts : kPhiloxCosts;
  const WarpCosts& warp_costs = G == Generator::chacha20 ? kChaChaWarpCosts : kPhiloxWarpCosts;
  const WarpCosts& block_per_race = G == Generator::chacha20 ? kChaChaWarpCostsBlockPerRace : kPhiloxWarpCostsBlockPerRace;
  constexpr std::size_t kSchedules = 3;
  const Schedule schedules[kSchedules] = {Schedule::measured, Schedule::warp_races, Schedule::implemented};
  const char* schedule_names[kSchedules] = {"measured", "warp-races", "implemented"};
  const std::size_t replays = top_k.ks.size() * kSchedules;
  // state[b * replays + i]: block b under replay i (k = ks[i / kSchedules], schedules[i % kSchedules]).
  // Each replay's own grid bound: grid_bound[i] (the measured kernel has none).
  std::vector<BlockState> state(blocks * replays);
  std::vector<double> grid_bound(replays, -kInfinity);
  for (std::uint64_t step = 0; step < steps; ++step) {
#pragma omp parallel
    {
      StepTiles st;
#pragma omp for schedule(dynamic, 4)
      for (std::int64_t bi = 0; bi < static_cast<std::int64_t>(blocks); ++bi) {
        const std::uint64_t b = static_cast<std::uint64_t>(bi);
        for (unsigned w = 0; w < kBlockWarps; ++w) {
          st.tile[w] = b * kBlockWarps + w + step * tile_step;
          st.valid[w] = st.tile[w] < tiles;
          if (st.valid[w]) load_tile<G>(spec, data, bounds, st.tile[w], st.in[w]);
        }
        for (std::size_t i = 0; i < replays; ++i) {
          const std::uint64_t k = top_k.ks[i / kSchedules];
          BlockState& bs = state[b * replays + i];
          const Schedule schedule = schedules[i % kSchedules];
          if (schedule == Schedule::measured) {
            step_measured<G>(spec, st, k, lane_costs, bs);
          } else {
            step_implemented<G>(spec, st, k, grid_bound[i], schedule == Schedule::implemented ? warp_costs : block_per_race,
                                bs);
          }
        }
      }
    }
    for (std::size_t i = 0; i < replays; ++i) {
      for (std::uint64_t b = 0; b < blocks; ++b) grid_bound[i] = std::max(grid_bound[i], state[b * replays + i].published);
    }
  }
  const char* gen = G == Generator::chacha20 ? "chacha20" : "philox";
  const double e = (G == Generator::chacha20 ? kChaChaMeasured : kPhiloxMeasured).ipc_active / 4.0;
  const double read_ms = kReadMs * static_cast<double>(tiles) / kBenchmarkTiles;
  const double em_ms = (G == Generator::chacha20 ? kEmPassMs : kEmPassPhiloxMs) * static_cast<double>(tiles) /
                       kBenchmarkTiles;
  double calibration = 0;
  for (std::size_t i = 0; i < replays; ++i) {
    const std::uint64_t k = top_k.ks[i / kSchedules];
    const Schedule schedule = schedules[i % kSchedules];
    TopKTally total;
    std::vector<double> sm(kMultiprocessors, 0.0);
    double chain = 0;
    std::vector<Entry> merged;
    for (std::uint64_t b = 0; b < blocks; ++b) {
      BlockState& bs = state[b * replays + i];
      keep_k(bs.slots, k, bs.tally);  // the kernel's last keep, before the block writes its list
      total.add(bs.tally);
      sm[b % kMultiprocessors] += bs.tally.instructions;
      chain = std::max(chain, bs.tally.chain);
      merged.insert(merged.end(), bs.slots.entries.begin(), bs.slots.entries.end());
    }
    std::sort(merged.begin(), merged.end(), ranks_before);
    if (merged.size() > k) merged.resize(k);
    if (opt.check) {
      const std::vector<Entry> exact = exact_top_k<G>(spec, data, bounds, tiles, k);
      bool same = exact.size() == merged.size();
      for (std::size_t j = 0; same && j < exact.size(); ++j) {
        same = exact[j].index == merged[j].index && exact[j].score == merged[j].score;
      }
      if (!same) {
        std::fprintf(stderr, "check failed: %s k = %llu %s: the replay's k best differ from the exact pass's\n",
                     gen, static_cast<unsigned long long>(k), schedule_names[i % kSchedules]);
        std::exit(1);
      }
    }
    const double busiest = *std::max_element(sm.begin(), sm.end());
    const double issue_ms = busiest / (4.0 * e * kClockHz) * 1e3;
    const double chain_ms = chain * kWarpCyclesPerInstruction / kClockHz * 1e3;
    const double time_ms = std::max({read_ms, issue_ms, chain_ms});
    double measured_ms = 0;
    if (G == Generator::chacha20 && schedule == Schedule::measured && opt.log2_n == 30 && shape.epsilon == 1.0) {
      for (const TopKMeasured& m : kTopKMeasured) measured_ms = m.k == k ? m.ms : measured_ms;
    }
    const double per_tile = static_cast<double>(tiles);
    // The measured schedule's row comes first for each k: its error calibrates the others'
    // (time x measured / modelled, at least the read: "cal", and its ratio to the EM pass).
    char measured[128] = "-";
    if (measured_ms != 0) {
      calibration = measured_ms / time_ms;
      std::snprintf(measured, sizeof measured, "%.2f (model %+.0f %%)", measured_ms, (time_ms / measured_ms - 1) * 100);
    } else if (schedule != Schedule::measured && calibration != 0) {
      const double calibrated_ms = std::max(read_ms, time_ms * calibration);
      std::snprintf(measured, sizeof measured, "cal %.2f ms = %.2f x_em", calibrated_ms, calibrated_ms / em_ms);
    }
    double h200_ms = 0;
    if (G == Generator::chacha20 && schedule == Schedule::implemented && opt.log2_n == 30 && shape.epsilon == 1.0) {
      for (const TopKMeasured& m : kTopKMeasuredH200) h200_ms = m.k == k ? m.ms : h200_ms;
    }
    if (h200_ms != 0) {
      const double h200_time_ms =
          std::max({kReadH200Ms * static_cast<double>(tiles) / kBenchmarkTiles, issue_ms, chain_ms});
      const std::size_t used = std::strlen(measured);
      std::snprintf(measured + used, sizeof measured - used, "; H200 %.2f (model %.2f, %+.0f %%)", h200_ms,
                    h200_time_ms, (h200_time_ms / h200_ms - 1) * 100);
    }
    if (schedule == Schedule::measured && measured_ms == 0) calibration = 0;
    std::printf("%-11s %-8s %-13s %5llu %7.3f %7.3f %6.2f %7.3f %7.2f %6.3f %6.2f %8.0f %7.0f %7.0f %8.3f %8.3f %8.3f %6.2f %6.2f %s\n",
                schedule_names[i % kSchedules], gen, shape.name.c_str(), static_cast<unsigned long long>(k),
                total.race_issues / per_tile, total.race_blocks / per_tile,
                total.race_issues != 0 ? total.race_lanes / total.race_issues : 0.0, total.draws / per_tile,
                total.appends / per_tile, total.barriers / total.steps,
                total.keeps / static_cast<double>(blocks), total.instructions / per_tile,
                total.race_instructions / per_tile, total.keep_instructions / per_tile, issue_ms, chain_ms, time_ms,
                time_ms / read_ms, time_ms / em_ms, measured);
  }
  std::printf("#   %s %s: every block of %llu replayed over %llu steps, %.1f s\n", gen, shape.name.c_str(),
              static_cast<unsigned long long>(blocks), static_cast<unsigned long long>(steps),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace

void run_top_k_kernel(const Options& opt, const TopKOptions& top_k, const std::vector<Shape>& shapes) {
  std::printf("# schedule model, top-k kernel: n = 2^%d candidates, k = ", opt.log2_n);
  for (std::size_t i = 0; i < top_k.ks.size(); ++i) {
    std::printf("%s%llu", i != 0 ? ", " : "", static_cast<unsigned long long>(top_k.ks[i]));
  }
  std::printf(", %d threads\n", omp_get_max_threads());
  std::printf("# estimated costs (warp instructions): round %.0f (measured) / %.0f + %.0f after races (implemented), "
              "append %.0f, sort pair issue %.0f, stage %.0f, merge step %.0f, rank %.0f, keep %.0f; "
              "%.2f cycles per warp instruction on a block's path\n",
              kMeasuredRound, kRound, kRoundAfterRaces, kAppend, kSortPair, kSortStage, kMergeSplitStep, kMergeRank,
              kKeepFixed, kWarpCyclesPerInstruction);
  std::printf("# measured (H100, gpu.txt, ChaCha20): top-k 2^30 k = 1: 18.24 ms, 16: 13.32, 128: 17.28, 1024: 22.29; "
              "one EM pass %.3f ms (Philox %.3f); one read %.3f ms\n",
              kEmPassMs, kEmPassPhiloxMs, kReadMs);
  std::printf("# measured (H200, 2026-12-04, ChaCha20, the implemented kernel): top-k 2^30 k = 16: 4.14 ms, 1024: "
              "17.05; one read %.3f ms\n",
              kReadH200Ms);
  std::printf("# columns: races/t warp-level race issues per tile; rblk/t race blocks drawn per tile; lanes_r active\n"
              "# lanes per race issue; draws/t follower blocks; app/t entries appended; bar/s block barriers per\n"
              "# tile step of a block (8 tiles; outside keeps); keeps per block; winst/t warp instructions per tile, of which wi_race in\n"
              "# races and wi_keep in keeps; issue_ms (busiest SM at the measured issue rate), chain_ms (a\n"
              "# block's barrier-bound path), time_ms the largest of those and the read; x_read, x_em = time /\n"
              "# one EM pass of the same array (measured, same generator); measured: the H100's time (the model's\n"
              "# error), and below it each schedule calibrated by that error; H200: the implemented kernel's time\n"
              "# against the uncalibrated model's at the H200's read\n");
  std::printf("%-11s %-8s %-13s %5s %7s %7s %6s %7s %7s %6s %6s %8s %7s %7s %8s %8s %8s %6s %6s %s\n", "schedule",
              "gen", "shape", "k", "races/t", "rblk/t", "lanes_r", "draws/t", "app/t", "bar/s", "keeps", "winst/t",
              "wi_race", "wi_keep", "issue_ms", "chain_ms", "time_ms", "x_read", "x_em", "measured");
  for (const Generator g : opt.generators) {
    for (const Shape& shape : shapes) {
      if (g == Generator::chacha20) {
        run_top_k<Generator::chacha20>(opt, top_k, shape);
      } else {
        run_top_k<Generator::philox>(opt, top_k, shape);
      }
    }
  }
}

}  // namespace schedule_model
