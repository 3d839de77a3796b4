// SPDX-License-Identifier: Apache-2.0
/// @file
/// Exceptions thrown by dpselect. Every one is thrown before anything is released.
///
/// Each derives from a standard exception (`std::invalid_argument`, `std::logic_error` or
/// `std::runtime_error`), so code that catches those catches these too; `what()` starts with
/// "dpselect: " and names the parameter, value or CUDA call concerned. Whether a release that
/// throws has been charged to its context's accountant is stated on each entry point: checks of the
/// parameters and inputs throw before the charge; findings in the data during the pass (a NaN
/// utility, too small an epsilon for the floating-point slack) throw after it, and the charge stays.
#pragma once

#include <stdexcept>
#include <string>

namespace dpselect {

/// A parameter or input value is out of range. The message names the parameter and the value.
///
/// Thrown by every entry point for a bad parameter (an epsilon or sensitivity that is zero,
/// negative, NaN or infinite; an empty range; an index beyond 2^63; ...) before any stream is drawn,
/// and by Release::finish for what the pass found in the data (a NaN or +inf utility, naming its
/// index; every candidate excluded; a floating-point slack that would reach epsilon).
class InvalidArgument : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// The API was used in an order that would break a privacy invariant (a release evaluated
/// twice over the same candidates, or used after it was finished).
///
/// Also thrown by every member of a moved-from Context, Release or mpi::DistributedContext (the
/// documented exceptions aside), and by Release::finish for a merged result that comes from another
/// release or does not cover each of its shards exactly once.
class UsageError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// The requested backend cannot run here (no usable GPU, or a CPU-only build).
///
/// Thrown where gpu_usable() is false for Backend::Gpu and for data in device memory (whatever the
/// backend), checked before any charge or stream. For data in host memory Backend::Auto never throws
/// it: it runs on the CPU instead.
class BackendUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A CUDA runtime call failed; the message carries the CUDA error text and the call site.
///
/// Thrown from a GPU pass (a release that fails there has been charged and has drawn its stream:
/// begin a new one), from QuantileData::from_device, and by the functions of
/// `<dpselect/device_memory.hpp>`. Nothing is released when it is thrown.
class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// PrivacyAccountant::charge refused a release: it would take the spent (epsilon, delta) beyond the
/// budget. Nothing was recorded, and the release must not run.
///
/// The entry points charge before they draw a stream (Context::charge_to), so when it reaches the
/// caller no noise has been drawn and nothing was released.
class BudgetExceeded : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A counter-based sampler needed more random blocks than the position range it was given (see
/// discrete_noise.hpp for the probability). Thrown instead of reading another item's positions.
///
/// It signals an event of negligible probability, not a misuse; nothing is released when it is
/// thrown.
class RandomnessExhausted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace dpselect
