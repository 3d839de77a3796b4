// SPDX-License-Identifier: Apache-2.0
#include "release_target.hpp"

#include "cli_error.hpp"

namespace dpselect::cli {
namespace {

class LocalTarget final : public ReleaseTarget {
 public:
  explicit LocalTarget(Context context) : context_(std::move(context)) {}

  Selection select(std::span<const float> u, std::uint64_t, const SelectionParams& p) override {
    return dpselect::select(context_, u, p);
  }
  Selection select(std::span<const double> u, std::uint64_t, const SelectionParams& p) override {
    return dpselect::select(context_, u, p);
  }
  TopKSelection top_k(std::span<const float> u, std::uint64_t, const TopKParams& p) override {
    return select_top_k(context_, u, p);
  }
  TopKSelection top_k(std::span<const double> u, std::uint64_t, const TopKParams& p) override {
    return select_top_k(context_, u, p);
  }
  Selection select(const ChunkedValues<float>& u, std::uint64_t, const SelectionParams& p) override {
    return dpselect::select(context_, u, p);
  }
  Selection select(const ChunkedValues<double>& u, std::uint64_t, const SelectionParams& p) override {
    return dpselect::select(context_, u, p);
  }
  TopKSelection top_k(const ChunkedValues<float>& u, std::uint64_t, const TopKParams& p) override {
    return select_top_k(context_, u, p);
  }
  TopKSelection top_k(const ChunkedValues<double>& u, std::uint64_t, const TopKParams& p) override {
    return select_top_k(context_, u, p);
  }
  RowsSelection rows(HostMatrix<const float> m, std::uint64_t, const SelectionParams& p) override {
    return select_rows(context_, m, p);
  }
  RowsSelection rows(HostMatrix<const double> m, std::uint64_t, const SelectionParams& p) override {
    return select_rows(context_, m, p);
  }
  PriceSelection price(const Bids& bids, const PriceGrid& grid, const PricingParams& p) override {
    return select_price(context_, bids, grid, p);
  }
  PriceSelection price(const Bids& bids, std::span<const double> prices, const PricingParams& p) override {
    return select_price(context_, bids, prices, p);
  }
  PriceSelection price(const Bids& bids, const PriceRange& range, const PricingParams& p) override {
    return select_price(context_, bids, range, p);
  }
  SparseVectorBatch sparse_vector(std::span<const double> answers, std::uint64_t,
                                  const SparseVectorParams& p) override {
    return sparse_vector_batch(context_, answers, p);
  }
  QuantileRelease quantile(const QuantileData& data, double q, const QuantileParams& p) override {
    return select_quantile(context_, data, q, p);
  }
  QuantilesRelease quantiles(const QuantileData& data, std::span<const double> qs,
                             const QuantilesParams& p) override {
    return select_quantiles(context_, data, qs, p);
  }
  PartitionSelection partitions(std::span<const std::uint64_t> users, std::span<const std::uint64_t> keys,
                                const PartitionSelectionParams& p) override {
    return select_partitions(context_, users, keys, p);
  }
  StringPartitionSelection partitions(std::span<const std::uint64_t> users, std::span<const std::string_view> keys,
                                      const PartitionSelectionParams& p) override {
    return select_partitions(context_, users, keys, p);
  }

 private:
  Context context_;
};

}  // namespace

namespace {
[[noreturn]] void refuse_chunked() { throw CliError("inputs read a chunk at a time are released in one process"); }
}  // namespace

Selection ReleaseTarget::select(const ChunkedValues<float>&, std::uint64_t, const SelectionParams&) {
  refuse_chunked();
}
Selection ReleaseTarget::select(const ChunkedValues<double>&, std::uint64_t, const SelectionParams&) {
  refuse_chunked();
}
TopKSelection ReleaseTarget::top_k(const ChunkedValues<float>&, std::uint64_t, const TopKParams&) {
  refuse_chunked();
}
TopKSelection ReleaseTarget::top_k(const ChunkedValues<double>&, std::uint64_t, const TopKParams&) {
  refuse_chunked();
}

QuantileRelease ReleaseTarget::quantile(const QuantileData&, double, const QuantileParams&) {
  throw CliError("quantile releases run in one process, not distributed");
}

QuantilesRelease ReleaseTarget::quantiles(const QuantileData&, std::span<const double>, const QuantilesParams&) {
  throw CliError("quantile releases run in one process, not distributed");
}

std::unique_ptr<ReleaseTarget> make_local_release_target(const ReleaseOptions& options) {
  return std::make_unique<LocalTarget>(options.seed ? Context::with_fixed_seed(*options.seed, options.generator)
                                                    : Context::from_os_entropy(options.generator));
}

}  // namespace dpselect::cli
