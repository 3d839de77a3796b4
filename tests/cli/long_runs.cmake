# SPDX-License-Identifier: Apache-2.0
# Tests of long runs and large outputs: progress on stderr, the per-price time limit and
# --force, the automatic grid sampler, and topk --output. Included by CMakeLists.txt.

set(small_audit audit --only "pricing (exponential, add-remove)" --runs 2000 --selection-runs 1000)

# ---- progress: silent when stderr is not a terminal (as here), plain lines with --progress ----
dpselect_cli_test(progress_silent_without_terminal NOT_STDERR_REGEX "."
  ARGS ${small_audit})
dpselect_cli_test(progress_forced_audit_prints_start_and_end_lines
  STDERR_REGEX "^dpselect: audit of 1 mechanism: 0% \\(0 of 6000 releases\\)[^\n]*\n(.*\n)?dpselect: audit of 1 mechanism: 100% \\(6000 of 6000 releases\\)\n$"
  ARGS ${small_audit} --progress)
# A finished run prints no timing: "done in X s" would time a private release.
dpselect_cli_test(progress_forced_release_has_no_final_timing
  STDERR_REGEX "^dpselect: releases over 16 candidates: 0% \\(0 of 2 releases\\)[^\n]*\ndpselect: releases over 16 candidates: 100% \\(2 of 2 releases\\)\n$"
  NOT_STDERR_REGEX "done in| s\n| s left"
  ARGS select --utilities utilities.txt ${select_args} --repeat 2 --progress)

# ---- pricing: the per-price time limit and --force ----
# 10^15 prices with a mechanism that has only per-price work: refused before any release.
set(huge_grid --grid 0:1e6:1e-9)
dpselect_cli_error(price_per_price_time_limit
  "per-price sampling of 1000000000000000 grid prices takes about [0-9.]+ [a-z]+ on the CPU .*more than the limit of 10 min: pass --force"
  ${pumpkin_args} ${huge_grid} --mechanism laplace --backend cpu)
dpselect_cli_error(price_per_price_time_limit_counts_repeats
  "x 1000 releases takes about .*pass --force"
  ${pumpkin_args} --grid 0:1e3:1e-6 --mechanism permute-and-flip --backend cpu --repeat 1000)
# With --force the limit is passed: the run gets as far as the library's first check, which
# fails fast here (5 bids, --max-bidders 2) instead of the time limit.
dpselect_cli_error(price_force_passes_the_time_limit "--max-bidders"
  ${pumpkin_args} ${huge_grid} --mechanism laplace --backend cpu --max-bidders 2 --force)

# ---- pricing: the automatic grid sampler ----
# 4 * 10^6 prices, at most 100 bidders (public): bid intervals, and the report says so.
dpselect_cli_test(price_auto_sampler_public_bound_picks_bid_intervals
  STDOUT_REGEX "sampler: bid-intervals  \\(chosen automatically\\)"
  ARGS ${pumpkin_args} --grid 0.01:4:1e-6 --max-bidders 100 --seed 1)
# The same without a public bound: the choice read the (private) number of bids, so it is withheld.
dpselect_cli_test(price_auto_sampler_without_bound_is_withheld
  STDOUT_REGEX "sampler: withheld"
  NOT_STDOUT_REGEX "bid-intervals|per-price"
  ARGS ${pumpkin_args} --grid 0.01:4:1e-6 --seed 1)
# Even a 10^15-price grid is sampled at once by the exponential mechanism.
dpselect_cli_test(price_auto_sampler_huge_grid_runs_at_once
  STDOUT_REGEX "prices: 1000000000000000\n.*sampler: bid-intervals"
  ARGS ${pumpkin_args} ${huge_grid} --max-bidders 1000 --seed 1)
dpselect_cli_test(price_other_mechanisms_sample_per_price
  STDOUT_REGEX "sampler: per-price  \\(chosen automatically\\)"
  ARGS ${pumpkin_args} --grid 0.5:4:0.5 --mechanism permute-and-flip --seed 1)
dpselect_cli_test(price_range_reports_bid_intervals STDOUT_REGEX "sampler: bid-intervals"
  ARGS ${pumpkin_args} --range 0.5:4 --seed 1)

# ---- topk --output ----
# one_finite.txt: only candidate 2 is finite, so top-1 releases index 2 whatever the noise.
set(one_finite_topk topk --utilities one_finite.txt ${select_args} --k 1)
string(HEX "{'descr': '<u8', 'fortran_order': False, " npy_dict_start)
string(HEX "'shape': (1,)" shape_1)
string(HEX "'shape': (3, 1)" shape_3_by_1)
dpselect_cli_test(topk_output_npy
  WRITTEN_FILE topk_one.npy
  WRITTEN_FILE_HEX_REGEX "^934e554d505901007600${npy_dict_start}${shape_1}[0-9a-f]*200a0200000000000000$"
  STDOUT_REGEX "indices file: [^\n]*topk_one\\.npy"
  NOT_STDOUT_REGEX "indices: "
  ARGS ${one_finite_topk} --output @DIR@/topk_one.npy)
# The answer is the file: neither the text answer line nor --quiet lists the indices.
dpselect_cli_test(topk_output_answer_names_the_file
  WRITTEN_FILE topk_answer.txt
  STDOUT_REGEX "^indices written to [^\n]*topk_answer\\.txt\n\n"
  ARGS ${one_finite_topk} --output @DIR@/topk_answer.txt)
dpselect_cli_test(topk_output_quiet_prints_only_the_file
  WRITTEN_FILE topk_quiet.txt
  STDOUT_REGEX "^[^\n]*topk_quiet\\.txt\n$"
  ARGS ${one_finite_topk} --output @DIR@/topk_quiet.txt --quiet)
# A folder that cannot take the file is refused before anything is released, not after.
dpselect_cli_error(topk_output_missing_folder
  "^dpselect: error: --output no_such_folder/indices\\.npy: cannot write in the folder no_such_folder: No such file or directory\n$"
  ${one_finite_topk} --output no_such_folder/indices.npy)
dpselect_cli_test(topk_output_npy_one_row_per_release
  WRITTEN_FILE topk_three.npy
  WRITTEN_FILE_HEX_REGEX "${shape_3_by_1}[0-9a-f]*0a020000000000000002000000000000000200000000000000$"
  ARGS ${one_finite_topk} --repeat 3 --output @DIR@/topk_three.npy)
dpselect_cli_test(topk_output_text
  WRITTEN_FILE topk_three.txt
  WRITTEN_FILE_REGEX "^2\n2\n2\n$"
  ARGS ${one_finite_topk} --repeat 3 --output @DIR@/topk_three.txt)
dpselect_cli_test(topk_output_never_overwrites
  EXPECT_EXIT 2
  PREEXISTING_FILE topk_existing.npy
  STDERR_REGEX "--output [^\n]*topk_existing\\.npy: the file exists already"
  ARGS ${one_finite_topk} --output @DIR@/topk_existing.npy)
dpselect_cli_error(topk_output_unknown_extension
  "--output must name a \\.npy or \\.txt file \\(got 'indices\\.csv'\\)"
  ${one_finite_topk} --output indices.csv)
dpselect_cli_error(topk_too_many_indices_for_stdout
  "--k 1000001 would print more than 1000000 indices in the report: write them to a file with --output"
  topk --utilities utilities.txt ${select_args} --k 1000001)
dpselect_cli_error(topk_too_many_indices_for_stdout_with_repeat
  "--k 2 with --repeat 600000 would print more than 1000000 indices"
  topk --utilities utilities.txt ${select_args} --k 2 --repeat 600000)

# Counts of audit releases stay far from overflowing (a progress total of 2 (selection + runs)
# releases per audit, over every audit).
dpselect_cli_error(audit_runs_beyond_their_limit
  "^dpselect: error: --runs and --selection-runs must be <= 2\\^40 \\(got 2000000000000\\)\n$"
  audit --only exponential --runs 2000000000000)

# ---- rows --output ----
# rows_one_finite.txt: one finite candidate per row, so the picks are 1, 0, 1 whatever the noise.
set(one_finite_rows rows --utilities rows_one_finite.txt --cols 2 ${select_args})
dpselect_cli_test(rows_output_text
  WRITTEN_FILE rows_picks.txt
  WRITTEN_FILE_REGEX "^1\n0\n1\n$"
  STDOUT_REGEX "^indices written to [^\n]*rows_picks\\.txt\n\n"
  NOT_STDOUT_REGEX "row 0: index"
  ARGS ${one_finite_rows} --output @DIR@/rows_picks.txt)
string(HEX "'shape': (2, 3)" shape_2_by_3)
dpselect_cli_test(rows_output_npy_one_row_per_release
  WRITTEN_FILE rows_picks.npy
  WRITTEN_FILE_HEX_REGEX "${shape_2_by_3}[0-9a-f]*0a010000000000000000000000000000000100000000000000010000000000000000000000000000000100000000000000$"
  ARGS ${one_finite_rows} --repeat 2 --output @DIR@/rows_picks.npy)
dpselect_cli_test(rows_output_never_overwrites EXPECT_EXIT 2
  PREEXISTING_FILE rows_existing.txt
  STDERR_REGEX "--output [^\n]*rows_existing\\.txt: the file exists already"
  ARGS ${one_finite_rows} --output @DIR@/rows_existing.txt)
