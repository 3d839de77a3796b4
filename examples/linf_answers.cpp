// SPDX-License-Identifier: Apache-2.0
// 1,000 counting queries answered with a small largest error (the l-infinity answerer).
#include <dpselect/dpselect.hpp>

#include <iostream>
#include <vector>

int main() {
  dpselect::Context context;
  std::vector<double> counts(1000);
  for (std::size_t i = 0; i < counts.size(); ++i) counts[i] = static_cast<double>(i % 97);
  // [doc:linf_answers]
  dpselect::LinfAnswerParams linf{.epsilon = 1.0, .delta = 1e-6};
  dpselect::LinfAnswerReport r = dpselect::answer_counting_queries(context, std::span<double>(counts), linf);
  // r.plan: p, σ, the sparse vector's threshold and c, the repair noise, and a bound on the
  // l∞ error that holds with probability >= 1 - linf.beta
  // [/doc:linf_answers]
  std::cout << "p " << r.plan.p << ", sigma " << r.plan.sigma << ", l-infinity error <= " << r.plan.bound
            << " with probability " << 1.0 - linf.beta << "; " << r.repaired << " answered again\n";
  return r.plan.bound > 0.0 ? 0 : 1;
}
