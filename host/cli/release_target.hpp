// SPDX-License-Identifier: Apache-2.0
// Where a command's releases run: one context in this process over the whole input, or one
// distributed context over the ranks of an MPI job (job.hpp), each rank passing its slice. The
// commands call the same functions either way and get the same answer.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "common_options.hpp"
#include "dpselect/chunked_values.hpp"
#include "dpselect/partition_selection.hpp"
#include "dpselect/pricing.hpp"
#include "dpselect/quantiles.hpp"
#include "dpselect/rows.hpp"
#include "dpselect/select.hpp"
#include "dpselect/sparse_vector.hpp"
#include "dpselect/top_k.hpp"

namespace dpselect::cli {

class ReleaseTarget {
 public:
  virtual ~ReleaseTarget() = default;
  // Utilities [first, first + size) of the whole input (first is 0 in one process).
  virtual Selection select(std::span<const float> utilities, std::uint64_t first, const SelectionParams& params) = 0;
  virtual Selection select(std::span<const double> utilities, std::uint64_t first, const SelectionParams& params) = 0;
  virtual TopKSelection top_k(std::span<const float> utilities, std::uint64_t first, const TopKParams& params) = 0;
  virtual TopKSelection top_k(std::span<const double> utilities, std::uint64_t first, const TopKParams& params) = 0;
  // Utilities read a chunk at a time (InputValues::chunked), `first` 0: this process only (a job
  // reads its slice whole). The default refuses (CliError); the local target releases them.
  virtual Selection select(const ChunkedValues<float>& utilities, std::uint64_t first, const SelectionParams& params);
  virtual Selection select(const ChunkedValues<double>& utilities, std::uint64_t first, const SelectionParams& params);
  virtual TopKSelection top_k(const ChunkedValues<float>& utilities, std::uint64_t first, const TopKParams& params);
  virtual TopKSelection top_k(const ChunkedValues<double>& utilities, std::uint64_t first, const TopKParams& params);
  // Rows [first_row, first_row + matrix.rows) of the whole matrix.
  virtual RowsSelection rows(HostMatrix<const float> matrix, std::uint64_t first_row, const SelectionParams& params) = 0;
  virtual RowsSelection rows(HostMatrix<const double> matrix, std::uint64_t first_row, const SelectionParams& params) = 0;
  // The bids and the candidate prices are whole on every rank; a job splits the prices.
  virtual PriceSelection price(const Bids& bids, const PriceGrid& grid, const PricingParams& params) = 0;
  virtual PriceSelection price(const Bids& bids, std::span<const double> prices, const PricingParams& params) = 0;
  virtual PriceSelection price(const Bids& bids, const PriceRange& range, const PricingParams& params) = 0;
  // Query answers [first, first + size) of the whole stream.
  virtual SparseVectorBatch sparse_vector(std::span<const double> answers, std::uint64_t first,
                                          const SparseVectorParams& params) = 0;
  // The data are whole in this process. Only a local target releases quantiles: the default
  // refuses (CliError), and dpselect quantile refuses a distributed job before reading anything.
  virtual QuantileRelease quantile(const QuantileData& data, double q, const QuantileParams& params);
  virtual QuantilesRelease quantiles(const QuantileData& data, std::span<const double> qs,
                                     const QuantilesParams& params);
  // This process's share of the (user, key) pairs (the whole file in one process).
  virtual PartitionSelection partitions(std::span<const std::uint64_t> users, std::span<const std::uint64_t> keys,
                                        const PartitionSelectionParams& params) = 0;
  virtual StringPartitionSelection partitions(std::span<const std::uint64_t> users,
                                              std::span<const std::string_view> keys,
                                              const PartitionSelectionParams& params) = 0;
};

// The target of one command's releases: a context keyed from options.seed (NOT PRIVATE) or from
// the OS, in this process or over the job (job.hpp).
std::unique_ptr<ReleaseTarget> make_release_target(const ReleaseOptions& options);
// In this process, whatever the job.
std::unique_ptr<ReleaseTarget> make_local_release_target(const ReleaseOptions& options);

}  // namespace dpselect::cli
