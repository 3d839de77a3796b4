// SPDX-License-Identifier: Apache-2.0
// What the releases over ChunkedValues share (select.cpp, top_k.cpp): the checks before the
// charge, and the loop that reads one chunk after another into one buffer.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "dpselect/chunked_values.hpp"
#include "dpselect/errors.hpp"
#include "validation/validation.hpp"

namespace dpselect::detail {

// Every check of the chunked input itself, then its buffer: both before the charge, so that a bad
// reader or an input too large to buffer costs nothing.
template <class T>
std::vector<T> chunk_buffer(const ChunkedValues<T>& utilities) {
  validate_candidate_count("utilities", utilities.size, 0);
  if (!utilities.read) throw InvalidArgument("dpselect: utilities.read must be a reader (got an empty function)");
  if (utilities.chunk_size == 0) throw InvalidArgument("dpselect: utilities.chunk_size must be at least 1 (got 0)");
  return std::vector<T>(std::min(utilities.chunk_size, utilities.size));
}

// Reads candidates [0, size) into `buffer` a chunk at a time, in order, and passes each chunk to
// `pass(chunk, first_index)`.
template <class T, class Pass>
void for_each_chunk(const ChunkedValues<T>& utilities, std::vector<T>& buffer, Pass&& pass) {
  for (std::uint64_t first = 0; first < utilities.size; first += buffer.size()) {
    const std::span<T> chunk(buffer.data(), std::min<std::uint64_t>(buffer.size(), utilities.size - first));
    utilities.read(first, chunk);
    pass(std::span<const T>(chunk), first);
  }
}

}  // namespace dpselect::detail
