// SPDX-License-Identifier: Apache-2.0
/// @file
/// Values supplied piece by piece: an input larger than memory (a file of 10^10 float32 values, a
/// column read from storage) used without ever being held whole. select() and select_top_k() over
/// ChunkedValues release exactly what they release over the whole array (every candidate's noise
/// depends on its index alone, not on the chunk it arrives in), and QuantileData prepares quantile
/// data from them without holding the values.
///
/// Example:
/// @code{.cpp}
/// dpselect::ChunkedValues<float> scores{n, [&](std::uint64_t first, std::span<float> out) {
///   read_floats(file, first, out);  // the utilities of candidates [first, first + out.size())
/// }};
/// dpselect::Selection pick = dpselect::select(ctx, scores, params);
/// @endcode
#pragma once

#include <cstdint>
#include <functional>
#include <span>

namespace dpselect {

/// Values [0, size), read by `read` a chunk at a time (for a selection, the utilities of
/// candidates 0 to size - 1).
///
/// The library calls `read(first, destination)` to fill `destination` with values
/// [first, first + destination.size()): from the calling thread, over consecutive ranges in
/// increasing order, each value once per use, at most `chunk_size` values at a time. It holds one
/// chunk (`chunk_size` values of T) and its own state, never the whole input. An exception thrown
/// by `read` propagates out of the call; a release then releases nothing and stays charged: check
/// an input that may hold bad values before the release (as the dpselect command does, in a first
/// pass over the file).
template <class T>
struct ChunkedValues {
  std::uint64_t size = 0;  ///< The number of values: at least 1 (at most 2^63 candidates, 2^40 quantile data).
  /// Fills its second argument with the values from the one its first names on (utilities: each
  /// finite, or -inf to exclude that candidate). Not empty.
  std::function<void(std::uint64_t first, std::span<T> destination)> read;
  std::uint64_t chunk_size = std::uint64_t{1} << 22;  ///< Values read at once; at least 1.
};

}  // namespace dpselect
