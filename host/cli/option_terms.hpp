// SPDX-License-Identifier: Apache-2.0
// The library's messages in the command's words. The library names what it refuses as a C++
// caller writes it (utility_bound, SparseVectorAlgorithm::lyu_su_li, Backend::Gpu); a user of
// the command typed --utility-bound, lyu-su-li, --backend gpu. One table per subcommand says
// which option each name is, so the library's messages stay right for C++ callers.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>

namespace dpselect::cli {

// `message` with every parameter name of the library that the subcommand `app` ran replaced by
// the option it comes from (whole words only: "delta" but not "delta_lower").
std::string in_option_terms(const CLI::App& app, std::string_view message);

// The same for the subcommand called `subcommand` ("" or unknown: the names shared by all).
std::string in_option_terms(std::string_view subcommand, std::string_view message);

}  // namespace dpselect::cli
