# SPDX-License-Identifier: Apache-2.0
# Nothing computed from the data reaches stdout or stderr unless --diagnostics asks for it: no
# aggregate (max, min, sum, count, optimum), no value of the data, no run time. Every release
# subcommand (text and JSON) and every data-caused error runs on marker files whose values and
# aggregates are numbers that no public field prints (see the comments in the files). Each
# marker regex is also shown to match where the value legitimately appears (--diagnostics, or a
# noisy value released with almost no noise), so that the "does not match" checks can fail.
# Then: the answer first in text output, --quiet, and --quiet with --json.
#
# Every run uses --seed so its output is fixed: the released prices below were checked not to
# hit a marker by chance (e.g. the optimal price 1234.75).

# privacy_utilities.txt and privacy_queries.txt: max 104988.123, min -7777.75, sum 99960.498,
# the other values 2718.5 and 31.625; as 2 x 2 rows, the row sums 107706.623 and -7746.125.
# Their count (4) is public (the candidates, the queries) and too short to be a marker.
set(utility_markers "104988|1\\.04988|7777\\.75|7\\.77775|99960|9\\.9960|2718\\.5|31\\.625|107706|7746\\.1")
# privacy_bids.txt: 1013 bids (the count is private), 1000 of 3.0625 and 13 of 1234.75; sum
# 19114.25. On the grid the optimum is the price 1234.75 with revenue 16051.75.
set(bid_markers
  "(^|[^0-9.])1013([^0-9]|$)|1234\\.75|1\\.23475|16051|1\\.6051|19114|1\\.9114|(^|[^0-9])3\\.0625")
# The byte counts of privacy_bids_odd_size.f64 (8107) and privacy_bids_truncated.npy (8096 bytes
# of data, 8104 needed by its shape): each gives the number of bids.
set(size_markers "8107|8104|8096")
set(timing_markers "seconds|per second")
set(private_markers "${utility_markers}|${bid_markers}|${size_markers}|${timing_markers}")

set(privacy_select_args --utilities privacy_utilities.txt --epsilon 1 --sensitivity 1 --seed 1)
set(privacy_price_args price --bids privacy_bids.txt --epsilon 1 --seed 1)
set(privacy_grid --grid 0.0625:1500:0.0625)
set(privacy_svt_args svt --queries privacy_queries.txt --epsilon 1 --sensitivity 1 --threshold 0
  --seed 1)

# dpselect_privacy_release(<name> ARGS...): a release that prints nothing from the data, as text
# and as JSON.
function(dpselect_privacy_release name)
  foreach(output text json)
    set(output_args)
    if(output STREQUAL "json")
      set(output_args --json)
    endif()
    dpselect_cli_test(privacy_${name}_${output}
      NOT_STDOUT_REGEX "${private_markers}" NOT_STDERR_REGEX "${private_markers}"
      ARGS ${ARGN} ${output_args})
  endforeach()
endfunction()

dpselect_privacy_release(select select ${privacy_select_args} --repeat 2)
dpselect_privacy_release(topk topk ${privacy_select_args} --k 2 --repeat 2)
dpselect_privacy_release(rows rows ${privacy_select_args} --cols 2 --repeat 2)
dpselect_privacy_release(price_grid ${privacy_price_args} ${privacy_grid} --repeat 2)
dpselect_privacy_release(price_grid_bid_intervals ${privacy_price_args} ${privacy_grid}
  --grid-sampler bid-intervals)
dpselect_privacy_release(price_range ${privacy_price_args} --range 0.0625:1500)
dpselect_privacy_release(svt ${privacy_svt_args} --max-positives 2 --repeat 2)
# privacy_utilities.txt as quantile data (-7777.75 is below the range: clipped); the released
# values are random grid points, and the exact quantiles (31.625, 2718.5) are not printed.
set(privacy_quantile_data quantile --data privacy_utilities.txt --range -5000:200000 --seed 1)
set(privacy_quantile_args ${privacy_quantile_data} --epsilon 1)
dpselect_privacy_release(quantile ${privacy_quantile_args} --q 0.5 --repeat 2)
dpselect_privacy_release(quantile_add_remove ${privacy_quantile_args} --q 0.5 --neighbours add-remove)
dpselect_privacy_release(quantiles_joint ${privacy_quantile_args} --q 0.25,0.5,0.75)
dpselect_privacy_release(quantiles_recursive ${privacy_quantile_args} --q 0.25,0.5,0.75 --method recursive)

# With --diagnostics the same markers do appear: the optimum, the count of bids, the timings.
dpselect_cli_test(privacy_price_diagnostics_show_the_bid_markers
  STDOUT_REGEX "${bid_markers}"
  ARGS ${privacy_price_args} ${privacy_grid} --diagnostics)
string(CONCAT price_diagnostics_regex "NOT PRIVATE \\(diagnostics computed from the bids: do not "
  "publish\\):\n  bidders: 1013\n  optimal price: 1234\\.75\n  optimal revenue: 16051\\.75\n.*"
  "  release 1:\n    seconds: [0-9.e-]+\n    candidates per second: [0-9]+\n")
dpselect_cli_test(privacy_price_diagnostics
  STDOUT_REGEX "${price_diagnostics_regex}" ARGS ${privacy_price_args} ${privacy_grid} --diagnostics)
# The bid-interval sampler's work is the number of bids: no "candidates per second" of the
# 2^40 + 1 prices of a range, only the time.
dpselect_cli_test(privacy_price_range_diagnostics_time_only
  STDOUT_REGEX "  release 1:\n    seconds: [0-9.e-]+\n" NOT_STDOUT_REGEX "per second"
  ARGS ${privacy_price_args} --range 0.0625:1500 --diagnostics)
# --diagnostics shows the exact median's neighbourhood: the best grid point for q = 1/2 is the
# first above the second smallest value, 31.625.
string(CONCAT quantile_diagnostics_regex "NOT PRIVATE \\(diagnostics computed from the data: do not publish\\):\n"
  "  values: 4\n  quantile 1:\n    q: 0\\.5\n    best value: 31\\.625[0-9]*  .*\n    best rank error: 0  .*"
  "  release 1:\n    seconds: [0-9.e-]+\n    rank errors: [0-9.]+  ")
dpselect_cli_test(privacy_quantile_diagnostics STDOUT_REGEX "${quantile_diagnostics_regex}"
  ARGS ${privacy_quantile_args} --q 0.5 --diagnostics)
dpselect_cli_test(privacy_quantile_diagnostics_show_the_utility_markers STDOUT_REGEX "${utility_markers}"
  ARGS ${privacy_quantile_args} --q 0.5 --diagnostics --neighbours add-remove)
dpselect_cli_test(privacy_quantile_diagnostics_json
  JSON_MEMBERS not_private/values not_private/quantiles/0/best_value not_private/quantiles/0/best_rank_error
    not_private/preparation_seconds not_private/releases/0/seconds not_private/releases/0/rank_errors/2
  ARGS ${privacy_quantile_args} --q 0.25,0.5,0.75 --diagnostics --json)
foreach(command select topk rows svt)
  set(diagnostics_args_select select ${privacy_select_args})
  set(diagnostics_args_topk topk ${privacy_select_args} --k 2)
  set(diagnostics_args_rows rows ${privacy_select_args} --cols 2)
  set(diagnostics_args_svt ${privacy_svt_args})
  dpselect_cli_test(privacy_${command}_diagnostics_show_timings
    STDOUT_REGEX "NOT PRIVATE \\(diagnostics computed from the data: do not publish\\):\n  release 1:\n    seconds: "
    ARGS ${diagnostics_args_${command}} --diagnostics)
  dpselect_cli_test(privacy_${command}_diagnostics_json
    JSON_MEMBERS not_private/releases/0/seconds
    ARGS ${diagnostics_args_${command}} --diagnostics --json)
endforeach()
# A noisy value released with almost no noise (answer noise 0.027) prints the marker 104988: the
# utility markers match the way the command prints numbers.
dpselect_cli_test(privacy_utility_markers_match_printed_numbers
  STDOUT_REGEX "${utility_markers}"
  ARGS svt --queries privacy_queries.txt --epsilon 1000 --sensitivity 1 --threshold 0 --numeric
    --max-positives 3 --seed 1)

# ---- errors caused by the data: where and which condition, never an aggregate ----
# dpselect_privacy_error(<name> <stderr regex> ARGS...)
function(dpselect_privacy_error name stderr_regex)
  dpselect_cli_test(privacy_${name} EXPECT_EXIT 2 STDERR_REGEX "${stderr_regex}"
    NOT_STDERR_REGEX "${private_markers}" ARGS ${ARGN})
endfunction()

# Once "got max |utility| 104988.123" (for price: the optimal revenue) and "shift or rescale
# them": epsilon is the problem.
string(CONCAT tiny_epsilon_regex "^dpselect: error: --epsilon is too small for double-precision "
  "noise on these utilities: the floating-point slack would reach --epsilon; use a larger "
  "--epsilon, or give a public bound on \\|utility\\| \\(--utility-bound\\) so that "
  "this is checked from the bound before any data is read\n$")
string(CONCAT tiny_epsilon_price_regex "^dpselect: error: --epsilon is too small for "
  "double-precision noise on these utilities: the floating-point slack would reach --epsilon; use "
  "a larger --epsilon, or give a public --max-bidders so that "
  "this is checked from the bound before any data is read\n$")
dpselect_privacy_error(select_tiny_epsilon "${tiny_epsilon_regex}"
  select --utilities privacy_utilities.txt --epsilon 1e-13 --sensitivity 1)
# topk hands the library the epsilon of one pick.
string(REPLACE "--epsilon" "--epsilon / --k" tiny_epsilon_per_pick_regex "${tiny_epsilon_regex}")
dpselect_privacy_error(topk_tiny_epsilon "${tiny_epsilon_per_pick_regex}"
  topk --utilities privacy_utilities.txt --epsilon 1e-13 --sensitivity 1 --k 1)
dpselect_privacy_error(rows_tiny_epsilon "${tiny_epsilon_regex}"
  rows --utilities privacy_utilities.txt --epsilon 1e-13 --sensitivity 1 --cols 2)
dpselect_privacy_error(price_grid_tiny_epsilon "${tiny_epsilon_price_regex}"
  price --bids privacy_bids.txt --epsilon 1e-13 ${privacy_grid})
dpselect_privacy_error(price_large_grid_tiny_epsilon "${tiny_epsilon_price_regex}"
  price --bids privacy_bids.txt --epsilon 1e-13 --grid 0.0625:150000:0.0625)
# Once the slack computed from the number of bids. One message whichever sampler ran: with the
# sampler chosen from the private number of bids (1013), a grid above 64 x 1014 prices is
# sampled by bid intervals and one below it per price, and the two refusals must not differ.
dpselect_privacy_error(price_range_tiny_epsilon "${tiny_epsilon_price_regex}"
  price --bids privacy_bids.txt --epsilon 1e-13 --range 0.0625:1500)
# A finite value beyond a public bound is data: named by its place, not quoted.
# (The command checks the bound as it reads the file; the library's own check, for C++ callers,
# names utilities[i] and does not quote the value either: validation_test.cpp.)
string(CONCAT utility_beyond_bound_regex "^dpselect: error: --utilities privacy_utilities\\.txt:4: "
  "utility must be within --utility-bound 50000 in magnitude\n$")
dpselect_privacy_error(select_utility_beyond_bound "${utility_beyond_bound_regex}"
  select ${privacy_select_args} --utility-bound 50000)
# With a public reference the bound is on |utility - reference|: 2718.5 is within 5000 of 2000,
# 104988.123 (line 4) is not.
dpselect_privacy_error(select_utility_beyond_bound_around_reference
  "^dpselect: error: --utilities privacy_utilities\\.txt:4: utility must be within --utility-bound 5000 of --utility-reference 2000\n$"
  select ${privacy_select_args} --utility-bound 5000 --utility-reference 2000)
dpselect_privacy_error(svt_query_beyond_value_bound
  "^dpselect: error: --queries privacy_queries\\.txt:5: query answer must be within --value-bound 50000 in magnitude\n$"
  ${privacy_svt_args} --value-bound 50000)
dpselect_privacy_error(quantile_tiny_epsilon
  "^dpselect: error: --epsilon is too small for double-precision noise on these data: the floating-point slack would reach --epsilon; use a larger --epsilon, or give a public --max-points so that this is checked from the bound before any data is read\n$"
  ${privacy_quantile_data} --q 0.5 --epsilon 1e-13 --neighbours add-remove)
# The number of values is private under add/remove neighbours: not in the message.
dpselect_privacy_error(quantile_more_values_than_max_points
  "^dpselect: error: --data privacy_utilities\\.txt: more values than --max-points 3\n$"
  ${privacy_quantile_args} --q 0.5 --neighbours add-remove --max-points 3)
# The count of bids is not compared with the bound in the message (refused by the library when
# the release starts, after the warning about --seed).
dpselect_privacy_error(price_more_bids_than_max_bidders
  "^dpselect: warning: --seed [^\n]*\ndpselect: error: bids must number at most --max-bidders 1000 \\(got more\\)\n$"
  ${privacy_price_args} ${privacy_grid} --max-bidders 1000)

# A raw file's size and a .npy shape give the number of bidders (1013; 8107 bytes).
dpselect_privacy_error(bids_raw_size_not_multiple
  "^dpselect: error: --bids privacy_bids_odd_size\\.f64: file size is not a multiple of 8 bytes \\(raw float64\\)\n$"
  price --bids privacy_bids_odd_size.f64 --epsilon 1 ${privacy_grid})
dpselect_privacy_error(bids_npy_truncated
  "^dpselect: error: --bids privacy_bids_truncated\\.npy: \\.npy data does not match its shape \\(truncated or extra bytes\\)\n$"
  price --bids privacy_bids_truncated.npy --epsilon 1 ${privacy_grid})

# ---- the answer first; a withheld slack names an option of its own command ----
dpselect_cli_test(answer_first_select STDOUT_REGEX "^index 3\nindex 3\n\ndpselect select: "
  ARGS select --utilities dominant.txt ${select_args} --repeat 2)
dpselect_cli_test(answer_first_topk STDOUT_REGEX "^indices 3, [0-9]+\n\ndpselect topk: "
  ARGS topk --utilities dominant.txt ${select_args} --k 2)
dpselect_cli_test(answer_first_rows STDOUT_REGEX "^indices 2, 0, 3\n\ndpselect rows: "
  ARGS ${rows_args} --cols 4)
dpselect_cli_test(answer_first_price STDOUT_REGEX "^price [0-9.]+\n\ndpselect price: "
  ARGS ${pumpkin_args} --grid 0.5:4:0.01 --seed 5)
# svt_queries.txt (see the svt tests): queries 3, 6 and 8 are above for every key.
dpselect_cli_test(answer_first_svt STDOUT_REGEX "^above 3, 6, 8\n\ndpselect svt: "
  ARGS ${svt_args} --max-positives 5)
dpselect_cli_test(answer_first_svt_numeric
  STDOUT_REGEX "^above 3 \\(value ${svt_value_regex}\\)\n\ndpselect svt: "
  ARGS ${svt_args} --numeric)
dpselect_cli_test(answer_first_svt_none STDOUT_REGEX "^above none\n\n"
  ARGS svt --queries svt_queries.txt --epsilon 1 --sensitivity 1 --threshold 50000)
dpselect_cli_test(svt_prints_no_stream NOT_STDOUT_REGEX "stream" ARGS ${svt_args})
dpselect_cli_test(withheld_hint_select STDOUT_REGEX "give a public bound \\(--utility-bound\\)"
  NOT_STDOUT_REGEX "max-bidders" ARGS select --utilities utilities.txt ${select_args})
dpselect_cli_test(withheld_hint_price STDOUT_REGEX "give a public bound \\(--max-bidders\\)"
  NOT_STDOUT_REGEX "utility-bound" ARGS ${pumpkin_args} --grid 1:4:0.5)
dpselect_cli_test(withheld_hint_svt STDOUT_REGEX "give a public bound \\(--value-bound\\)"
  NOT_STDOUT_REGEX "utility-bound" ARGS ${svt_args})
# Synthetic bids are no one's data: demo shows its timings without --diagnostics.
dpselect_cli_test(demo_shows_timings
  STDOUT_REGEX "NOT PRIVATE \\(synthetic data, for comparison only\\):\n.*  release 1:\n    seconds: "
  ARGS demo --prices 1000 --bidders 100)

# ---- --quiet: the released values, one per line; an empty line between multi-value releases ----
dpselect_cli_test(quiet_select STDOUT_REGEX "^3\n3\n3\n$"
  ARGS select --utilities dominant.txt ${select_args} --repeat 3 --quiet)
dpselect_cli_test(quiet_topk STDOUT_REGEX "^3\n[0-9]+\n\n3\n[0-9]+\n$"
  ARGS topk --utilities dominant.txt ${select_args} --k 2 --repeat 2 --quiet)
dpselect_cli_test(quiet_rows STDOUT_REGEX "^2\n0\n3\n\n2\n0\n3\n$"
  ARGS ${rows_args} --cols 4 --repeat 2 --quiet)
dpselect_cli_test(quiet_price STDOUT_REGEX "^[0-9.]+\n[0-9.]+\n$"
  ARGS ${pumpkin_args} --grid 0.5:4:0.01 --repeat 2 --quiet)
dpselect_cli_test(quiet_svt STDOUT_REGEX "^3\n6\n8\n$" ARGS ${svt_args} --max-positives 5 --quiet)
dpselect_cli_test(quiet_svt_numeric
  STDOUT_REGEX "^3 ${svt_value_regex}\n\n3 ${svt_value_regex}\n$"
  ARGS ${svt_args} --numeric --repeat 2 --quiet)
# A run with nothing above prints nothing (an empty block).
dpselect_cli_test(quiet_svt_none STDOUT_REGEX "^$"
  ARGS svt --queries svt_queries.txt --epsilon 1 --sensitivity 1 --threshold 50000 --quiet)
dpselect_cli_test(quiet_with_diagnostics_prints_only_values STDOUT_REGEX "^3\n$"
  ARGS select --utilities dominant.txt ${select_args} --quiet --diagnostics)
dpselect_cli_error(quiet_with_json "^dpselect: error: select: --json excludes --quiet \\(see dpselect select --help\\)\n$"
  select --utilities utilities.txt ${select_args} --quiet --json)
dpselect_cli_error(demo_has_no_diagnostics_option "--diagnostics" demo --diagnostics)

# Bid intervals always run on the CPU and per-price noise on the GPU when one is usable, so where
# a release ran would tell which sampler the private number of bids chose: withheld then.
dpselect_cli_test(privacy_price_backend_withheld_with_a_private_sampler
  STDOUT_REGEX "executed on: withheld  \\(which backend ran would tell which sampler"
  ARGS price --bids privacy_bids.txt --epsilon 1 --grid 0.0625:150000:0.0625)
dpselect_cli_test(privacy_price_backend_shown_with_a_public_sampler
  STDOUT_REGEX "executed on: (cpu|gpu)\n"
  ARGS price --bids privacy_bids.txt --epsilon 1 --grid 0.0625:150000:0.0625 --max-bidders 2000)

# A report that cannot be written is a failure (status 1), not a success: the release was made.
if(EXISTS /dev/full)
  dpselect_cli_test(report_lost_on_a_full_device EXPECT_EXIT 1 STDOUT_FILE /dev/full
    STDERR_REGEX "^dpselect: error: the release was made but its report could not be written to standard output: No space left on device\n$"
    ARGS select --utilities privacy_utilities.txt --epsilon 1 --sensitivity 1)
endif()
