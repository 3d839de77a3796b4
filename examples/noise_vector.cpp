// SPDX-License-Identifier: Apache-2.0
// Gaussian noise on 1,000 counting queries (L2 sensitivity sqrt(1000)).
#include <dpselect/dpselect.hpp>
#include <dpselect/io.hpp>

#include <cmath>
#include <iostream>
#include <vector>

int main() {
  dpselect::Context context;
  std::vector<double> answers(1000, 50.0);
  const double k = static_cast<double>(answers.size());   // one record moves each answer by <= 1
  // [doc:noise_vector]
  dpselect::NoiseVectorParams gauss{.distribution = dpselect::NoiseDistribution::gaussian,
                                    .epsilon = 1.0, .delta = 1e-6, .sensitivity = std::sqrt(k)};  // L2
  auto report = dpselect::add_noise(context, std::span<double>(answers), gauss);  // report.scale = σ
  // σ: the analytic Gaussian (Balle & Wang 2018). Device memory:
  // add_noise(context, dpselect::DeviceSpan<double>{ptr, n}, gauss, stream)
  // [/doc:noise_vector]
  std::cout << report.distribution << " noise, sigma " << report.scale << ", on " << report.executed_on << '\n';
  return report.scale > 0.0 && report.coordinates == answers.size() ? 0 : 1;
}
