// SPDX-License-Identifier: Apache-2.0
// dpselect::mpi: pricing with the prices split across the ranks (bids replicated), the
// batched sparse vector with the query stream split into blocks, and shards in device memory.
// Each equals one process over the whole input with the same key and stream, bit for bit; a bad
// value on one rank fails every rank alike before any charge or stream.
#include <mpi.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#if DPSELECT_MPI_TEST_CUDA
#include <cuda_runtime.h>
#endif

#include "dpselect/dpselect.hpp"
#include "dpselect/mpi.hpp"
#include "mpi_test_support.hpp"

namespace {

using namespace dpselect_mpi_test;
using dpselect::BidderNeighbours;
using dpselect::Bids;
using dpselect::GridSampler;
using dpselect::PriceGrid;
using dpselect::PriceRange;
using dpselect::PriceSelection;
using dpselect::PricingParams;

// Public, data-free bids: a spread of values with repeats (equal bids make empty intervals).
std::vector<double> raw_bids(std::size_t n) {
  std::vector<double> bids(n);
  for (std::size_t i = 0; i < n; ++i) bids[i] = static_cast<double>((i * 7919) % 400) / 4.0;
  return bids;
}

void expect_same_price(const PriceSelection& distributed, const PriceSelection& single) {
  EXPECT_EQ(distributed.price, single.price);
  EXPECT_EQ(distributed.candidate, single.candidate);
  EXPECT_EQ(distributed.sampler, single.sampler);
  EXPECT_EQ(distributed.sampler_depends_on_data, single.sampler_depends_on_data);
  expect_same(Selection{distributed.candidate, distributed.report}, Selection{single.candidate, single.report});
  expect_same_on_every_rank(Selection{distributed.candidate, distributed.report});
}

PricingParams pricing(dpselect::Mechanism mechanism, BidderNeighbours neighbours, GridSampler sampler) {
  PricingParams p;
  p.epsilon = 0.5;
  p.mechanism = mechanism;
  p.neighbours = neighbours;
  p.backend = dpselect::Backend::Cpu;
  p.grid_sampler = sampler;
  return p;
}

TEST(DistributedPricing, GridShardsEqualOneProcessForEveryMechanism) {
  dmpi::DistributedContext distributed = dmpi::DistributedContext::with_fixed_seed(MPI_COMM_WORLD, kSeed);
  dpselect::Context single = dpselect::Context::with_fixed_seed(kSeed);
  const Bids bids(raw_bids(300));
  const PriceGrid grid{0.5, 100.0, 0.125};
  const IndexRange mine = shard_of(0, grid.size(), world_rank(), world_size());
  for (dpselect::Mechanism mechanism : kMechanisms) {
    for (BidderNeighbours neighbours : {BidderNeighbours::add_or_remove_bidder, BidderNeighbours::change_one_bid}) {
      const PricingParams p = pricing(mechanism, neighbours, GridSampler::per_price_noise);
      expect_same_price(dmpi::select_price(distributed, bids, grid, mine, p),
                        dpselect::select_price(single, bids, grid, p));
    }
  }
}

TEST(DistributedPricing, BidIntervalsSplitOverRanksEqualOneProcess) {
  dmpi::DistributedContext distributed = dmpi::DistributedContext::with_fixed_seed(MPI_COMM_WORLD, kSeed);
  dpselect::Context single = dpselect::Context::with_fixed_seed(kSeed);
  const Bids bids(raw_bids(1001));
  // 10^10 prices (beyond 2^32): automatic picks bid intervals (and so does the explicit choice).
  const PriceGrid grid{0.0001, 1e6, 0.0001};
  ASSERT_GT(grid.size(), std::uint64_t{1} << 32);
  const IndexRange mine = shard_of(0, grid.size(), world_rank(), world_size());
  for (GridSampler sampler : {GridSampler::bid_intervals, GridSampler::automatic}) {
    for (std::uint64_t max_bidders : {std::uint64_t{0}, std::uint64_t{5000}}) {
      PricingParams p = pricing(dpselect::Mechanism::exponential, BidderNeighbours::add_or_remove_bidder, sampler);
      p.max_bidders = max_bidders;
      const PriceSelection d = dmpi::select_price(distributed, bids, grid, mine, p);
      EXPECT_EQ(d.sampler, GridSampler::bid_intervals);
      expect_same_price(d, dpselect::select_price(single, bids, grid, p));
    }
  }
  // The continuous range: the same sampler, no shard to pass.
  const PriceRange range{1.0, 150.0};
  const PricingParams p =
      pricing(dpselect::Mechanism::exponential, BidderNeighbours::change_one_bid, GridSampler::automatic);
  expect_same_price(dmpi::select_price(distributed, bids, range, p), dpselect::select_price(single, bids, range, p));
}

TEST(DistributedPricing, PriceListShardsEqualOneProcess) {
  dmpi::DistributedContext distributed = dmpi::DistributedContext::with_fixed_seed(MPI_COMM_WORLD, kSeed);
  dpselect::Context single = dpselect::Context::with_fixed_seed(kSeed);
  const Bids bids(raw_bids(500));
  std::vector<double> prices(777);
  for (std::size_t i = 0; i < prices.size(); ++i) prices[i] = static_cast<double>((i * 31) % 1000) / 10.0;
  const IndexRange mine = shard_of(0, prices.size(), world_rank(), world_size());
  for (dpselect::Mechanism mechanism : kMechanisms) {
    const PricingParams p = pricing(mechanism, BidderNeighbours::add_or_remove_bidder, GridSampler::per_price_noise);
    expect_same_price(dmpi::select_price(distributed, bids, std::span(prices).subspan(mine.begin, mine.size()),
                                         mine.begin, p),
                      dpselect::select_price(single, bids, std::span<const double>(prices), p));
  }
}

TEST(DistributedPricingErrors, DifferentBidsOnOneRankFailEveryRankBeforeCharge) {
  if (world_size() == 1) GTEST_SKIP() << "needs two ranks";
  Ledger ledger;
  std::vector<double> raw = raw_bids(100);
  if (world_rank() == bad_rank()) raw[7] += 1.0;
  const Bids bids(raw);
  const PriceGrid grid{1.0, 50.0, 1.0};
  const PricingParams p =
      pricing(dpselect::Mechanism::exponential, BidderNeighbours::add_or_remove_bidder, GridSampler::per_price_noise);
  expect_same_error<dpselect::InvalidArgument>(
      [&] { dmpi::select_price(ledger.context, bids, grid, shard_of(0, grid.size(), world_rank(), world_size()), p); },
      "the bids, the prices' grid and the params must be the same on every rank (rank " +
          std::to_string(bad_rank()) + "'s differ");
  EXPECT_EQ(ledger.charged(), 0u);
  expect_next_release_on_stream_zero(ledger);
}

TEST(DistributedPricingErrors, GridShardsThatMissPricesFailEveryRankBeforeCharge) {
  Ledger ledger;
  const Bids bids(raw_bids(100));
  const PriceGrid grid{1.0, 50.0, 1.0};  // 50 prices
  const PricingParams p =
      pricing(dpselect::Mechanism::exponential, BidderNeighbours::add_or_remove_bidder, GridSampler::per_price_noise);
  // The shards tile [0, 49): the last price is on no rank.
  expect_same_error<dpselect::InvalidArgument>(
      [&] { dmpi::select_price(ledger.context, bids, grid, shard_of(0, 49, world_rank(), world_size()), p); },
      "the shards must tile grid prices [0, 50) (got [0, 49))");
  EXPECT_EQ(ledger.charged(), 0u);
  expect_next_release_on_stream_zero(ledger);
}

TEST(DistributedPricingErrors, ABadPriceOnOneRankFailsEveryRankNamingItsPlaceInTheList) {
  Ledger ledger;
  const Bids bids(raw_bids(100));
  std::vector<double> prices(60, 2.0);
  const IndexRange bad = shard_of(0, prices.size(), bad_rank(), world_size());
  const std::uint64_t bad_index = bad.begin + bad.size() / 2;
  prices[bad_index] = -1.0;
  const IndexRange mine = shard_of(0, prices.size(), world_rank(), world_size());
  const PricingParams p =
      pricing(dpselect::Mechanism::exponential, BidderNeighbours::add_or_remove_bidder, GridSampler::per_price_noise);
  expect_same_error<dpselect::InvalidArgument>(
      [&] {
        dmpi::select_price(ledger.context, bids, std::span(prices).subspan(mine.begin, mine.size()), mine.begin, p);
      },
      "prices[" + std::to_string(bad_index) + "] must be finite and >= 0 (got -1)");
  EXPECT_EQ(ledger.charged(), 0u);
  expect_next_release_on_stream_zero(ledger);
}

TEST(DistributedPricingErrors, BudgetRefusalFailsEveryRankAndDrawsNoStream) {
  Ledger ledger;
  const Bids bids(raw_bids(100));
  PricingParams p = pricing(dpselect::Mechanism::exponential, BidderNeighbours::add_or_remove_bidder,
                            GridSampler::bid_intervals);
  p.epsilon = 1.5;  // the ledger holds 1.0
  expect_same_error<dpselect::BudgetExceeded>(
      [&] { dmpi::select_price(ledger.context, bids, PriceRange{1.0, 100.0}, p); }, "");
  EXPECT_EQ(ledger.charged(), 0u);
  expect_next_release_on_stream_zero(ledger);
}

// --- The batched sparse vector over blocks of the query stream ----------------------------------

// Query answers that wander around the threshold 50, so that "above" answers come now and then.
std::vector<double> query_answers(std::size_t n) {
  std::vector<double> values(n);
  for (std::size_t i = 0; i < n; ++i) {
    values[i] = 40.0 + static_cast<double>((i * 2654435761u) % 1000) / 100.0 + (i % 5000 == 4999 ? 30.0 : 0.0);
  }
  return values;
}

void expect_same_batch(const dpselect::SparseVectorBatch& distributed, const dpselect::SparseVectorBatch& single) {
  ASSERT_EQ(distributed.above.size(), single.above.size());
  for (std::size_t i = 0; i < single.above.size(); ++i) {
    EXPECT_EQ(distributed.above[i].index, single.above[i].index);
    EXPECT_EQ(distributed.above[i].value, single.above[i].value);
  }
  EXPECT_EQ(distributed.report.queries, single.report.queries);
  EXPECT_EQ(distributed.report.positives, single.report.positives);
  EXPECT_EQ(distributed.report.halted, single.report.halted);
  EXPECT_EQ(distributed.report.stream, single.report.stream);
  EXPECT_EQ(distributed.report.slack.epsilon, single.report.slack.epsilon);
  EXPECT_EQ(distributed.report.slack.delta, single.report.slack.delta);
  // Every rank holds the same answers: compare the count and the last index with rank 0's.
  std::uint64_t mine[2] = {distributed.above.size(), distributed.report.queries};
  std::uint64_t root[2] = {mine[0], mine[1]};
  MPI_Bcast(root, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  EXPECT_EQ(mine[0], root[0]);
  EXPECT_EQ(mine[1], root[1]);
}

dpselect::SparseVectorParams svt(std::uint64_t positives, bool numeric, dpselect::SparseVectorAlgorithm algorithm) {
  dpselect::SparseVectorParams p;
  p.epsilon = 2.0;
  p.sensitivity = 1.0;
  p.threshold = 50.0;
  p.max_positives = positives;
  p.numeric = numeric;
  p.algorithm = algorithm;
  return p;
}

TEST(DistributedSparseVector, BlocksOfTheStreamEqualOneProcess) {
  dmpi::DistributedContext distributed = dmpi::DistributedContext::with_fixed_seed(MPI_COMM_WORLD, kSeed);
  dpselect::Context single = dpselect::Context::with_fixed_seed(kSeed);
  const std::vector<double> values = query_answers(200000);
  const IndexRange mine = shard_of(0, values.size(), world_rank(), world_size());
  const std::span<const double> block = std::span(values).subspan(mine.begin, mine.size());
  using dpselect::SparseVectorAlgorithm;
  // AboveThreshold, Sparse, NumericSparse, Lyu-Su-Li (monotone), and a run that never halts.
  std::vector<dpselect::SparseVectorParams> runs = {svt(1, false, SparseVectorAlgorithm::dwork_roth),
                                                    svt(12, false, SparseVectorAlgorithm::dwork_roth),
                                                    svt(7, true, SparseVectorAlgorithm::dwork_roth),
                                                    svt(9, false, SparseVectorAlgorithm::lyu_su_li),
                                                    svt(1000, false, SparseVectorAlgorithm::dwork_roth)};
  runs[3].monotone = true;
  runs[4].threshold = 1000.0;
  for (const dpselect::SparseVectorParams& p : runs) {
    SCOPED_TRACE("positives " + std::to_string(p.max_positives));
    expect_same_batch(dmpi::sparse_vector_batch(distributed, block, mine.begin, p),
                      dpselect::sparse_vector_batch(single, std::span<const double>(values), p));
  }
}

TEST(DistributedSparseVectorErrors, ANanOnOneRankFailsEveryRankBeforeChargeNamingItsPlace) {
  Ledger ledger;
  std::vector<double> values = query_answers(1000);
  const IndexRange bad = shard_of(0, values.size(), bad_rank(), world_size());
  const std::uint64_t bad_index = bad.begin + bad.size() / 3;
  values[bad_index] = std::numeric_limits<double>::quiet_NaN();
  const IndexRange mine = shard_of(0, values.size(), world_rank(), world_size());
  const dpselect::SparseVectorParams p = svt(1, false, dpselect::SparseVectorAlgorithm::dwork_roth);
  expect_same_error<dpselect::InvalidArgument>(
      [&] { dmpi::sparse_vector_batch(ledger.context, std::span(values).subspan(mine.begin, mine.size()), mine.begin, p); },
      "query value " + std::to_string(bad_index));
  EXPECT_EQ(ledger.charged(), 0u);
  expect_next_release_on_stream_zero(ledger);
}

TEST(DistributedSparseVectorErrors, DifferentParamsOrAStreamNotFromZeroFailEveryRank) {
  Ledger ledger;
  const std::vector<double> values = query_answers(100);
  const IndexRange mine = shard_of(0, values.size(), world_rank(), world_size());
  dpselect::SparseVectorParams p = svt(1, false, dpselect::SparseVectorAlgorithm::dwork_roth);
  if (world_size() > 1) {
    dpselect::SparseVectorParams other = p;
    if (world_rank() == bad_rank()) other.threshold = 51.0;
    expect_same_error<dpselect::InvalidArgument>(
        [&] { dmpi::sparse_vector_batch(ledger.context, std::span(values).subspan(mine.begin, mine.size()), mine.begin, other); },
        "params must be the same on every rank (rank " + std::to_string(bad_rank()) + "'s differ");
  }
  // Blocks that tile [5, 105): positions 0..4 of the stream are on no rank.
  expect_same_error<dpselect::InvalidArgument>(
      [&] { dmpi::sparse_vector_batch(ledger.context, std::span(values).subspan(mine.begin, mine.size()), mine.begin + 5, p); },
      "the shards must tile the query answers from position 0 (got [5, 105))");
  EXPECT_EQ(ledger.charged(), 0u);
  expect_next_release_on_stream_zero(ledger);
}

// --- Shards in device memory --------------------------------------------------------------------

TEST(DistributedSelectGpu, DeviceShardsEqualOneProcess) {
  // The device first (local_device creates no context), then the question whether it is usable.
  const int device = dmpi::local_device(MPI_COMM_WORLD);
#if DPSELECT_MPI_TEST_CUDA
  if (device >= 0) ASSERT_EQ(cudaSetDevice(device), cudaSuccess);
#endif
  if (device < 0 || !dpselect::gpu_usable()) GTEST_SKIP() << "no usable GPU on this rank";
#if DPSELECT_MPI_TEST_CUDA
  dmpi::DistributedContext distributed = dmpi::DistributedContext::with_fixed_seed(MPI_COMM_WORLD, kSeed);
  dpselect::Context single = dpselect::Context::with_fixed_seed(kSeed);
  const std::vector<float> whole = utilities<float>(1000003);
  const IndexRange mine = shard_of(0, whole.size(), world_rank(), world_size());
  float* on_device = nullptr;
  ASSERT_EQ(cudaMalloc(&on_device, std::max<std::size_t>(1, mine.size()) * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(on_device, whole.data() + mine.begin, mine.size() * sizeof(float), cudaMemcpyHostToDevice),
            cudaSuccess);
  for (dpselect::Mechanism mechanism : kMechanisms) {
    SelectionParams p = params_for(mechanism, false);
    p.backend = dpselect::Backend::Gpu;
    const Selection d = dmpi::select(distributed, dpselect::DeviceSpan<const float>{on_device, mine.size()}, mine.begin,
                                     p, nullptr);
    // One process over the whole array on the CPU: the same bits (CPU = GPU).
    p.backend = dpselect::Backend::Cpu;
    const Selection s = dpselect::select(single, std::span<const float>(whole), p);
    EXPECT_EQ(d.index, s.index);
    EXPECT_EQ(d.report.stream, s.report.stream);
    expect_same_on_every_rank(d);
  }
  cudaFree(on_device);
#else
  GTEST_SKIP() << "built without the CUDA runtime";
#endif
}

TEST(DistributedSelectGpu, DeviceShardsWithoutAGpuOrWithAHostPointerFailEveryRankBeforeCharge) {
  Ledger ledger;
  const std::vector<float> whole = utilities<float>(1000);
  const IndexRange mine = shard_of(0, whole.size(), world_rank(), world_size());
  // A host pointer passed as device memory: refused before any launch (no GPU: no backend).
  const dpselect::DeviceSpan<const float> shard{whole.data() + mine.begin, mine.size()};
  const SelectionParams p = params_for(dpselect::Mechanism::exponential, false);
  SelectionParams on_gpu = p;
  on_gpu.backend = dpselect::Backend::Gpu;
  if (dpselect::gpu_usable()) {
    expect_same_error<dpselect::InvalidArgument>(
        [&] { dmpi::select(ledger.context, shard, mine.begin, on_gpu, nullptr); }, "utilities.data");
  } else {
    expect_same_error<dpselect::BackendUnavailable>(
        [&] { dmpi::select(ledger.context, shard, mine.begin, on_gpu, nullptr); }, "");
  }
  EXPECT_EQ(ledger.charged(), 0u);
  expect_next_release_on_stream_zero(ledger);
}

}  // namespace
