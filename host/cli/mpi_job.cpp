// SPDX-License-Identifier: Apache-2.0
// job.hpp in a build with dpselect::mpi: distributed when an MPI launcher started the command.
#include <mpi.h>

#include <cstdio>
#include <string>

#include "cli_error.hpp"
#include "dpselect/mpi.hpp"
#include "input_reading.hpp"
#include "job.hpp"
#include "job_launcher.hpp"
#include "release_target.hpp"

namespace dpselect::cli {
namespace {

JobPlace place;

// The releases over the job: every rank passes its slice to the collective entry points.
class DistributedTarget final : public ReleaseTarget {
 public:
  explicit DistributedTarget(mpi::DistributedContext context) : context_(std::move(context)) {}

  Selection select(std::span<const float> u, std::uint64_t first, const SelectionParams& p) override {
    return mpi::select(context_, u, first, p);
  }
  Selection select(std::span<const double> u, std::uint64_t first, const SelectionParams& p) override {
    return mpi::select(context_, u, first, p);
  }
  TopKSelection top_k(std::span<const float> u, std::uint64_t first, const TopKParams& p) override {
    return mpi::select_top_k(context_, u, first, p);
  }
  TopKSelection top_k(std::span<const double> u, std::uint64_t first, const TopKParams& p) override {
    return mpi::select_top_k(context_, u, first, p);
  }
  RowsSelection rows(HostMatrix<const float> m, std::uint64_t first_row, const SelectionParams& p) override {
    return mpi::select_rows(context_, m, first_row, p);
  }
  RowsSelection rows(HostMatrix<const double> m, std::uint64_t first_row, const SelectionParams& p) override {
    return mpi::select_rows(context_, m, first_row, p);
  }
  // The grid and the list are whole on every rank: each scores its even share.
  PriceSelection price(const Bids& bids, const PriceGrid& grid, const PricingParams& p) override {
    std::uint64_t size = 0;
    try {
      grid.validate();
      size = grid.size();
    } catch (const InvalidArgument&) {  // the collective call below reports it on every rank
    }
    const ElementRange share = slice_elements(InputSlice{place.rank, place.ranks, 0}, size, 0);
    return mpi::select_price(context_, bids, grid, IndexRange{share.first, share.first + share.count}, p);
  }
  PriceSelection price(const Bids& bids, std::span<const double> prices, const PricingParams& p) override {
    const ElementRange share = slice_elements(InputSlice{place.rank, place.ranks, 0}, prices.size(), 0);
    return mpi::select_price(context_, bids, prices.subspan(share.first, share.count), share.first, p);
  }
  PriceSelection price(const Bids& bids, const PriceRange& range, const PricingParams& p) override {
    return mpi::select_price(context_, bids, range, p);
  }
  SparseVectorBatch sparse_vector(std::span<const double> answers, std::uint64_t first,
                                  const SparseVectorParams& p) override {
    return mpi::sparse_vector_batch(context_, answers, first, p);
  }
  PartitionSelection partitions(std::span<const std::uint64_t> users, std::span<const std::uint64_t> keys,
                                const PartitionSelectionParams& p) override {
    return mpi::select_partitions(context_, users, keys, p);
  }
  StringPartitionSelection partitions(std::span<const std::uint64_t> users, std::span<const std::string_view> keys,
                                      const PartitionSelectionParams& p) override {
    return mpi::select_partitions(context_, users, keys, p);
  }

 private:
  mpi::DistributedContext context_;
};

}  // namespace

const JobPlace& job_place() { return place; }

Job::Job(int& argc, char**& argv) {
  if (launcher_ranks() == 0) return;
  MPI_Init(&argc, &argv);
  place.distributed = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &place.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &place.ranks);
  // Rank 0 prints the one report; the same report from every rank would only repeat it.
  if (place.rank != 0 && std::freopen("/dev/null", "w", stdout) == nullptr) MPI_Abort(MPI_COMM_WORLD, 1);
}

Job::~Job() {
  if (place.distributed) MPI_Finalize();
}

void Job::abandon(int status) {
  if (place.distributed) MPI_Abort(MPI_COMM_WORLD, status);
}

std::optional<InputSlice> rank_slice(std::uint64_t row_width) {
  if (!place.distributed) return std::nullopt;
  return InputSlice{place.rank, place.ranks, row_width};
}

void agree_on_step(std::exception_ptr failure) {
  if (!place.distributed) {
    if (failure) std::rethrow_exception(failure);
    return;
  }
  std::string message;
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& error) {
      message = error.what();
    } catch (...) {
      message = "an unknown error";
    }
  }
  int first_failing = failure ? place.rank : place.ranks;
  MPI_Allreduce(MPI_IN_PLACE, &first_failing, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first_failing == place.ranks) return;
  std::uint64_t length = message.size();
  MPI_Bcast(&length, 1, MPI_UINT64_T, first_failing, MPI_COMM_WORLD);
  message.resize(length);
  MPI_Bcast(message.data(), static_cast<int>(length), MPI_CHAR, first_failing, MPI_COMM_WORLD);
  throw CliError(message);
}

bool reports_error(bool whole_job) { return place.rank == 0 || !whole_job; }

std::unique_ptr<ReleaseTarget> make_release_target(const ReleaseOptions& options) {
  if (!place.distributed) return make_local_release_target(options);
  return std::make_unique<DistributedTarget>(
      options.seed ? mpi::DistributedContext::with_fixed_seed(MPI_COMM_WORLD, *options.seed, options.generator)
                   : mpi::DistributedContext(MPI_COMM_WORLD, options.generator));
}

}  // namespace dpselect::cli
