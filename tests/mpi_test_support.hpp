// SPDX-License-Identifier: Apache-2.0
// What the dpselect::mpi tests share (tests/mpi_*.cpp): the ranks, uneven shards, data-free
// utilities, comparisons of a distributed result with one process's, and a ledger on rank 0.
#pragma once

#include <mpi.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "dpselect/dpselect.hpp"
#include "dpselect/mpi.hpp"
#include "dpselect/select_functor.hpp"

namespace dpselect_mpi_test {

using dpselect::IndexRange;
using dpselect::Selection;
using dpselect::SelectionParams;
namespace dmpi = dpselect::mpi;

inline constexpr std::uint64_t kSeed = 0x5eed17;

inline int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}
inline int world_size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}
// The rank that gets the bad value: rank 2 of 4 (or 3), the last rank when fewer.
inline int bad_rank() { return world_size() > 2 ? 2 : world_size() - 1; }

// Uneven cuts of [begin, begin + n): rank r's share grows as (r + 1)^2, and rank 1 is empty when
// there are 3 ranks or more.
inline IndexRange shard_of(std::uint64_t begin, std::uint64_t n, int rank, int size) {
  std::vector<std::uint64_t> weight(static_cast<std::size_t>(size));
  std::uint64_t total = 0;
  for (int r = 0; r < size; ++r) {
    weight[r] = (size >= 3 && r == 1) ? 0 : static_cast<std::uint64_t>((r + 1) * (r + 1));
    total += weight[r];
  }
  std::uint64_t first = begin;
  std::uint64_t cumulative = 0;
  for (int r = 0; r <= rank; ++r) {
    const std::uint64_t start = begin + n * cumulative / total;
    cumulative += weight[r];
    const std::uint64_t stop = begin + n * cumulative / total;
    if (r == rank) return IndexRange{start, stop};
    first = stop;
  }
  return IndexRange{first, first};
}

inline void expect_same(const Selection& distributed, const Selection& single) {
  EXPECT_EQ(distributed.index, single.index);
  const dpselect::SelectionReport& a = distributed.report;
  const dpselect::SelectionReport& b = single.report;
  EXPECT_EQ(a.mechanism, b.mechanism);
  EXPECT_EQ(a.epsilon_spent, b.epsilon_spent);
  EXPECT_EQ(a.sensitivity, b.sensitivity);
  EXPECT_EQ(a.monotone, b.monotone);
  EXPECT_EQ(a.noise_scale, b.noise_scale);
  EXPECT_EQ(a.executed_on, b.executed_on);
  EXPECT_EQ(a.candidates, b.candidates);
  EXPECT_EQ(a.slack.epsilon, b.slack.epsilon);
  EXPECT_EQ(a.slack.delta, b.slack.delta);
  EXPECT_EQ(a.slack.depends_on_data, b.slack.depends_on_data);
  EXPECT_EQ(a.stream, b.stream);
  EXPECT_EQ(a.generator, b.generator);
}

// Every rank must hold the same index: compare with rank 0's.
inline void expect_same_on_every_rank(const Selection& s) {
  std::uint64_t mine[2] = {s.index, s.report.stream};
  std::uint64_t low[2];
  std::uint64_t high[2];
  MPI_Allreduce(mine, low, 2, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(mine, high, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(low[0], high[0]);
  EXPECT_EQ(low[1], high[1]);
}

// Public, data-free utilities with many near ties, so the noise decides.
template <class T>
std::vector<T> utilities(std::uint64_t n) {
  std::vector<T> u(n);
  for (std::uint64_t i = 0; i < n; ++i) u[i] = static_cast<T>((i * 2654435761u) % 97) / T(8);
  return u;
}

struct Hashed {
  double operator()(std::uint64_t i) const {
    std::uint64_t z = i * 0x9e3779b97f4a7c15ULL;
    z ^= z >> 29;
    return static_cast<double>(z % 1000) / 100.0;
  }
};

inline SelectionParams params_for(dpselect::Mechanism mechanism, bool monotone) {
  SelectionParams p;
  p.mechanism = mechanism;
  p.epsilon = 0.75;
  p.sensitivity = 1.0;
  p.monotone = monotone;
  p.backend = dpselect::Backend::Cpu;
  return p;
}

inline const dpselect::Mechanism kMechanisms[] = {dpselect::Mechanism::exponential, dpselect::Mechanism::permute_and_flip,
                                           dpselect::Mechanism::laplace_noisy_max};

// Runs `call` on every rank and checks that every rank threw E with the same message, which
// contains `part`.
template <class E, class Call>
void expect_same_error(Call&& call, const std::string& part) {
  std::string message;
  try {
    call();
    ADD_FAILURE() << "no exception";
  } catch (const E& e) {
    message = e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "another exception: " << e.what();
  }
  EXPECT_NE(message.find(part), std::string::npos) << message;
  // Rank 0's message, compared on every rank.
  std::uint64_t length = message.size();
  MPI_Bcast(&length, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  std::string root(length, '\0');
  if (world_rank() == 0) root = message;
  MPI_Bcast(root.data(), static_cast<int>(length), MPI_CHAR, 0, MPI_COMM_WORLD);
  EXPECT_EQ(message, root);
}

struct Ledger {
  dmpi::DistributedContext context = dmpi::DistributedContext::with_fixed_seed(MPI_COMM_WORLD, kSeed);
  std::shared_ptr<dpselect::PrivacyAccountant> accountant =
      std::make_shared<dpselect::PrivacyAccountant>(dpselect::PrivacyBound{1.0, 0.0});
  Ledger() { context.charge_to(accountant); }
  // Rank 0's count of charged releases, on every rank.
  std::uint64_t charged() {
    std::uint64_t count = world_rank() == 0 ? accountant->release_count() : 0;
    MPI_Bcast(&count, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    return count;
  }
};

// After a refused release, the next good one must use stream 0: the refusal drew none.
inline void expect_next_release_on_stream_zero(Ledger& ledger) {
  const std::vector<float> whole = utilities<float>(100);
  const IndexRange mine = shard_of(0, whole.size(), world_rank(), world_size());
  SelectionParams p = params_for(dpselect::Mechanism::exponential, false);
  p.epsilon = 0.25;
  const Selection d = dmpi::select(ledger.context, std::span<const float>(whole.data() + mine.begin, mine.size()),
                                   mine.begin, p);
  dpselect::Context single = dpselect::Context::with_fixed_seed(kSeed);
  expect_same(d, dpselect::select(single, std::span<const float>(whole), p));
  EXPECT_EQ(d.report.stream, 0u);
  EXPECT_EQ(ledger.charged(), 1u);
}

}  // namespace dpselect_mpi_test
