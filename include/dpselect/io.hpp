// SPDX-License-Identifier: Apache-2.0
/// @file
/// `operator<<` for every public enum that has a to_string, so a report prints directly:
/// @code{.cpp}
/// std::cout << pick.report.executed_on;   // "cpu", "gpu" or "cpu+gpu"
/// @endcode
/// It prints exactly to_string(value). Opt-in (dpselect.hpp does not include it) so that code
/// which never prints a report does not pay for `<ostream>` in every translation unit.
#pragma once

#include <ostream>

#include "dpselect/accounting.hpp"
#include "dpselect/noise_vector.hpp"
#include "dpselect/pricing.hpp"
#include "dpselect/random_key.hpp"
#include "dpselect/secure_noise.hpp"
#include "dpselect/sparse_vector.hpp"
#include "dpselect/types.hpp"

namespace dpselect {

/// @name Printing the enums
///@{

/// Writes `to_string(value)` to `out`, with the stream's formatting (width, fill) as for any string.
/// @param out The stream to write to.
/// @param value The value to print; one outside its enumeration prints "unknown".
/// @return `out`.
inline std::ostream& operator<<(std::ostream& out, Mechanism value) { return out << to_string(value); }
inline std::ostream& operator<<(std::ostream& out, Backend value) { return out << to_string(value); }
inline std::ostream& operator<<(std::ostream& out, ExecutedOn value) { return out << to_string(value); }
inline std::ostream& operator<<(std::ostream& out, Generator value) { return out << to_string(value); }
inline std::ostream& operator<<(std::ostream& out, BidderNeighbours value) { return out << to_string(value); }
inline std::ostream& operator<<(std::ostream& out, ReleaseKind value) { return out << to_string(value); }
inline std::ostream& operator<<(std::ostream& out, CompositionRoute value) { return out << to_string(value); }
inline std::ostream& operator<<(std::ostream& out, NoiseDistribution value) { return out << to_string(value); }
inline std::ostream& operator<<(std::ostream& out, SecureDistribution value) { return out << to_string(value); }
inline std::ostream& operator<<(std::ostream& out, SparseVectorAlgorithm value) { return out << to_string(value); }
///@}

}  // namespace dpselect
