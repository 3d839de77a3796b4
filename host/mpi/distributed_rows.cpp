// SPDX-License-Identifier: Apache-2.0
// dpselect::mpi: batched selection with the rows spread over the ranks (include/dpselect/mpi.hpp).
// Every rank begins every row's release, in row order, so each row gets the stream it gets in one
// process; each rank scores its own rows; the rows' results (one ShardResult each) are gathered
// on every rank, which then finishes every release alike.
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "dpselect/detail/release_access.hpp"
#include "dpselect/mpi.hpp"
#include "dpselect/rows.hpp"
#include "rows/row_passes.hpp"
#include "validation/validation.hpp"
#include "mpi/collective.hpp"

namespace dpselect::mpi {
namespace {

using dpselect::detail::ContextAccess;
using dpselect::detail::ReleaseAccess;

// This rank's block of rows: rows [first_row, first_row + rows) of one matrix, each `cols` wide,
// `row_stride` elements apart (0: every row is the same one, as select_repeated reads it).
template <class T>
struct RowBlock {
  const T* data;
  std::uint64_t rows;
  std::uint64_t cols;
  std::uint64_t row_stride;
  std::uint64_t first_row;
};

// This rank's checks of its block, in one process's words (rows.cpp); empty: none. `widest` is
// the largest width of the ranks holding rows, which every one of them must have.
template <class T>
std::string block_error(const DistributedContext& context, const RowBlock<T>& block, std::uint64_t widest) {
  std::string message;
  detail::catch_error(
      [&] {
        if (block.rows == 0) return;  // a rank may hold no rows
        if (block.data == nullptr) throw InvalidArgument("dpselect: utilities.data must not be nullptr");
        dpselect::detail::validate_candidate_count("utilities row", block.cols, 0);
        if (block.cols != widest) {
          throw InvalidArgument("dpselect: cols must be the same on every rank holding rows (rank " +
                                std::to_string(context.rank()) + " has " + std::to_string(block.cols) +
                                ", another rank " + std::to_string(widest) + ")");
        }
        if (block.rows > static_cast<std::uint64_t>(INT_MAX)) {
          throw InvalidArgument("dpselect: a rank must hold at most 2^31 - 1 rows (rank " +
                                std::to_string(context.rank()) + " has " + std::to_string(block.rows) + ")");
        }
        const std::string end_error =
            detail::shard_end_error(context, block.first_row, block.rows, "first_row", "rows");
        if (!end_error.empty()) throw InvalidArgument(end_error);
      },
      message);
  return message;
}

// This rank's rows, scored as one process scores host rows: on its cores or on its GPU.
template <class T>
std::vector<ShardResult> score_block(std::vector<Release>& releases, std::uint64_t first_release,
                                     const RowBlock<T>& block) {
  if (block.rows == 0) return {};
  const std::span<Release> mine = std::span(releases).subspan(first_release, block.rows);
  if (ReleaseAccess::resolved_backend(mine.front()) == Backend::Gpu) {
    return dpselect::detail::score_rows_on_gpu(mine, block.data, block.cols, block.row_stride, false, nullptr);
  }
  return dpselect::detail::score_rows_on_cpu(mine, block.data, block.cols, block.row_stride);
}

template <class T>
RowsSelection rows_over_ranks(DistributedContext& context, const RowBlock<T>& block, const SelectionParams& params,
                              std::string local_error) {
  DistributedContext::State& s = detail::Access::state(context);
  // The ranks holding rows agree on their width: the largest, and every one must have it.
  std::uint64_t widest = block.rows == 0 ? 0 : block.cols;
  MPI_Allreduce(MPI_IN_PLACE, &widest, 1, MPI_UINT64_T, MPI_MAX, s.comm);
  if (local_error.empty()) local_error = block_error(context, block, widest);
  const IndexRange shard =
      local_error.empty() ? IndexRange{block.first_row, block.first_row + block.rows} : IndexRange{};
  // One release per row, charged together (rows.hpp): the rows' count is known once gathered.
  const detail::ChargeRule rule{PrivacyCharge{release_kind(params.mechanism), params.epsilon, 0.0, 0}, true};
  detail::ShardRules rules;
  rules.unit = "rows";
  rules.max_total = INT_MAX;
  const detail::AgreedShards agreed = detail::agree_and_charge(
      context, &params, shard, detail::invalid_unless_empty(std::move(local_error)), rule, rules);

  // Every rank begins every row's release in row order: the streams one process draws.
  std::vector<Release> releases;
  releases.reserve(agreed.total);
  for (std::uint64_t r = 0; r < agreed.total; ++r) {
    releases.push_back(ContextAccess::begin_charged_release(s.local, params));
  }
  const std::uint64_t first_release = block.rows == 0 ? 0 : block.first_row - agreed.begin;
  const std::vector<ShardResult> mine =
      detail::agreed_pass(context, [&] { return score_block(releases, first_release, block); });

  // Every row's result on every rank, at its place in row order.
  const int placement[2] = {static_cast<int>(block.rows), static_cast<int>(first_release)};
  std::vector<int> placements(2 * static_cast<std::size_t>(s.size));
  MPI_Allgather(placement, 2, MPI_INT, placements.data(), 2, MPI_INT, s.comm);
  std::vector<int> counts(static_cast<std::size_t>(s.size));
  std::vector<int> displacements(static_cast<std::size_t>(s.size));
  for (std::size_t r = 0; r < counts.size(); ++r) {
    counts[r] = placements[2 * r];
    displacements[r] = placements[2 * r + 1];
  }
  std::vector<ShardResult> all(agreed.total);
  MPI_Allgatherv(mine.data(), placement[0], s.shard_type, all.data(), counts.data(), displacements.data(),
                 s.shard_type, s.comm);

  // Each row's result must hold its whole row exactly once (the shared-key finish() checks less).
  const std::uint64_t cols = widest;
  const std::uint64_t row_coverage = dpselect::detail::coverage_fingerprint(IndexRange{0, cols});
  RowsSelection selection;
  selection.selections.reserve(agreed.total);
  for (std::uint64_t r = 0; r < agreed.total; ++r) {
    if (all[r].candidates != cols || all[r].coverage != row_coverage) {
      throw UsageError("dpselect: row " + std::to_string(agreed.begin + r) + "'s result covers " +
                       std::to_string(all[r].candidates) + " of its " + std::to_string(cols) +
                       " candidates; every row must be scored exactly once");
    }
    try {
      selection.selections.push_back(releases[r].finish(all[r]));
    } catch (const InvalidArgument& error) {  // finish() names the column; add the row, as rows.cpp does
      throw InvalidArgument(std::string(error.what()) + " in row " + std::to_string(agreed.begin + r));
    }
  }
  return selection;
}

template <class T>
RowsSelection rows_host(DistributedContext& context, HostMatrix<const T> block, std::uint64_t first_row,
                        const SelectionParams& params) {
  return rows_over_ranks(context, RowBlock<T>{block.data, block.rows, block.cols, block.cols, first_row}, params, {});
}

template <class T>
RowsSelection repeated_host(DistributedContext& context, std::span<const T> row, const SelectionParams& params,
                            std::uint64_t releases) {
  DistributedContext::State& s = detail::Access::state(context);
  struct Shape {
    std::uint64_t releases;
    std::uint64_t cols;
    std::uint64_t digest;
  };
  const Shape mine{releases, row.size(), row.data() == nullptr ? 0 : detail::bytes_digest(row.data(), row.size_bytes())};
  Shape root = mine;
  MPI_Bcast(&root, static_cast<int>(sizeof root), MPI_BYTE, 0, s.comm);
  std::string local_error;
  if (releases == 0) {
    local_error = "dpselect: releases must be at least 1 (got 0)";
  } else if (row.empty()) {
    local_error = "dpselect: utilities must not be empty";
  } else if (releases != root.releases) {
    local_error = "dpselect: releases must be the same on every rank (rank " + std::to_string(s.rank) + " has " +
                  std::to_string(releases) + ", rank 0 " + std::to_string(root.releases) + ")";
  } else if (row.size() != root.cols || mine.digest != root.digest) {
    local_error = "dpselect: utilities must be the same row on every rank (rank " + std::to_string(s.rank) +
                  "'s differs from rank 0's)";
  }
  // The releases in even contiguous blocks, rank by rank.
  const IndexRange share = local_error.empty() ? detail::even_share(releases, s.rank, s.size) : IndexRange{};
  const std::uint64_t first = share.begin;
  const std::uint64_t count = share.size();
  return rows_over_ranks(context, RowBlock<T>{row.data(), count, row.size(), 0, first}, params, std::move(local_error));
}

}  // namespace

RowsSelection select_rows(DistributedContext& context, HostMatrix<const float> block, std::uint64_t first_row,
                          const SelectionParams& params) {
  return rows_host(context, block, first_row, params);
}
RowsSelection select_rows(DistributedContext& context, HostMatrix<const double> block, std::uint64_t first_row,
                          const SelectionParams& params) {
  return rows_host(context, block, first_row, params);
}
RowsSelection select_repeated(DistributedContext& context, std::span<const float> row, const SelectionParams& params,
                              std::uint64_t releases) {
  return repeated_host(context, row, params, releases);
}
RowsSelection select_repeated(DistributedContext& context, std::span<const double> row, const SelectionParams& params,
                              std::uint64_t releases) {
  return repeated_host(context, row, params, releases);
}

}  // namespace dpselect::mpi
