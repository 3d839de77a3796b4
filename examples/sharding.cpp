// SPDX-License-Identifier: Apache-2.0
// One release evaluated in two shards (here in one process; across devices or ranks alike), then
// the same through a ticket, as a worker that does not hold the Release evaluates its shard.
#include <dpselect/dpselect.hpp>

#include <cstdint>
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

  const std::span<const float> shard(second_half);  // what a worker holds: candidates 4..7
  const std::uint64_t first = first_half.size(), n = first_half.size() + second_half.size();
  const double first_utility = first_half[0];
  // [doc:sharding_ticket]
  dpselect::Release driver = context.begin_release(params);   // validated and charged once, here
  // first_utility: the utility of candidate 0 (scores as select() over the whole array computes them)
  std::vector<std::uint8_t> ticket = driver.ticket({0, n}, first_utility).to_bytes();
  // on each worker, over [first, first + m):
  dpselect::ShardResult mine = dpselect::ReleaseTicket::from_bytes(ticket).evaluate(shard, first);
  // [/doc:sharding_ticket]
  const dpselect::ShardResult theirs =
      dpselect::ReleaseTicket::from_bytes(ticket).evaluate(std::span<const float>(first_half), 0);
  const dpselect::ShardResult merged = dpselect::merge(mine, theirs);
  // [doc:sharding_ticket]
  // on the driver, with the merge of every worker's result:
  dpselect::Selection ticketed = driver.finish(merged);
  // [/doc:sharding_ticket]
  std::cout << "index " << ticketed.index << " of " << ticketed.report.candidates << " candidates\n";
  return pick.index < n && ticketed.index < n ? 0 : 1;
}
