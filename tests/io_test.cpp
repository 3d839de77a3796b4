// SPDX-License-Identifier: Apache-2.0
// dpselect/io.hpp: every enum prints as its to_string, including inside a longer expression.
#include "dpselect/io.hpp"  // first, so it is known to compile on its own

#include <gtest/gtest.h>

#include <initializer_list>
#include <sstream>
#include <string>

namespace dpselect {
namespace {

template <class Enum>
void expect_prints_as_to_string(std::initializer_list<Enum> values) {
  for (Enum value : values) {
    std::ostringstream out;
    out << value;
    EXPECT_EQ(out.str(), std::string(to_string(value)));
    EXPECT_NE(out.str(), "unknown");
  }
}

TEST(Ostream, EveryEnumPrintsAsItsToString) {
  expect_prints_as_to_string({Mechanism::exponential, Mechanism::permute_and_flip, Mechanism::laplace_noisy_max});
  expect_prints_as_to_string({Backend::Auto, Backend::Cpu, Backend::Gpu});
  expect_prints_as_to_string({ExecutedOn::none, ExecutedOn::cpu, ExecutedOn::gpu, ExecutedOn::cpu_and_gpu});
  expect_prints_as_to_string({Generator::chacha20, Generator::philox});
  expect_prints_as_to_string({BidderNeighbours::add_or_remove_bidder, BidderNeighbours::change_one_bid});
  expect_prints_as_to_string({ReleaseKind::pure, ReleaseKind::exponential_mechanism, ReleaseKind::approximate});
  expect_prints_as_to_string({CompositionRoute::basic, CompositionRoute::advanced,
                              CompositionRoute::optimal_homogeneous, CompositionRoute::zcdp});
  expect_prints_as_to_string({NoiseDistribution::laplace, NoiseDistribution::gaussian,
                              NoiseDistribution::generalized_gaussian});
  expect_prints_as_to_string({SecureDistribution::laplace, SecureDistribution::gaussian});
  expect_prints_as_to_string({SparseVectorAlgorithm::dwork_roth, SparseVectorAlgorithm::lyu_su_li});
}

// The small enums have std::uint8_t underneath: they must print as words, never as a character
// or a number.
TEST(Ostream, ReportFieldsPrintAsWordsInALine) {
  SelectionReport report;
  report.executed_on = ExecutedOn::cpu_and_gpu;
  report.generator = Generator::philox;
  report.mechanism = Mechanism::permute_and_flip;
  std::ostringstream out;
  out << report.mechanism << " on " << report.executed_on << " with " << report.generator << '\n';
  EXPECT_EQ(out.str(), "permute-and-flip on cpu+gpu with philox\n");
}

}  // namespace
}  // namespace dpselect
