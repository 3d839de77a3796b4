// SPDX-License-Identifier: Apache-2.0
// The exchanges the distributed partition selection entry points share (host/mpi/): values
// grouped by the rank that owns them, an all-to-all of them with MPI's int counts checked on
// every rank alike, and a gather of every rank's values on every rank. Private to dpselect::mpi.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "dpselect/mpi.hpp"
#include "mpi/collective.hpp"

namespace dpselect::mpi::detail {

// An empty string when `counts` (one per destination) and their sum fit MPI's int; else the
// error of rank `rank` sending that many `what`.
inline std::string count_error(const std::vector<std::uint64_t>& counts, const char* what, int rank) {
  std::uint64_t total = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    total += counts[r];
    if (counts[r] > INT_MAX || total > INT_MAX) {
      return "dpselect: rank " + std::to_string(rank) + " must send at most 2^31 - 1 " + what +
             " in all (the MPI counts are int)";
    }
  }
  return {};
}

// The all-to-all of `grouped` (sorted by destination, `counts` per destination, each sum within
// int) as elements of `type`. Collective; a rank that would receive more than 2^31 - 1 elements
// fails every rank alike (agree_on_pass) before anything is sent.
template <class T>
std::vector<T> all_to_all(DistributedContext& context, const std::vector<T>& grouped,
                          const std::vector<std::uint64_t>& counts, MPI_Datatype type, const char* what) {
  const DistributedContext::State& s = Access::state(context);
  std::vector<int> send_counts(s.size), send_offsets(s.size), receive_counts(s.size), receive_offsets(s.size);
  int offset = 0;
  for (int r = 0; r < s.size; ++r) {
    send_counts[r] = static_cast<int>(counts[r]);
    send_offsets[r] = offset;
    offset += send_counts[r];
  }
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, receive_counts.data(), 1, MPI_INT, s.comm);
  std::uint64_t received = 0;
  for (int r = 0; r < s.size; ++r) {
    receive_offsets[r] = static_cast<int>(std::min<std::uint64_t>(received, INT_MAX));
    received += static_cast<std::uint64_t>(receive_counts[r]);
  }
  agree_on_pass(context, received <= INT_MAX ? nullptr
                                                     : std::make_exception_ptr(std::runtime_error(
                                                           "dpselect: rank " + std::to_string(s.rank) +
                                                           " would receive more than 2^31 - 1 " + what)));
  std::vector<T> out(received);
  MPI_Alltoallv(grouped.data(), send_counts.data(), send_offsets.data(), type, out.data(), receive_counts.data(),
                receive_offsets.data(), type, s.comm);
  return out;
}

// Every rank's `values`, on every rank, in rank order, as elements of `type`. Collective.
template <class T>
std::vector<T> gathered(DistributedContext& context, const std::vector<T>& values, MPI_Datatype type) {
  const DistributedContext::State& s = Access::state(context);
  const int here = static_cast<int>(values.size());
  std::vector<int> counts(static_cast<std::size_t>(s.size)), offsets(static_cast<std::size_t>(s.size));
  MPI_Allgather(&here, 1, MPI_INT, counts.data(), 1, MPI_INT, s.comm);
  int total = 0;
  for (int r = 0; r < s.size; ++r) {
    offsets[r] = total;
    total += counts[r];
  }
  std::vector<T> out(static_cast<std::size_t>(total));
  MPI_Allgatherv(values.data(), here, type, out.data(), counts.data(), offsets.data(), type, s.comm);
  return out;
}

}  // namespace dpselect::mpi::detail
