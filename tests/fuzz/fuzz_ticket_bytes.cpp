// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for ReleaseTicket::from_bytes and TopKTicket::from_bytes (release_ticket.cpp).
// The first byte chooses what the rest is:
//   0: bytes read as they are (a ticket, then a top-k ticket);
//   1: a genuine ticket of a release with fuzzed parameters, XOR-ed with the rest of the input;
//   2: the same, then its tag over the bytes recomputed with the key the bytes carry, as a holder
//      of the ticket could: what the fields' own checks and the release tag must then catch.
//
// Invariants: from_bytes throws InvalidArgument or returns a ticket; a ticket it returns writes
// back the very bytes it was read from (every byte is covered by a tag, so no other bytes pass),
// with valid parameters; in mode 1 only an all-zero mask is accepted, and in mode 2 only a mask
// that leaves the parameters and the key unchanged (recomputing the release tag needs the
// parameters the release was begun with). Anything else (another exception, a crash, a sanitizer
// report) is a finding.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "dpselect/dpselect.hpp"
#include "engine/release_tags.hpp"
#include "fuzz_support.hpp"

namespace {

using dpselect::fuzz::check;

constexpr std::size_t kStreamAt = 44;
constexpr std::size_t kBytesTagAt = 116;
constexpr std::size_t kTicketBytes = 124;

std::uint64_t u64_at(std::span<const std::uint8_t> bytes, std::size_t at) {
  std::uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= std::uint64_t{bytes[at + i]} << (8 * i);
  return value;
}

// The key a ticket's bytes carry (generator byte 8, key words from byte 12), as from_bytes reads it.
dpselect::RandomKey key_in(std::span<const std::uint8_t> bytes) {
  std::uint32_t words[8];
  for (int w = 0; w < 8; ++w) words[w] = static_cast<std::uint32_t>(u64_at(bytes, 12 + 4 * w));
  if (bytes[8] == 1) return dpselect::RandomKey(dpselect::PhiloxKey{words[0], words[1]});
  dpselect::ChaChaKey chacha;
  for (int w = 0; w < 8; ++w) chacha.word[w] = words[w];
  return dpselect::RandomKey(chacha);
}

void check_accepted(const dpselect::ReleaseTicket& ticket, std::span<const std::uint8_t> bytes) {
  const std::vector<std::uint8_t> again = ticket.to_bytes();
  check(again.size() == bytes.size() && std::equal(again.begin(), again.end(), bytes.begin()),
        "accepted bytes that the ticket does not write back");
  const dpselect::SelectionParams& params = ticket.params();
  check(params.epsilon > 0 && std::isfinite(params.epsilon) && params.sensitivity > 0 &&
            std::isfinite(params.sensitivity) && std::isfinite(ticket.utility_reference()) &&
            ticket.range().begin < ticket.range().end,
        "accepted a ticket with invalid parameters");
}

// Reads `bytes` as a ticket; returns whether it was accepted.
bool read_ticket(std::span<const std::uint8_t> bytes) {
  try {
    check_accepted(dpselect::ReleaseTicket::from_bytes(bytes), bytes);
    return true;
  } catch (const dpselect::InvalidArgument&) {
    return false;
  }
}

void read_top_k_ticket(std::span<const std::uint8_t> bytes) {
  try {
    const dpselect::TopKTicket ticket = dpselect::TopKTicket::from_bytes(bytes);
    const std::vector<std::uint8_t> again = ticket.to_bytes();
    check(again.size() == bytes.size() && std::equal(again.begin(), again.end(), bytes.begin()),
          "accepted top-k bytes that the ticket does not write back");
  } catch (const dpselect::InvalidArgument&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* input, std::size_t size) {
  FuzzedDataProvider data(input, size);
  const int mode = data.ConsumeIntegralInRange<int>(0, 2);
  if (mode == 0) {
    const std::vector<std::uint8_t> bytes = data.ConsumeRemainingBytes<std::uint8_t>();
    read_ticket(bytes);
    read_top_k_ticket(bytes);
    return 0;
  }
  dpselect::SelectionParams params;
  params.mechanism = static_cast<dpselect::Mechanism>(data.ConsumeIntegralInRange<int>(0, 2));
  params.epsilon = data.ConsumeFloatingPointInRange<double>(1e-6, 1e3);
  params.sensitivity = data.ConsumeFloatingPointInRange<double>(1e-6, 1e6);
  params.monotone = data.ConsumeBool();
  params.backend = dpselect::Backend::Cpu;
  const dpselect::Generator generator = data.ConsumeBool() ? dpselect::Generator::philox : dpselect::Generator::chacha20;
  dpselect::Context context = dpselect::Context::with_fixed_seed(data.ConsumeIntegral<std::uint64_t>(), generator);
  dpselect::Release release = context.begin_release(params);
  const std::uint64_t begin = data.ConsumeIntegralInRange<std::uint64_t>(0, 1u << 20);
  const std::uint64_t end = begin + data.ConsumeIntegralInRange<std::uint64_t>(1, 1u << 20);
  const std::vector<std::uint8_t> genuine = release.ticket({begin, end}).to_bytes();
  check(genuine.size() == kTicketBytes && read_ticket(genuine), "a genuine ticket was refused");
  std::vector<std::uint8_t> bytes = genuine;
  bool changed = false;
  for (std::uint8_t& byte : bytes) {
    if (data.remaining_bytes() == 0) break;
    const std::uint8_t mask = data.ConsumeIntegral<std::uint8_t>();
    byte ^= mask;
    changed = changed || mask != 0;
  }
  if (mode == 2) {
    const std::uint64_t tag = dpselect::detail::keyed_tag(key_in(bytes), u64_at(bytes, kStreamAt),
                                                          dpselect::detail::TagDomain::ticket_bytes,
                                                          std::span<const std::uint8_t>(bytes).first(kBytesTagAt));
    for (int i = 0; i < 8; ++i) bytes[kBytesTagAt + i] = static_cast<std::uint8_t>(tag >> (8 * i));
    // Changes that leave the key, the stream, the parameters and the release tag as they were are
    // the range and the backend (each checked on its own), or no change at all.
    if (read_ticket(bytes)) {
      const dpselect::ReleaseTicket ticket = dpselect::ReleaseTicket::from_bytes(bytes);
      check(ticket.stream() == release.stream() && ticket.params().epsilon == params.epsilon &&
                ticket.params().sensitivity == params.sensitivity && ticket.params().mechanism == params.mechanism &&
                ticket.params().monotone == params.monotone,
            "a ticket with changed parameters passed its release tag");
    }
    return 0;
  }
  check(read_ticket(bytes) != changed, changed ? "a changed ticket was accepted" : "a genuine ticket was refused");
  return 0;
}
