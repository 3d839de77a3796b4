// SPDX-License-Identifier: Apache-2.0
// One private arg-max over utilities in host memory, and its report printed.
// [doc:host_memory]
#include <dpselect/dpselect.hpp>
#include <dpselect/io.hpp>                 // operator<< for the report's enums (opt-in: <ostream>)

#include <iostream>
#include <vector>
// [/doc:host_memory]

int main() {
  // [doc:host_memory]
  dpselect::Context context;                 // secret key from the OS CSPRNG (getrandom)
  dpselect::SelectionParams params;
  params.mechanism = dpselect::Mechanism::exponential;
  params.epsilon = 1.0;                      // privacy loss of this release
  params.sensitivity = 1.0;                  // Δ: how far one record moves any utility
  const std::vector<float> utility = {12.0f, 40.0f, 37.0f, 5.0f};   // u(0..n-1), from the data
  dpselect::Selection pick = dpselect::select(context, std::span<const float>(utility), params);
  std::cout << "index " << pick.index
            << " by " << pick.report.mechanism                // operator<< from dpselect/io.hpp
            << " on " << dpselect::to_string(pick.report.executed_on)   // "cpu", "gpu", "cpu+gpu"
            << " with " << pick.report.generator << " noise\n";
  // pick.report.slack.epsilon: the floating-point slack (publish it only with a utility_bound)
  // [/doc:host_memory]
  return pick.index < utility.size() ? 0 : 1;
}
