// SPDX-License-Identifier: Apache-2.0
// Suggestions for a mistyped subcommand or option name ("did you mean --epsilon?"). CLI11 2.1
// has none of its own.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace dpselect::cli {

// Edits (insertion, deletion, substitution, transposition of neighbours) from `a` to `b`: the
// optimal-string-alignment Damerau-Levenshtein distance.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The names of `known` that `typed` most likely stands for, in the order of `known`: those it
// abbreviates (a prefix, after the leading dashes) or else the nearest few edits away (a typo).
// Anything after '=' in `typed` (--eps=1) is ignored. Empty when nothing is close.
std::vector<std::string> closest_names(std::string_view typed,
                                       const std::vector<std::string>& known);

// " (did you mean A?)", " (did you mean A or B?)", or "" for no names.
std::string did_you_mean(const std::vector<std::string>& names);

}  // namespace dpselect::cli
