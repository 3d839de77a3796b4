// SPDX-License-Identifier: Apache-2.0
// ReleaseTicket: a worker's evaluation of a shard of a release it does not hold, and the ticket's
// serialized form, and the serialized form of a TopKTicket (its ReleaseTicket and k). Release::ticket
// (context.cpp) issues tickets; Release::finish checks their merge.
#include "dpselect/release_ticket.hpp"
#include "dpselect/top_k.hpp"

#include <cmath>
#include <cstring>
#include <string>

#include "dpselect/detail/release_access.hpp"
#include "dpselect/errors.hpp"
#include "selection/cpu_backend.hpp"
#include "device/gpu.hpp"
#include "selection/gpu.hpp"
#include "engine/release_steps.hpp"
#include "engine/byte_layout.hpp"
#include "engine/release_tags.hpp"
#include "top_k/top_k_steps.hpp"
#include "validation/validation.hpp"

namespace dpselect {
namespace {

// The layout of to_bytes, version 2 (every integer and double little-endian):
//   magic "dpsT" | u32 version | u8 generator | u8 mechanism | u8 backend | u8 flags (1: monotone,
//   2: a utility_reference in the params) | 32 key bytes (ChaCha20: its 8 words; Philox: lo, hi,
//   then zeros) | u64 stream | f64 epsilon | f64 sensitivity | f64 utility_bound | f64 params'
//   utility_reference (0 without one) | f64 the release's utility reference | u64 range begin |
//   u64 range end | u64 release tag (release_tags.hpp: the parameters and reference shards are
//   scored under) | u64 the tag of every byte before it (TagDomain::ticket_bytes)
// A TopKTicket's: a ReleaseTicket's bytes | u64 k | u64 the tag of every byte before it
// (TagDomain::top_k_ticket_bytes). Version 1 (before the bytes' tag) is refused.
constexpr char kMagic[4] = {'d', 'p', 's', 'T'};
constexpr std::uint32_t kVersion = 2;
constexpr std::size_t kSerializedSize = 4 + 4 + 4 + 32 + 8 * 10;
constexpr std::size_t kTopKSerializedSize = kSerializedSize + 16;
constexpr std::uint8_t kMonotoneFlag = 1;
constexpr std::uint8_t kReferenceFlag = 2;

[[noreturn]] void refuse_bytes(const std::string& what) {
  throw InvalidArgument("dpselect: bytes must be a ReleaseTicket written by ReleaseTicket::to_bytes (" + what + ")");
}

}  // namespace

detail::NoiseSpec ReleaseTicket::shard_spec(std::uint64_t size, std::uint64_t first_index) const {
  if (release_spent_ && release_spent_->load(std::memory_order_acquire)) {
    throw UsageError("dpselect: this ticket's release (stream " + std::to_string(stream_) +
                     ") was finished or destroyed; its shards can no longer be finished: begin a new release");
  }
  detail::validate_candidate_count("utilities", size, first_index);
  if (first_index < range_.begin || first_index + size > range_.end) {
    throw InvalidArgument("dpselect: a ticket's shard must lie in its range [" + std::to_string(range_.begin) + ", " +
                          std::to_string(range_.end) + ") (got first_index " + std::to_string(first_index) + " and " +
                          std::to_string(size) + " utilities)");
  }
  detail::UtilityReference reference = detail::UtilityReference::zero;
  detail::NoiseSpec spec = detail::release_noise_spec(params_, detail::score_scale(params_), key_, stream_, reference);
  spec.utility_reference = utility_reference_;
  return spec;
}

ShardResult ReleaseTicket::stamped(ShardResult result, IndexRange range) const {
  result.release_tag = release_tag_;
  result.coverage = detail::coverage_fingerprint(range);
  return result;
}

template <class Evaluate>
ShardResult ReleaseTicket::evaluate_range(std::uint64_t size, std::uint64_t first_index, Evaluate&& evaluate) const {
  const detail::NoiseSpec spec = shard_spec(size, first_index);
  const IndexRange range{first_index, first_index + size};
  return stamped(evaluate(spec, range), range);
}

namespace {

template <class T>
auto host_pass(std::span<const T> utilities, Backend requested) {
  return [utilities, requested](const detail::NoiseSpec& spec, IndexRange range) {
    return detail::evaluate_host_array(detail::resolve_backend(requested), spec, utilities.data(), range);
  };
}

template <class T>
auto device_pass(DeviceSpan<const T> utilities, Backend requested, cuda_stream_t stream) {
  detail::validate_device_utilities(utilities.data, utilities.size, 0, requested);
  return [utilities, stream](const detail::NoiseSpec& spec, IndexRange range) {
    return detail::gpu_evaluate_device(spec, utilities.data, range, stream);
  };
}

}  // namespace

ShardResult ReleaseTicket::evaluate(std::span<const float> utilities, std::uint64_t first_index) const {
  return evaluate_range(utilities.size(), first_index, host_pass(utilities, params_.backend));
}
ShardResult ReleaseTicket::evaluate(std::span<const double> utilities, std::uint64_t first_index) const {
  return evaluate_range(utilities.size(), first_index, host_pass(utilities, params_.backend));
}
ShardResult ReleaseTicket::evaluate(DeviceSpan<const float> utilities, std::uint64_t first_index,
                                    cuda_stream_t stream) const {
  return evaluate_range(utilities.size, first_index, device_pass(utilities, params_.backend, stream));
}
ShardResult ReleaseTicket::evaluate(DeviceSpan<const double> utilities, std::uint64_t first_index,
                                    cuda_stream_t stream) const {
  return evaluate_range(utilities.size, first_index, device_pass(utilities, params_.backend, stream));
}

std::vector<std::uint8_t> ReleaseTicket::to_bytes() const {
  detail::ByteWriter w;
  w.bytes(kMagic, sizeof kMagic);
  w.u32(kVersion);
  w.u8(static_cast<std::uint8_t>(key_.generator));
  w.u8(static_cast<std::uint8_t>(params_.mechanism));
  w.u8(static_cast<std::uint8_t>(params_.backend));
  w.u8(static_cast<std::uint8_t>((params_.monotone ? kMonotoneFlag : 0) |
                                 (params_.utility_reference.has_value() ? kReferenceFlag : 0)));
  w.key(key_);
  w.u64(stream_);
  w.f64(params_.epsilon);
  w.f64(params_.sensitivity);
  w.f64(params_.utility_bound);
  w.f64(params_.utility_reference.value_or(0.0));
  w.f64(utility_reference_);
  w.u64(range_.begin);
  w.u64(range_.end);
  w.u64(release_tag_);
  return w.tagged(key_, stream_, detail::TagDomain::ticket_bytes);
}

ReleaseTicket ReleaseTicket::from_bytes(std::span<const std::uint8_t> bytes) {
  if (bytes.size() != kSerializedSize) {
    refuse_bytes("of " + std::to_string(kSerializedSize) + " bytes; got " + std::to_string(bytes.size()));
  }
  if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) refuse_bytes("they do not begin with its mark");
  detail::ByteReader r(bytes.subspan(sizeof kMagic));
  const std::uint32_t version = r.u32();
  if (version != kVersion) {
    refuse_bytes("of version " + std::to_string(kVersion) + "; got version " + std::to_string(version));
  }
  const std::uint8_t generator = r.u8();
  const std::uint8_t mechanism = r.u8();
  const std::uint8_t backend = r.u8();
  const std::uint8_t flags = r.u8();
  if (generator > static_cast<std::uint8_t>(Generator::philox)) {
    refuse_bytes("a generator code of 0 or 1; got " + std::to_string(generator));
  }
  if (mechanism > static_cast<std::uint8_t>(Mechanism::laplace_noisy_max)) {
    refuse_bytes("a mechanism code of 0 to 2; got " + std::to_string(mechanism));
  }
  if (backend > static_cast<std::uint8_t>(Backend::Gpu)) {
    refuse_bytes("a backend code of 0 to 2; got " + std::to_string(backend));
  }
  if ((flags & ~(kMonotoneFlag | kReferenceFlag)) != 0) refuse_bytes("flags 0 to 3; got " + std::to_string(flags));
  ReleaseTicket ticket;
  // One encoding per ticket: the words a Philox key does not use are zero.
  if (!r.key(generator, ticket.key_)) refuse_bytes("zeros after a Philox key's two words");
  ticket.stream_ = r.u64();
  ticket.params_.mechanism = static_cast<Mechanism>(mechanism);
  ticket.params_.backend = static_cast<Backend>(backend);
  ticket.params_.monotone = (flags & kMonotoneFlag) != 0;
  ticket.params_.epsilon = r.f64();
  ticket.params_.sensitivity = r.f64();
  ticket.params_.utility_bound = r.f64();
  const double params_reference = r.f64();
  if ((flags & kReferenceFlag) != 0) {
    ticket.params_.utility_reference = params_reference;
  } else if (detail::double_bits(params_reference) != 0) {
    refuse_bytes("a params' utility reference of 0 where the params give none");
  }
  ticket.utility_reference_ = r.f64();
  ticket.range_.begin = r.u64();
  ticket.range_.end = r.u64();
  ticket.release_tag_ = r.u64();
  // Every byte is covered: a changed or corrupted field (epsilon, say) is refused here, before its
  // value is looked at, and not only when a shard scored under it reaches finish().
  if (r.u64() != detail::keyed_tag(ticket.key_, ticket.stream_, detail::TagDomain::ticket_bytes,
                                   bytes.first(kSerializedSize - 8))) {
    refuse_bytes("their tag does not match their contents: corrupted or changed");
  }
  try {
    detail::validate_release_params(ticket.params_);
    detail::validate_range(ticket.range_);
  } catch (const InvalidArgument& e) {
    refuse_bytes(std::string("their parameters: ") + e.what());
  }
  if (!std::isfinite(ticket.utility_reference_)) refuse_bytes("a finite utility reference");
  if (ticket.release_tag_ != detail::release_tag(ticket.key_, ticket.stream_, ticket.params_, ticket.utility_reference_)) {
    refuse_bytes("their release tag does not match their parameters: corrupted or changed");
  }
  return ticket;
}

std::vector<std::uint8_t> TopKTicket::to_bytes() const {
  detail::ByteWriter w;
  const std::vector<std::uint8_t> ticket = ticket_.to_bytes();
  w.bytes(ticket.data(), ticket.size());
  w.u64(k_);
  return w.tagged(ticket_.key_, ticket_.stream_, detail::TagDomain::top_k_ticket_bytes);
}

TopKTicket TopKTicket::from_bytes(std::span<const std::uint8_t> bytes) {
  if (bytes.size() != kTopKSerializedSize) {
    throw InvalidArgument("dpselect: bytes must be a TopKTicket written by TopKTicket::to_bytes (of " +
                          std::to_string(kTopKSerializedSize) + " bytes; got " + std::to_string(bytes.size()) + ")");
  }
  ReleaseTicket ticket = ReleaseTicket::from_bytes(bytes.first(kSerializedSize));
  detail::ByteReader r(bytes.subspan(kSerializedSize));
  const std::uint64_t k = r.u64();
  if (r.u64() != detail::keyed_tag(ticket.key_, ticket.stream_, detail::TagDomain::top_k_ticket_bytes,
                                   bytes.first(kSerializedSize + 8))) {
    throw InvalidArgument("dpselect: bytes must be a TopKTicket written by TopKTicket::to_bytes (their tag does "
                          "not match their contents: corrupted or changed)");
  }
  try {
    detail::validate_top_k(TopKParams{ticket.params(), k}, ticket.range().size());
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(std::string("dpselect: bytes must be a TopKTicket written by TopKTicket::to_bytes (") +
                          e.what() + ")");
  }
  if (ticket.params().backend == Backend::Gpu) {
    throw InvalidArgument("dpselect: bytes must be a TopKTicket written by TopKTicket::to_bytes (backend Gpu)");
  }
  return TopKTicket(std::move(ticket), k);
}

}  // namespace dpselect
