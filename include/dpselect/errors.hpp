// SPDX-License-Identifier: Apache-2.0
/// @file
/// Exceptions thrown by dpselect. Every one is thrown before anything is released.
#pragma once

#include <stdexcept>
#include <string>

namespace dpselect {

/// A parameter or input value is out of range. The message names the parameter and the value.
class InvalidArgument : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// The API was used in an order that would break a privacy invariant (a release evaluated
/// twice over the same candidates, or used after it was finished).
class UsageError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// The requested backend cannot run here (no usable GPU, or a CPU-only build).
class BackendUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A CUDA runtime call failed; the message carries the CUDA error text and the call site.
class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// PrivacyAccountant::charge refused a release: it would take the spent (epsilon, delta) beyond the
/// budget. Nothing was recorded, and the release must not run.
class BudgetExceeded : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A counter-based sampler needed more random blocks than the position range it was given (see
/// discrete_noise.hpp for the probability). Thrown instead of reading another item's positions.
class RandomnessExhausted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace dpselect
