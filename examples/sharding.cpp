// SPDX-License-Identifier: Apache-2.0
// One release evaluated in two shards (here in one process; across devices or ranks alike).
#include <dpselect/dpselect.hpp>

#include <iostream>
#include <vector>

int main() {
  dpselect::Context context;
  dpselect::SelectionParams params;
  params.epsilon = 1.0;
  params.sensitivity = 1.0;
  const std::vector<float> first_half = {3.0f, 14.0f, 15.0f, 9.0f};    // candidates 0..3
  const std::vector<float> second_half = {26.0f, 5.0f, 35.0f, 8.0f};   // candidates 4..7
  // [doc:sharding]
  dpselect::Release release = context.begin_release(params);    // draws one fresh stream
  dpselect::ShardResult a = release.evaluate(std::span<const float>(first_half), 0);
  dpselect::ShardResult b = release.evaluate(std::span<const float>(second_half), first_half.size());
  dpselect::Selection pick = release.finish(dpselect::merge(a, b));
  // [/doc:sharding]
  std::cout << "index " << pick.index << " of " << pick.report.candidates << " candidates\n";
  return pick.index < first_half.size() + second_half.size() ? 0 : 1;
}
