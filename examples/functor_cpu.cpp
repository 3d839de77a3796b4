// SPDX-License-Identifier: Apache-2.0
// A private arg-max over 2^20 candidates whose utilities a lambda computes on demand, on the CPU.
// [doc:functor_cpu]
#include <dpselect/select_functor.hpp>
// [/doc:functor_cpu]

#include <cmath>
#include <cstdint>
#include <iostream>

int main() {
  dpselect::Context context;
  dpselect::SelectionParams params;
  params.epsilon = 1.0;
  params.sensitivity = 1.0;
  // [doc:functor_cpu]
  const double target = 1e6;                 // stands in for a statistic of the private data
  auto negative_distance = [target](std::uint64_t i) { return -std::fabs(static_cast<double>(i) - target); };
  auto pick = dpselect::select_functor(context, negative_distance, {0, 1ull << 20}, params);
  // [/doc:functor_cpu]
  std::cout << "index " << pick.index << " of " << pick.report.candidates << " candidates\n";
  return pick.index < (1ull << 20) ? 0 : 1;
}
