// SPDX-License-Identifier: Apache-2.0
// The subcommands of `dpselect`. Each registers its options and a callback that runs it and
// prints the result; errors propagate to main() as exceptions, before anything is printed.
#pragma once

#include <CLI/CLI.hpp>

namespace dpselect::cli {

void register_select_command(CLI::App& app);
void register_top_k_command(CLI::App& app);
void register_rows_command(CLI::App& app);
void register_price_command(CLI::App& app);
void register_svt_command(CLI::App& app);
void register_quantile_command(CLI::App& app);
void register_keys_command(CLI::App& app);
void register_demo_command(CLI::App& app);
void register_audit_command(CLI::App& app);

}  // namespace dpselect::cli
