// SPDX-License-Identifier: Apache-2.0
// Floating-point-safe Laplace noise on integer counts.
#include <dpselect/dpselect.hpp>
#include <dpselect/io.hpp>

#include <cmath>
#include <iostream>
#include <vector>

int main() {
  dpselect::Context context;
  std::vector<double> counts = {120.0, 45.0, 0.0, 3.0, 981.0};
  // [doc:secure_noise]
  dpselect::SecureNoiseParams noise{.distribution = dpselect::SecureDistribution::laplace,
                                    .epsilon = 1.0, .sensitivity = 1.0};   // L1 (Laplace) or L2 (Gaussian)
  noise.inputs_on_grid = true;   // integer counts (g <= 1): no rounding penalty; off-grid values refused
  auto report = dpselect::add_secure_noise(context, std::span<double>(counts), noise);  // in place, all cores
  // report.plan.granularity: every output is a multiple of it; report.plan.effective_scale
  // [/doc:secure_noise]
  std::cout << report.distribution << " noise of scale " << report.plan.effective_scale << " on a grid of "
            << report.plan.granularity << ": " << counts.front() << ", ...\n";
  for (double count : counts) {
    if (std::fmod(count, report.plan.granularity) != 0.0) return 1;
  }
  return 0;
}
