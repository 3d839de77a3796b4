// SPDX-License-Identifier: Apache-2.0
// The README's C++ hello world, built by install_consumer against a fresh install (the README
// quotes the marked region: the doc_snippets test fails when the two differ).
// [doc:hello_cpp]
#include <dpselect/dpselect.hpp>

#include <cmath>
#include <cstdio>
#include <span>
#include <vector>

int main() {
  // One utility per candidate, computed from the private data. Here u(i) = -|i - 700000|:
  // candidates near 700,000 are the best.
  std::vector<float> utilities(1'000'000);
  for (std::size_t i = 0; i < utilities.size(); ++i) {
    utilities[i] = -std::fabs(static_cast<float>(i) - 700000.0f);
  }
  dpselect::Context context;                   // a secret key from the operating system
  dpselect::SelectionParams params;            // the exponential mechanism by default
  params.epsilon = 1.0;                        // the privacy loss of this release
  params.sensitivity = 1.0;                    // how far one record can move any utility
  const dpselect::Selection pick = dpselect::select(context, std::span<const float>(utilities), params);
  std::printf("released index %llu (computed on the %s)\n", static_cast<unsigned long long>(pick.index),
              dpselect::to_string(pick.report.executed_on).data());
}
// [/doc:hello_cpp]
