// SPDX-License-Identifier: Apache-2.0
// A release evaluated through its ticket (release_ticket.hpp): shards of an uneven tiling,
// evaluated out of order and partly through tickets read back from bytes, finish to what select()
// picks over the whole array (and to the best score of one pass, bit for bit); the finish refuses
// a merge that misses or repeats a shard; misuse and bad bytes are refused before any work.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dpselect/dpselect.hpp"
#include "engine/release_tags.hpp"
#include "support/expect_invalid.hpp"
#include "support/test_backend.hpp"

namespace {

using dpselect::Context;
using dpselect::Generator;
using dpselect::IndexRange;
using dpselect::Mechanism;
using dpselect::Release;
using dpselect::ReleaseTicket;
using dpselect::SelectionParams;
using dpselect::ShardResult;
using dpselect::UsageError;
using dpselect::testing::BackendUtilities;
using dpselect::testing::expect_invalid_message;
using dpselect::testing::params_for;

// n utilities in [offset, offset + 256): a common offset, so that the utility reference matters.
template <class T>
std::vector<T> ticket_utilities(std::size_t n, double offset) {
  std::vector<T> u(n);
  std::uint64_t z = 12345;
  for (T& x : u) {
    z = z * 6364136223846793005ULL + 1442695040888963407ULL;
    x = static_cast<T>(offset + static_cast<double>(z >> 40) / 65536.0);
  }
  return u;
}

// Where the release's scores are computed from: the first utility (as select() takes it), a
// public reference in the params, or a public bound (then the reference is 0).
enum class ReferenceFrom { first_utility, params, bound };

class TicketTest : public dpselect::testing::BackendTest {};

// Runs `call` expecting UsageError whose message contains `fragment`.
template <class Call>
void expect_usage_error(Call call, const std::string& fragment) {
  try {
    call();
    ADD_FAILURE() << "no exception";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos)
        << "message '" << error.what() << "' lacks '" << fragment << "'";
  }
}

template <class T>
void expect_ticket_shards_equal_one_pass(Generator generator, Mechanism mechanism, ReferenceFrom reference) {
  SCOPED_TRACE(std::string(dpselect::to_string(generator)) + " " + std::string(dpselect::to_string(mechanism)) +
               " reference " + std::to_string(static_cast<int>(reference)) + " " + (sizeof(T) == 4 ? "float" : "double"));
  constexpr std::uint64_t n = 5003;  // shards [0, 1234), [1234, 3001), [3001, n): none on a group edge
  const std::vector<T> u = ticket_utilities<T>(n, 1000.0);
  // A sensitivity of 64: scaled utilities within about 2 of each other, so the noise decides.
  SelectionParams params = params_for(mechanism, 1.0, 64.0);
  if (reference == ReferenceFrom::params) params.utility_reference = 1100.0;
  if (reference == ReferenceFrom::bound) params.utility_bound = 2000.0;
  const BackendUtilities<T> staged(u);

  Context one_process = Context::with_fixed_seed(7, generator);
  const dpselect::Selection expected = staged.select_with(one_process, params);

  // One pass of a release over the whole range that computes the same scores.
  SelectionParams same_scores = params;
  if (reference == ReferenceFrom::first_utility) same_scores.utility_reference = static_cast<double>(u[0]);
  Context whole = Context::with_fixed_seed(7, generator);
  Release whole_release = whole.begin_release(same_scores);
  const ShardResult one_pass = staged.evaluate_with(whole_release, 0, n);

  Context driver = Context::with_fixed_seed(7, generator);
  Release release = driver.begin_release(params);
  const ReleaseTicket ticket = release.ticket({0, n}, static_cast<double>(u[0]));
  const ReleaseTicket worker = ReleaseTicket::from_bytes(ticket.to_bytes());
  EXPECT_EQ(worker.to_bytes(), ticket.to_bytes());
  const ShardResult last = staged.evaluate_with(worker, 3001, n - 3001);
  const ShardResult middle = staged.evaluate_with(ticket, 1234, 3001 - 1234);
  const ShardResult first = staged.evaluate_with(worker, 0, 1234);
  const ShardResult merged = dpselect::merge(last, dpselect::merge(first, middle));
  EXPECT_EQ(merged.best_index, one_pass.best_index);
  EXPECT_EQ(std::memcmp(&merged.best_score, &one_pass.best_score, sizeof(double)), 0);
  EXPECT_EQ(merged.max_abs_shifted_utility, one_pass.max_abs_shifted_utility);

  const dpselect::Selection got = release.finish(merged);
  EXPECT_EQ(got.index, expected.index);
  EXPECT_EQ(got.index, one_pass.best_index);
  EXPECT_EQ(got.report.stream, expected.report.stream);
  EXPECT_EQ(got.report.candidates, n);
  EXPECT_EQ(got.report.executed_on, expected.report.executed_on);
  EXPECT_EQ(got.report.slack.epsilon, expected.report.slack.epsilon);
  EXPECT_EQ(got.report.slack.delta, expected.report.slack.delta);
  EXPECT_EQ(got.report.slack.depends_on_data, expected.report.slack.depends_on_data);
}

TEST_F(TicketTest, ShardsOfAnyTilingFinishToWhatOnePassSelects) {
  for (Generator generator : {Generator::chacha20, Generator::philox}) {
    for (Mechanism mechanism : {Mechanism::exponential, Mechanism::permute_and_flip, Mechanism::laplace_noisy_max}) {
      for (ReferenceFrom reference : {ReferenceFrom::first_utility, ReferenceFrom::params, ReferenceFrom::bound}) {
        expect_ticket_shards_equal_one_pass<float>(generator, mechanism, reference);
        expect_ticket_shards_equal_one_pass<double>(generator, mechanism, reference);
      }
    }
  }
}

TEST_F(TicketTest, WithoutAFirstUtilityScoresFromZeroAsEvaluateDoes) {
  constexpr std::uint64_t n = 700;
  const std::vector<double> u = ticket_utilities<double>(n, 50.0);
  const BackendUtilities<double> staged(u);
  const SelectionParams params = params_for(Mechanism::exponential, 1.0, 64.0);
  Context a = Context::with_fixed_seed(11);
  Release by_itself = a.begin_release(params);
  const ShardResult own = staged.evaluate_with(by_itself, 0, n);
  Context b = Context::with_fixed_seed(11);
  Release by_ticket = b.begin_release(params);
  const ReleaseTicket ticket = by_ticket.ticket({0, n});
  EXPECT_EQ(ticket.utility_reference(), 0.0);
  const ShardResult shard = staged.evaluate_with(ticket, 0, n);
  EXPECT_EQ(shard.best_index, own.best_index);
  EXPECT_EQ(std::memcmp(&shard.best_score, &own.best_score, sizeof(double)), 0);
  EXPECT_EQ(by_ticket.finish(shard).index, by_itself.finish(own).index);
}

// The shards [0, 40), [40, 80), [80, 100) of a ticket for [0, 100).
struct ThreeShards {
  Context context = Context::with_fixed_seed(5);
  Release release;
  ReleaseTicket ticket;
  ShardResult a, b, c;
  explicit ThreeShards(const BackendUtilities<double>& staged)
      : release(context.begin_release(params_for(Mechanism::exponential, 1.0, 1.0))),
        ticket(release.ticket({0, 100})),
        a(staged.evaluate_with(ticket, 0, 40)),
        b(staged.evaluate_with(ticket, 40, 40)),
        c(staged.evaluate_with(ticket, 80, 20)) {}
};

TEST_F(TicketTest, FinishRefusesAMergeThatMissesOrRepeatsAShard) {
  const std::vector<double> u = ticket_utilities<double>(100, 0.0);
  const BackendUtilities<double> staged(u);
  {
    ThreeShards s(staged);
    expect_usage_error([&] { s.release.finish(dpselect::merge(s.a, s.b)); }, "covers 80 candidates");
  }
  {
    ThreeShards s(staged);  // a twice instead of b: as many candidates, not each once
    expect_usage_error([&] { s.release.finish(dpselect::merge(s.a, dpselect::merge(s.a, s.c))); }, "not each of them once");
  }
  {
    ThreeShards s(staged);
    expect_usage_error([&] { s.release.finish(dpselect::merge(s.a, dpselect::merge(s.b, dpselect::merge(s.c, s.c)))); },
                       "covers 120 candidates");
  }
  {
    ThreeShards s(staged);
    EXPECT_EQ(s.release.finish(dpselect::merge(s.c, dpselect::merge(s.b, s.a))).report.candidates, 100u);
  }
}

TEST_F(TicketTest, FinishRefusesTheShardsOfAnotherReleasesTicket) {
  const std::vector<double> u = ticket_utilities<double>(100, 0.0);
  const BackendUtilities<double> staged(u);
  ThreeShards mine(staged);
  Context elsewhere = Context::with_fixed_seed(6);
  Release foreign = elsewhere.begin_release(params_for(Mechanism::exponential, 1.0, 1.0));
  const ShardResult theirs = staged.evaluate_with(foreign.ticket({0, 100}), 0, 100);
  expect_usage_error([&] { mine.release.finish(theirs); }, "another release");
}

TEST_F(TicketTest, ShardsOutsideTheRangeAreRefusedBeforeAnyWork) {
  const std::vector<double> u = ticket_utilities<double>(100, 0.0);
  const BackendUtilities<double> staged(u);
  Context context = Context::with_fixed_seed(5);
  Release release = context.begin_release(params_for(Mechanism::exponential, 1.0, 1.0));
  const ReleaseTicket ticket = release.ticket({10, 60});
  expect_invalid_message([&] { staged.evaluate_with(ticket, 0, 20); },
                         {"must lie in its range [10, 60)", "first_index 0", "20 utilities"});
  expect_invalid_message([&] { staged.evaluate_with(ticket, 50, 20); }, {"first_index 50", "20 utilities"});
  expect_invalid_message([&] { ticket.evaluate(std::span<const double>(), 10); }, {"utilities"});
}

TEST_F(TicketTest, ReleaseIsEvaluatedEitherByItselfOrThroughItsTicket) {
  const std::vector<double> u = ticket_utilities<double>(100, 0.0);
  const BackendUtilities<double> staged(u);
  const SelectionParams params = params_for(Mechanism::exponential, 1.0, 1.0);
  Context context = Context::with_fixed_seed(5);
  {
    Release release = context.begin_release(params);
    const ReleaseTicket ticket = release.ticket({0, 100}, 3.0);
    expect_usage_error([&] { staged.evaluate_with(release, 0, 10); }, "evaluate its shards with the ticket");
    EXPECT_EQ(release.ticket({0, 100}, 3.0).to_bytes(), ticket.to_bytes());
    expect_usage_error([&] { release.ticket({0, 99}, 3.0); }, "already handed out a ticket for candidates [0, 100)");
    expect_usage_error([&] { release.ticket({0, 100}); }, "same range and first utility");
  }
  {
    Release release = context.begin_release(params);
    staged.evaluate_with(release, 0, 10);
    expect_usage_error([&] { release.ticket({0, 100}); }, "already evaluated shards itself");
  }
  Release release = context.begin_release(params);
  expect_invalid_message([&] { release.ticket({5, 5}); }, {"range", "empty"});
  expect_invalid_message([&] { release.ticket({6, 5}); }, {"begin <= end", "begin 6, end 5"});
  expect_invalid_message([&] { release.ticket({0, (std::uint64_t{1} << 63) + 1}); }, {"2^63"});
}

TEST_F(TicketTest, TicketOfAFinishedOrDestroyedReleaseRefusesToEvaluate) {
  const std::vector<double> u = ticket_utilities<double>(100, 0.0);
  const BackendUtilities<double> staged(u);
  const SelectionParams params = params_for(Mechanism::exponential, 1.0, 1.0);
  Context context = Context::with_fixed_seed(5);
  std::optional<ReleaseTicket> outlived;
  {
    Release release = context.begin_release(params);
    const ReleaseTicket ticket = release.ticket({0, 100});
    const ReleaseTicket read_back = ReleaseTicket::from_bytes(ticket.to_bytes());
    const ShardResult all = staged.evaluate_with(ticket, 0, 100);
    release.finish(all);
    expect_usage_error([&] { staged.evaluate_with(ticket, 0, 100); }, "was finished or destroyed");
    expect_usage_error([&] { release.ticket({0, 100}); }, "already finished");
    // A ticket read back from bytes cannot know; what it evaluates can never be finished.
    const ShardResult late = staged.evaluate_with(read_back, 0, 100);
    expect_usage_error([&] { release.finish(late); }, "already finished");
    Release unfinished = context.begin_release(params);
    outlived = unfinished.ticket({0, 100});
  }
  expect_usage_error([&] { staged.evaluate_with(*outlived, 0, 100); }, "was finished or destroyed");
}

TEST_F(TicketTest, TheDriverIsChargedOnceAndTheWorkersNothing) {
  const std::vector<double> u = ticket_utilities<double>(100, 0.0);
  const BackendUtilities<double> staged(u);
  auto accountant = std::make_shared<dpselect::PrivacyAccountant>(dpselect::PrivacyBound{10.0, 0.0});
  Context driver = Context::with_fixed_seed(5);
  driver.charge_to(accountant);
  Release release = driver.begin_release(params_for(Mechanism::exponential, 1.0, 1.0));
  const ReleaseTicket ticket = release.ticket({0, 100});
  const ReleaseTicket worker = ReleaseTicket::from_bytes(ticket.to_bytes());
  const ShardResult merged = dpselect::merge(staged.evaluate_with(worker, 0, 50), staged.evaluate_with(worker, 50, 50));
  release.finish(merged);
  EXPECT_EQ(accountant->release_count(), 1u);
  EXPECT_LE(accountant->spent().epsilon, 1.0);
}

// Byte offsets of the fields of the serialized ticket (release_ticket.cpp).
constexpr std::size_t kGeneratorAt = 8, kMechanismAt = 9, kBackendAt = 10, kFlagsAt = 11, kKeyAt = 12,
                      kStreamAt = 44, kEpsilonAt = 52, kReferenceAt = 84, kBeginAt = 92, kReleaseTagAt = 108,
                      kBytesTagAt = 116, kTicketBytes = 124;

std::uint64_t u64_at(const std::vector<std::uint8_t>& bytes, std::size_t at) {
  std::uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= std::uint64_t{bytes[at + i]} << (8 * i);
  return value;
}

std::vector<std::uint8_t> with_u64_at(std::vector<std::uint8_t> bytes, std::size_t at, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) bytes[at + i] = static_cast<std::uint8_t>(value >> (8 * i));
  return bytes;
}

std::vector<std::uint8_t> with_double_at(std::vector<std::uint8_t> bytes, std::size_t at, double value) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return with_u64_at(std::move(bytes), at, bits);
}

std::vector<std::uint8_t> with_byte_at(std::vector<std::uint8_t> bytes, std::size_t at, std::uint8_t value) {
  bytes[at] = value;
  return bytes;
}

// The ChaCha20 key a ticket's bytes carry (the tests' releases use ChaCha20).
dpselect::RandomKey key_in(const std::vector<std::uint8_t>& bytes) {
  dpselect::ChaChaKey key;
  for (int w = 0; w < 8; ++w) {
    key.word[w] = static_cast<std::uint32_t>(u64_at(bytes, kKeyAt + 4 * w) & 0xFFFFFFFFu);
  }
  return dpselect::RandomKey(key);
}

// `bytes` with the tag over them recomputed, as whoever holds the ticket (and so its key) can.
std::vector<std::uint8_t> retagged(std::vector<std::uint8_t> bytes) {
  const std::uint64_t tag = dpselect::detail::keyed_tag(
      key_in(bytes), u64_at(bytes, kStreamAt), dpselect::detail::TagDomain::ticket_bytes,
      std::span<const std::uint8_t>(bytes).first(kBytesTagAt));
  return with_u64_at(std::move(bytes), kBytesTagAt, tag);
}

TEST(ReleaseTicketBytes, BadBytesAreRefusedNamingWhatIsWrong) {
  Context context = Context::with_fixed_seed(5);
  SelectionParams params;
  params.epsilon = 1.0;
  params.sensitivity = 1.0;
  Release release = context.begin_release(params);
  const std::vector<std::uint8_t> good = release.ticket({0, 100}).to_bytes();
  ASSERT_EQ(good.size(), kTicketBytes);
  EXPECT_NO_THROW(ReleaseTicket::from_bytes(good));
  const auto refused = [](const std::vector<std::uint8_t>& bytes, std::initializer_list<std::string> fragments) {
    expect_invalid_message([&] { ReleaseTicket::from_bytes(bytes); }, fragments);
  };
  refused(std::vector<std::uint8_t>(good.begin(), good.end() - 1), {"of 124 bytes; got 123"});
  refused({}, {"got 0"});
  refused(with_byte_at(good, 0, 'x'), {"do not begin with its mark"});
  refused(with_byte_at(good, 4, 1), {"got version 1"});
  refused(with_byte_at(good, kGeneratorAt, 2), {"generator code", "got 2"});
  refused(with_byte_at(good, kMechanismAt, 3), {"mechanism code", "got 3"});
  refused(with_byte_at(good, kBackendAt, 7), {"backend code", "got 7"});
  refused(with_byte_at(good, kFlagsAt, 4), {"flags", "got 4"});
  // A changed field is refused by the tag over the bytes, before its value is looked at.
  refused(with_double_at(good, kEpsilonAt, 0.02), {"their tag does not match their contents"});
  refused(with_byte_at(good, kKeyAt, static_cast<std::uint8_t>(good[kKeyAt] ^ 1)), {"their tag does not match"});
  // With that tag recomputed (the ticket holds the key), each field's own check.
  refused(retagged(with_double_at(good, kEpsilonAt, 0.0)), {"their parameters", "epsilon"});
  refused(retagged(with_double_at(good, kEpsilonAt, dpselect::testing::kNaN)), {"their parameters", "epsilon"});
  refused(retagged(with_double_at(good, kReferenceAt, dpselect::testing::kInf)), {"finite utility reference"});
  refused(retagged(with_u64_at(good, kBeginAt, u64_at(good, kBeginAt + 8))), {"their parameters", "empty range"});
  refused(retagged(with_double_at(good, kEpsilonAt, 2.0)), {"release tag does not match their parameters"});
}

// Each of a ticket's 992 single-bit flips is refused, and so is every flip of a top-k ticket (140
// bytes), and a ticket with 16 bytes appended read as a top-k ticket.
TEST(ReleaseTicketBytes, EverySingleBitFlipIsRefused) {
  Context context = Context::with_fixed_seed(6);
  Release release = context.begin_release(params_for(Mechanism::permute_and_flip, 0.01, 1.0));
  const std::vector<std::uint8_t> good = release.ticket({3, 1003}, 0.5).to_bytes();
  ASSERT_EQ(good.size(), kTicketBytes);
  std::size_t refused = 0;
  for (std::size_t bit = 0; bit < 8 * good.size(); ++bit) {
    std::vector<std::uint8_t> flipped = good;
    flipped[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
    try {
      ReleaseTicket::from_bytes(flipped);
      ADD_FAILURE() << "bit " << bit << " of byte " << bit / 8 << " flipped was accepted";
    } catch (const dpselect::InvalidArgument&) {
      ++refused;
    }
  }
  EXPECT_EQ(refused, 8 * kTicketBytes);

  dpselect::TopKParams top_k;
  top_k.selection = params_for(Mechanism::exponential, 0.1, 1.0);
  top_k.selection.backend = dpselect::Backend::Cpu;  // a top-k ticket's shards run on the CPU
  top_k.k = 1;
  dpselect::TopKRelease top_k_release = dpselect::begin_top_k_release(context, top_k, {0, 100});
  const std::vector<std::uint8_t> top_k_good = top_k_release.ticket().to_bytes();
  ASSERT_EQ(top_k_good.size(), kTicketBytes + 16);
  EXPECT_NO_THROW(dpselect::TopKTicket::from_bytes(top_k_good));
  for (std::size_t bit = 0; bit < 8 * top_k_good.size(); ++bit) {
    std::vector<std::uint8_t> flipped = top_k_good;
    flipped[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
    EXPECT_THROW(dpselect::TopKTicket::from_bytes(flipped), dpselect::InvalidArgument) << "bit " << bit;
  }
  std::vector<std::uint8_t> padded = good;
  padded.insert(padded.end(), 16, std::uint8_t{0});
  padded[kTicketBytes] = 1;  // k = 1
  expect_invalid_message([&] { dpselect::TopKTicket::from_bytes(padded); }, {"their tag does not match"});
}

// A worker that holds the key can change epsilon and recompute both of a ticket's tags: from_bytes
// then accepts the ticket, but the shards it scores carry the tag of the changed parameters, and
// the driver, which never takes the parameters from its workers, refuses them.
TEST_F(TicketTest, ShardsScoredUnderChangedParametersAreRefusedByFinish) {
  const std::vector<double> u = ticket_utilities<double>(100, 0.0);
  const BackendUtilities<double> staged(u);
  Context context = Context::with_fixed_seed(8);
  const SelectionParams params = params_for(Mechanism::exponential, 0.01, 1.0);
  Release release = context.begin_release(params);
  const ReleaseTicket ticket = release.ticket({0, 100});
  SelectionParams changed = params;
  changed.epsilon = 1e6;
  std::vector<std::uint8_t> forged = with_double_at(ticket.to_bytes(), kEpsilonAt, changed.epsilon);
  // The tag first: the order in which a call's arguments are evaluated is unspecified, and
  // std::move(forged) may empty `forged` before key_in reads it (clang evaluates left to right).
  const std::uint64_t tag =
      dpselect::detail::release_tag(key_in(forged), ticket.stream(), changed, ticket.utility_reference());
  forged = with_u64_at(std::move(forged), kReleaseTagAt, tag);
  const ReleaseTicket worker = ReleaseTicket::from_bytes(retagged(std::move(forged)));
  EXPECT_EQ(worker.params().epsilon, 1e6);
  const ShardResult shard = staged.evaluate_with(worker, 0, 100);
  expect_usage_error([&] { release.finish(shard); }, "scored under other parameters");
}

}  // namespace
