// SPDX-License-Identifier: Apache-2.0
// Partition selection in one process (sources in <dpselect/partition_selection.hpp>): checks,
// the charge, and the passes of partition_passes.hpp; string keys numbered in byte order.
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dpselect/accounting.hpp"
#include "dpselect/context.hpp"
#include "dpselect/detail/release_access.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/partition_selection.hpp"
#include "device/gpu.hpp"
#include "partition_selection/partition_passes.hpp"

namespace dpselect {
namespace {

void check_contributions(std::size_t users, std::size_t keys) {
  if (users != keys) {
    throw InvalidArgument("dpselect: keys must hold one key per user entry (got " + std::to_string(keys) +
                          " keys for " + std::to_string(users) + " users)");
  }
  if (users == 0) throw InvalidArgument("dpselect: contributions must not be empty (got 0 (user, key) pairs)");
}

}  // namespace

std::vector<std::uint64_t> dictionary_codes(std::span<const std::string_view> values) {
  return dictionary_numbering(values).codes;
}

PartitionSelection select_partitions(Context& context, std::span<const std::uint64_t> users,
                                     std::span<const std::uint64_t> keys, const PartitionSelectionParams& params) {
  const PartitionKeepRule rule = partition_keep_rule(params);  // validates
  check_contributions(users.size(), keys.size());
  const PrivacyCharge charge = detail::partition_selection_charge(params);
  if (!is_weighted(params.strategy) && detail::resolve_backend(params.backend) == Backend::Gpu) {
    // The release: approximate at (epsilon, delta), charged before the stream is drawn.
    detail::ContextAccess::charge(context, std::span(&charge, 1));
    const detail::ContextAccess::KeyedStream drawn = detail::ContextAccess::draw_stream(context);
    detail::ReleasedKeys released = detail::gpu_select_partitions(
        users.data(), keys.data(), users.size(), false, params.max_partitions, rule, params.strategy, drawn, nullptr);
    return {std::move(released.keys),
            detail::partition_selection_report(params, rule, drawn, released.distinct, ExecutedOn::gpu)};
  }
  std::vector<detail::Contribution> pairs = detail::contributions_of(users, keys);
  detail::keep_distinct(pairs);

  detail::ContextAccess::charge(context, std::span(&charge, 1));
  const detail::ContextAccess::KeyedStream drawn =
      detail::ContextAccess::draw_streams(context, detail::partition_selection_streams(params));
  if (is_weighted(params.strategy)) {
    detail::ReleasedKeys released = detail::weighted_released_keys(pairs, params, rule, drawn);
    return {std::move(released.keys),
            detail::partition_selection_report(params, rule, drawn, released.distinct, ExecutedOn::cpu)};
  }

  std::vector<std::uint64_t> kept = detail::bounded_keys(pairs, params.max_partitions, drawn);
  pairs = {};
  detail::ReleasedKeys released = detail::released_keys(kept, rule, params.strategy, drawn);
  return {std::move(released.keys),
          detail::partition_selection_report(params, rule, drawn, released.distinct, ExecutedOn::cpu)};
}

PartitionSelection select_partitions(Context& context, DeviceSpan<const std::uint64_t> users,
                                     DeviceSpan<const std::uint64_t> keys, const PartitionSelectionParams& params,
                                     cuda_stream_t stream) {
  const PartitionKeepRule rule = partition_keep_rule(params);  // validates
  check_contributions(users.size, keys.size);
  if (params.backend == Backend::Cpu) {
    throw InvalidArgument("dpselect: backend must be Auto or Gpu for pairs in device memory (got Cpu)");
  }
  if (is_weighted(params.strategy)) {
    throw InvalidArgument("dpselect: strategy must count users for pairs in device memory (got " +
                          std::string(to_string(params.strategy)) + ", which runs on the CPU: pass host arrays)");
  }
  detail::resolve_backend(Backend::Gpu);
  detail::validate_device_pointer(users.data, "users");
  detail::validate_device_pointer(keys.data, "keys");
  const PrivacyCharge charge = detail::partition_selection_charge(params);
  detail::ContextAccess::charge(context, std::span(&charge, 1));
  const detail::ContextAccess::KeyedStream drawn = detail::ContextAccess::draw_stream(context);
  detail::ReleasedKeys released = detail::gpu_select_partitions(users.data, keys.data, users.size, true,
                                                                params.max_partitions, rule, params.strategy, drawn,
                                                                stream);
  return {std::move(released.keys),
          detail::partition_selection_report(params, rule, drawn, released.distinct, ExecutedOn::gpu)};
}

StringPartitionSelection select_partitions(Context& context, std::span<const std::uint64_t> users,
                                           std::span<const std::string_view> keys,
                                           const PartitionSelectionParams& params) {
  (void)partition_keep_rule(params);  // validates, before the keys are numbered
  check_contributions(users.size(), keys.size());
  const DictionaryNumbering numbered = dictionary_numbering(keys);
  PartitionSelection coded = select_partitions(context, users, numbered.codes, params);
  StringPartitionSelection selection;
  selection.keys.reserve(coded.keys.size());
  for (const std::uint64_t code : coded.keys) selection.keys.emplace_back(keys[numbered.first_rows[code]]);
  selection.report = coded.report;
  return selection;
}

}  // namespace dpselect
