// SPDX-License-Identifier: Apache-2.0
// The two steps of a selection release that do not depend on how its shards are scored: the
// noise spec it begins with and the Selection it finishes with. Context::begin_release and
// Release::finish take them for every release (host/engine/context.cpp); rows of few candidates
// on the CPU (host/rows/small_rows.hpp) take them for a whole batch of releases without
// building a Release for each, so both give the same Selection, report included.
#pragma once

#include <cstdint>

#include "dpselect/context.hpp"
#include "dpselect/detail/noise_spec.hpp"
#include "dpselect/random_key.hpp"
#include "dpselect/shard_result.hpp"
#include "selection/floating_point_slack.hpp"

namespace dpselect::detail {

// The noise spec of a release with `params` (validated: score_scale is what validation returned)
// on `stream` of `key`, and in `reference` how its utility reference was fixed: by the params, or
// at 0.
NoiseSpec release_noise_spec(const SelectionParams& params, double score_scale, const RandomKey& key,
                             std::uint64_t stream, UtilityReference& reference);

// The Selection of a release from the merge of all its shards (already checked to belong to it and
// to cover its range once): throws InvalidArgument for an invalid utility, no candidate, every
// candidate excluded, or a slack that would reach epsilon; otherwise the index and its report.
Selection finish_selection(const SelectionParams& params, const NoiseSpec& spec, UtilityReference reference,
                           const ShardResult& merged);

}  // namespace dpselect::detail
