// SPDX-License-Identifier: Apache-2.0
// Internal hooks the functor templates (select_functor.hpp, select.cuh) use. Not public API.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "dpselect/context.hpp"
#include "dpselect/detail/noise_spec.hpp"
#include "dpselect/shard_result.hpp"

namespace dpselect::detail {

struct ReleaseState;

struct ReleaseAccess {
  // Throws UsageError for a moved-from release.
  static ReleaseState& state(const Release& release);
  // The release's spec; fixes its utility reference at 0 if nothing fixed it yet.
  static NoiseSpec noise_spec(const Release& release);
  // The same, except that where the reference is still to be taken from the data, the spec asks
  // the kernel to load it from the first utility (NoiseSpec::reference_on_device).
  static NoiseSpec noise_spec_loading_reference(const Release& release);
  // Whether the params leave the utility reference to the data (neither a reference nor a bound).
  static bool takes_reference_from_data(const Release& release);
  // For the entry points that see the whole range (select, mpi::select), before any evaluate():
  // fixes the release's utility reference at the utility of the range's first candidate (0 if it
  // is not finite), unless the params or an earlier use fixed it.
  static void fix_reference_from_data(Release& release, double first_utility);
  // select over one array in device memory: evaluates the whole range [0, size) in one pass. Where
  // fix_reference_from_data would take r from the first utility, the kernel loads it itself
  // (NoiseSpec::reference_on_device): the same scores without a read back before the launch.
  static ShardResult evaluate_whole_device_array(Release& release, DeviceSpan<const float> utilities,
                                                 cuda_stream_t stream);
  static ShardResult evaluate_whole_device_array(Release& release, DeviceSpan<const double> utilities,
                                                 cuda_stream_t stream);
  // Records that `range` is being evaluated; throws UsageError if any index in it already was
  // or the release is finished, InvalidArgument if the range is empty or reversed.
  static void claim(Release& release, IndexRange range);
  // The backend this release's params ask for, with Auto resolved against this machine.
  static Backend resolved_backend(const Release& release);
  // `result` of evaluating `range` (already claimed), stamped with the release's tag and the
  // range's coverage fingerprint.
  static ShardResult stamped(const Release& release, IndexRange range, ShardResult result);
  // Release::ticket: the ticket of `release` for `range` (release_ticket.hpp).
  static ReleaseTicket issue_ticket(Release& release, IndexRange range, std::optional<double> first_utility);
};

struct ContextAccess {
  // For mechanisms that are not a noisy max (the sparse vector technique): a fresh stream of the
  // context's key, drawn exactly as begin_release draws one. Charges nothing: call charge first.
  // Throws UsageError on a moved-from context.
  struct KeyedStream {
    RandomKey key;
    std::uint64_t stream;
  };
  static KeyedStream draw_stream(Context& context);
  // `count` consecutive streams drawn at once (the first returned), as `count` releases begun one
  // after another would draw them, for entry points that make many releases in one call
  // (select_rows and select_repeated, host/rows/rows.cpp). Charges nothing: call charge first.
  static KeyedStream draw_streams(Context& context, std::uint64_t count);
  // Charges `charges` to the context's accountant, if it has one (all or nothing; throws
  // BudgetExceeded). Entry points call it after every check and before drawing any stream.
  static void charge(Context& context, std::span<const PrivacyCharge> charges);
  // begin_release without its charge, for entry points that charged the whole release first.
  static Release begin_charged_release(Context& context, const SelectionParams& params);
};

// Throws InvalidArgument unless begin < end <= 2^63.
void validate_range(IndexRange range);

// The fingerprint of one evaluated range that ShardResult::coverage sums (a distributed release
// computes what the merge of all ranks' shards must hold).
std::uint64_t coverage_fingerprint(IndexRange range);

// `requested` with Auto resolved against this machine; throws BackendUnavailable for Gpu when no
// usable device (or no CUDA backend) exists. Entry points call it before drawing a stream.
Backend resolve_backend(Backend requested);

// Fills out[0..count) with the utilities of candidates first_index, first_index+1, ...
using FillUtilities = void (*)(const void* functor, std::uint64_t first_index, std::uint64_t count,
                               double* out);

// The CPU path for utilities computed by a functor: all cores, fixed-size chunks.
ShardResult cpu_evaluate_generated(const NoiseSpec& spec, IndexRange range, FillUtilities fill,
                                   const void* functor);

}  // namespace dpselect::detail
