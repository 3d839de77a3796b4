// SPDX-License-Identifier: Apache-2.0
// Tags keyed by a release's secret: what binds a shard to the parameters it was scored under
// (ShardResult::release_tag) and what makes a ticket's bytes tamper-evident (ReleaseTicket::
// to_bytes). docs/sharded_releases.md, "Trust model", says what they protect against.
#pragma once

#include <cstdint>
#include <span>

#include "dpselect/random_key.hpp"
#include "dpselect/types.hpp"

namespace dpselect::detail {

// What a tag covers, so that no message of one kind is ever taken for one of another.
enum class TagDomain : std::uint8_t {
  release_parameters = 1,  // ShardResult::release_tag
  ticket_bytes = 2,        // ReleaseTicket::to_bytes
  top_k_ticket_bytes = 3,  // TopKTicket::to_bytes
  partition_ticket_bytes = 4,  // PartitionSelectionTicket::to_bytes
};

// A 64-bit tag of `message` under the secret (key, stream) of one release: the cascade of the
// ChaCha20 block function (Bellare, Canetti & Krawczyk, "Pseudorandom functions revisited: the
// cascade construction and its concrete security", FOCS 1996, Thm 3.1: a pseudorandom function on
// prefix-free inputs), keyed by 256 bits of the release's stream at positions 2^62 and 2^62 + 1
// (kReleaseTagPosition, never noise), over the domain, the message's length and the message in
// 16-byte chunks (the length first makes the encoding prefix-free), truncated to 64 bits. Whoever
// lacks the key forges one with probability about 2^-64 a try. The same for every generator; a
// Philox key has 64 bits, and so does the secret its tags rest on.
std::uint64_t keyed_tag(const RandomKey& key, std::uint64_t stream, TagDomain domain,
                        std::span<const std::uint8_t> message);

// ShardResult::release_tag of the release on `stream` of `key` scored under `params` from the
// reference `utility_reference`: every field that changes a score (mechanism, epsilon,
// sensitivity, monotone, utility_bound, the reference and whether the params gave it), not the
// backend (each computes the same bits). A shard scored under other parameters carries another
// tag, which finish() refuses.
std::uint64_t release_tag(const RandomKey& key, std::uint64_t stream, const SelectionParams& params,
                          double utility_reference);

}  // namespace dpselect::detail
