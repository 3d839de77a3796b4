// SPDX-License-Identifier: Apache-2.0
/// @file
/// One release evaluated by workers that do not hold its Release: the ticket that a driver hands
/// out (Release::ticket), its serialized form, and the evaluation of a sub-range of the ticket's
/// candidates into a ShardResult. The driver merges the workers' results and finishes the release
/// as usual (Release::finish), which then checks that they tile the ticket's range exactly once.
///
/// The flow, for a data engine (Dask, Spark) or any other way of sending work elsewhere:
/// @code{.cpp}
/// dpselect::Release release = context.begin_release(params);           // validated and charged once
/// dpselect::ReleaseTicket ticket = release.ticket({0, n}, first_utility);
/// std::vector<std::uint8_t> bytes = ticket.to_bytes();                  // to each worker, privately
/// // on a worker holding utilities [first, first + m):
/// dpselect::ShardResult mine = dpselect::ReleaseTicket::from_bytes(bytes).evaluate(shard, first);
/// // back on the driver, with the merge of every worker's result:
/// dpselect::Selection pick = release.finish(merged);
/// @endcode
///
/// Trust. A ticket holds the context's SECRET key: whoever reads it can compute every noise value
/// of every release of that context, past and future. Send it only where the workers and the
/// channel to them are as trusted as the driver's own memory (one cluster under one operator, an
/// encrypted transport); the ShardResults coming back are secret too (shard_result.hpp). Only the
/// Selection that finish() returns may be published.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "dpselect/context.hpp"
#include "dpselect/detail/noise_spec.hpp"
#include "dpselect/random_key.hpp"
#include "dpselect/shard_result.hpp"
#include "dpselect/types.hpp"

namespace dpselect {

namespace detail {
struct ReleaseAccess;
}  // namespace detail
class TopKTicket;

/// What a worker needs to evaluate shards of one release that it does not hold: the release's
/// key, stream and parameters, its utility reference, and the range of candidates its shards
/// tile. Made by Release::ticket; copyable, and serializable to bytes (to_bytes, from_bytes).
///
/// SECRET: it carries the key of the context the release was begun from (see the file comment).
class ReleaseTicket {
 public:
  /// @name Utilities in host memory
  ///@{

  /// Evaluates candidates [first_index, first_index + utilities.size()), which must lie in range(),
  /// exactly as Release::evaluate does for the release itself (the same bits, the same backend
  /// choice on this machine).
  /// @param utilities The utility of candidate `first_index + i` at index i; not empty.
  /// @param first_index The global index of `utilities[0]`.
  /// @return This shard's result, stamped for the ticket's release. SECRET: pass it only to merge()
  ///         and, merged with the other shards, to the release's finish().
  /// @throws InvalidArgument for empty utilities or a shard outside range().
  /// @throws UsageError when this ticket (not one read back by from_bytes) belongs to a release that
  ///         has been finished or destroyed: its results could never be finished.
  /// @throws BackendUnavailable for Backend::Gpu without a usable GPU on this machine.
  /// @throws CudaError if a CUDA call of the GPU pass fails.
  /// @par Privacy
  /// Releases nothing. Nothing here remembers what was evaluated: the release's finish() refuses a
  /// merge that holds a candidate twice or misses one.
  ShardResult evaluate(std::span<const float> utilities, std::uint64_t first_index) const;
  ShardResult evaluate(std::span<const double> utilities, std::uint64_t first_index) const;
  ///@}

  /// @name Utilities in device memory
  ///@{

  /// Utilities in device memory, as Release::evaluate for device memory: ordered on `stream`, which
  /// the call synchronizes.
  /// @param utilities The utilities in memory the current device can read; size >= 1.
  /// @param first_index The global index of the first utility.
  /// @param stream A stream of the current device (nullptr: the legacy default stream).
  /// @return This shard's result (SECRET).
  /// @throws InvalidArgument for an empty span, a shard outside range(), a pointer the device cannot
  ///         read, or params().backend == Backend::Cpu.
  /// @throws UsageError as for host memory.
  /// @throws BackendUnavailable without a usable GPU.
  /// @throws CudaError if a CUDA call fails.
  ShardResult evaluate(DeviceSpan<const float> utilities, std::uint64_t first_index, cuda_stream_t stream) const;
  ShardResult evaluate(DeviceSpan<const double> utilities, std::uint64_t first_index, cuda_stream_t stream) const;
  ///@}

  /// The ticket as bytes: a versioned, fixed layout (little-endian) that from_bytes reads on any
  /// machine. SECRET: it holds the key.
  /// @return The serialized ticket.
  std::vector<std::uint8_t> to_bytes() const;
  /// A ticket read back from to_bytes' output. Checks the layout, the version, the tag over every
  /// byte (keyed by the release's key and stream), every field (the parameters as begin_release
  /// checks them) and the release tag against the parameters, so a corrupted or changed byte
  /// string is refused rather than evaluated (docs/sharded_releases.md, "Trust model").
  /// @param bytes The output of to_bytes.
  /// @return The ticket. It does not know whether its release has been finished (evaluate cannot
  ///         refuse); the release's finish() refuses results that do not belong to it.
  /// @throws InvalidArgument naming what is wrong with `bytes`.
  static ReleaseTicket from_bytes(std::span<const std::uint8_t> bytes);

  /// The release's parameters (utility_reference as the release fixed it, see utility_reference()).
  /// @return The parameters the release was begun with.
  const SelectionParams& params() const { return params_; }
  /// The release's stream id (SelectionReport::stream of the release).
  /// @return The stream id.
  std::uint64_t stream() const { return stream_; }
  /// The candidates the shards must tile, each exactly once, for the release to finish.
  /// @return The range given to Release::ticket.
  IndexRange range() const { return range_; }
  /// The utility reference every shard's scores are computed from (SelectionParams::utility_reference,
  /// or the first utility given to Release::ticket, or 0).
  /// @return The reference.
  double utility_reference() const { return utility_reference_; }
  /// The generator of the release's key.
  /// @return Generator::chacha20 or Generator::philox.
  Generator generator() const { return key_.generator; }

 private:
  friend struct detail::ReleaseAccess;
  friend class TopKTicket;
  ReleaseTicket() = default;
  // The spec of a shard of `size` utilities from `first_index`, after the checks every evaluation
  // makes (the release not spent, a non-empty shard inside the range).
  detail::NoiseSpec shard_spec(std::uint64_t size, std::uint64_t first_index) const;
  // `result` of the shard `range`, stamped with the release's tag and the range's fingerprint.
  ShardResult stamped(ShardResult result, IndexRange range) const;
  template <class Evaluate>
  ShardResult evaluate_range(std::uint64_t size, std::uint64_t first_index, Evaluate&& evaluate) const;

  RandomKey key_;
  std::uint64_t stream_ = 0;
  SelectionParams params_;
  double utility_reference_ = 0.0;
  IndexRange range_;
  std::uint64_t release_tag_ = 0;
  // Set when the issuing release is finished or destroyed; empty for a ticket from from_bytes.
  std::shared_ptr<const std::atomic<bool>> release_spent_;
};

}  // namespace dpselect
