// SPDX-License-Identifier: Apache-2.0
// cub::WarpReduce for the simt build: CUB's shuffle tree (simt/collectives.hpp). The aggregate is
// valid in lane 0 of each logical warp only; the other lanes get partial results, as from CUB.
#pragma once

#include "simt/collectives.hpp"

namespace cub {

template <class T, int LogicalWarpThreads = 32>
class WarpReduce {
 public:
  struct TempStorage {};  // the shuffles need none

  explicit WarpReduce(TempStorage&) {}

  template <class Op>
  T Reduce(T input, Op op) {
    return ::simt::cub_model::warp_reduce<LogicalWarpThreads>(input, op);
  }
  T Sum(T input) {
    return Reduce(input, [](const T& a, const T& b) { return a + b; });
  }
};

}  // namespace cub
