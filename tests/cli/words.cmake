# SPDX-License-Identifier: Apache-2.0
# The command in its users' words: unknown names get a suggestion, errors name options as typed
# (not the library's C++ names), valid settings that offer little privacy get a warning, and the
# help says what --sensitivity and epsilon mean. Included by CMakeLists.txt, whose helpers and
# argument lists it uses. Messages are matched whole (^...\n$): each is the user's only guide.
# (No | in a regex: the helper splits arguments on it; "." stands for it.)

set(words_select select --utilities utilities.txt ${select_args})

# ---- unknown names ----
dpselect_cli_error(words_unknown_subcommand
  "^dpselect: error: unknown subcommand 'selct' \\(did you mean select\\?\\); the subcommands are select.topk.rows.price.svt.quantile.demo.audit\n$"
  selct --utilities utilities.txt)
dpselect_cli_error(words_no_subcommand
  "^dpselect: error: no subcommand given; usage: dpselect select.topk.rows.price.svt.quantile.demo.audit \\[options\\] \\(dpselect --help describes each\\)\n$")
dpselect_cli_error(words_unknown_option_typo
  "^dpselect: error: select: unknown option --epsilno \\(did you mean --epsilon\\?\\)\n$"
  select --utilities utilities.txt --epsilno 1 --sensitivity 1)
dpselect_cli_error(words_unknown_option_transposition
  "^dpselect: error: svt: unknown option --treshold \\(did you mean --threshold\\?\\)\n$"
  svt --queries svt_queries.txt --epsilon 1 --sensitivity 1 --treshold 5)
dpselect_cli_error(words_abbreviated_option
  "^dpselect: error: select: unknown option --eps \\(did you mean --epsilon\\?\\)\n$"
  ${words_select} --eps 2)
dpselect_cli_error(words_abbreviated_option_with_value
  "^dpselect: error: select: unknown option --sens \\(did you mean --sensitivity\\?\\)\n$"
  select --utilities utilities.txt --epsilon 1 --sens=1)
dpselect_cli_error(words_ambiguous_abbreviation
  "^dpselect: error: select: unknown option --m \\(did you mean --monotone or --mechanism\\?\\)\n$"
  ${words_select} --m)
# Reported before "--utilities is required", which it would otherwise hide behind.
dpselect_cli_error(words_unknown_option_before_missing_one
  "^dpselect: error: select: unknown option --eps \\(did you mean --epsilon\\?\\)\n$"
  select --eps 1)
dpselect_cli_error(words_option_of_another_subcommand
  "^dpselect: error: select: unknown option --k \\(an option of topk, not of select\\)\n$"
  ${words_select} --k 2)
dpselect_cli_error(words_option_before_subcommand
  "^dpselect: error: unknown option --epsilon \\(options go after the subcommand: dpselect select --epsilon ...\\)\n$"
  --epsilon 1 select --utilities utilities.txt --sensitivity 1)
dpselect_cli_error(words_unknown_option_far_from_all "^dpselect: error: price: unknown option --colour\n$"
  ${pumpkin_args} --grid 1:4:1 --colour red)
# A control byte typed into an argument comes back as \xNN, never raw: an escape sequence in an
# error line would act on the user's terminal (found by tests/fuzz/fuzz_command_line).
string(ASCII 27 escape)
dpselect_cli_error(words_control_byte_in_an_argument_is_escaped
  "^dpselect: error: select: unknown option --eps.x1b.0m\n$"  # "." for the backslash and the bracket
  ${words_select} "--eps${escape}[0m")
dpselect_cli_error(words_unexpected_argument
  "^dpselect: error: select: unexpected argument '2' \\(every value follows its option, as in --epsilon 1\\)\n$"
  ${words_select} 2)

# ---- library refusals, named as the options that caused them ----
dpselect_cli_error(words_utility_bound_too_large
  "^dpselect: error: --utility-bound must be small enough that the floating-point slack \\([0-9.e+]+\\) stays below --epsilon \\(got 1e\\+300\\)\n$"
  ${words_select} --utility-bound 1e300)
# topk gives the library the epsilon of one pick.
dpselect_cli_error(words_topk_utility_bound_too_large
  "^dpselect: error: --utility-bound must be small enough that the floating-point slack \\([0-9.e+]+\\) stays below --epsilon / --k \\(got 1e\\+300\\)\n$"
  ${topk_args} --k 2 --utility-bound 1e300)
dpselect_cli_error(words_utility_beyond_bound
  "^dpselect: error: --utilities dominant\\.txt:4: utility must be within --utility-bound 10 in magnitude\n$"
  select --utilities dominant.txt ${select_args} --utility-bound 10)
dpselect_cli_error(words_rows_utility_beyond_bound
  "^dpselect: error: --utilities rows_3x4\\.txt:[0-9]+: utility must be within --utility-bound 50 in magnitude"
  ${rows_args} --cols 4 --utility-bound 50)
# Refused by the library when the release starts, after the warning about --epsilon.
dpselect_cli_error(words_epsilon_over_sensitivity_overflows
  "^dpselect: warning: --epsilon 1e300 offers no privacy[^\n]*\ndpselect: error: --epsilon / \\(2 \\* --sensitivity\\) must be a positive normal double \\(got inf\\)\n$"
  select --utilities utilities.txt --epsilon 1e300 --sensitivity 1e-300)
dpselect_cli_error(words_svt_monotone_needs_lyu_su_li
  "^dpselect: error: --monotone applies to --algorithm lyu-su-li only \\(got --monotone with --algorithm dwork-roth\\)\n$"
  ${svt_args} --monotone)
dpselect_cli_error(words_svt_lyu_su_li_is_pure
  "^dpselect: error: --delta must be 0 for --algorithm lyu-su-li \\(a pure-DP algorithm\\) \\(got 0\\.5\\)\n$"
  ${svt_args} --algorithm lyu-su-li --delta 0.5)
dpselect_cli_error(words_svt_numeric_max_positives
  "^dpselect: error: --max-positives must be <= 2\\^43 with --numeric \\(got 10000000000000000\\)\n$"
  ${svt_args} --numeric --max-positives 10000000000000000)
dpselect_cli_error(words_price_range_backend_gpu
  "^dpselect: error: --backend must be cpu or auto for --range or --grid-sampler bid-intervals, which runs on the CPU in O\\(bids\\) work \\(got gpu\\)\n$"
  ${pumpkin_args} --range 1:4 --backend gpu)
dpselect_cli_error(words_price_bid_intervals_mechanism
  "^dpselect: error: --mechanism must be exponential for --range or --grid-sampler bid-intervals \\(got laplace\\)\n$"
  ${pumpkin_args} --grid 1:4:1 --grid-sampler bid-intervals --mechanism laplace)
dpselect_cli_error(words_audit_confidence "^dpselect: error: --confidence must be in \\(0, 1\\) \\(got 1\\)\n$"
  audit --confidence 1 --only exponential)
if(NOT DPSELECT_HAS_CUDA)
  # Status 1: the input is fine, this build cannot run it.
  dpselect_cli_test(words_backend_gpu_unavailable EXPECT_EXIT 1
    STDERR_REGEX "^dpselect: error: --backend gpu requested but this build has no CUDA backend\n$"
    ARGS ${words_select} --backend gpu)
endif()

# ---- warnings: the release still happens ----
dpselect_cli_test(words_epsilon_no_privacy
  STDOUT_REGEX "index: [0-9]+"
  STDERR_REGEX "^dpselect: warning: --epsilon 1e300 offers no privacy: noise this small hides no one \\(typical values are 0\\.1 to 5\\)\n$"
  ARGS select --utilities utilities.txt --epsilon 1e300 --sensitivity 1)
dpselect_cli_test(words_epsilon_little_privacy
  STDERR_REGEX "^dpselect: warning: --epsilon 20 offers almost no privacy: one person may change the odds of any output by a factor up to e\\^20 \\(typical values are 0\\.1 to 5\\)\n$"
  ARGS topk --utilities utilities.txt --k 2 --epsilon 20 --sensitivity 1)
dpselect_cli_test(words_repeat_epsilon_total
  STDERR_REGEX "^dpselect: warning: --repeat 10 with --epsilon 2 spends epsilon 20 in total, which offers almost no privacy \\(typical values are 0\\.1 to 5\\)\n$"
  ARGS select --utilities utilities.txt --epsilon 2 --sensitivity 1 --repeat 10)
dpselect_cli_test(words_svt_delta_large
  STDOUT_REGEX "above: 3"
  STDERR_REGEX "^dpselect: warning: --delta 0\\.5 is large: a delta this large permits releasing a record outright \\(use well below 1/n for n people, e\\.g\\. 1e-6\\)\n$"
  ARGS ${svt_args} --delta 0.5)
dpselect_cli_test(words_svt_repeat_delta_total
  STDERR_REGEX "^dpselect: warning: --repeat 5 with --delta 0\\.0005 spends delta 0\\.0025 in total: a delta this large"
  ARGS ${svt_args} --delta 0.0005 --repeat 5)
# Typical settings: nothing on stderr.
dpselect_cli_test(words_typical_settings_no_warning STDERR_REGEX "^$"
  ARGS svt --queries svt_queries.txt --epsilon 5 --sensitivity 1 --threshold 5000 --delta 1e-6
    --repeat 2)
# An error about the input stays the only line: the warnings come once the input is read and
# checked, just before the first release.
dpselect_cli_error(words_no_warning_on_error "^dpselect: error: --utilities missing\\.txt: cannot open"
  select --utilities missing.txt --epsilon 1e300 --sensitivity 1)

# ---- help ----
set(words_neighbours_regex
  "the most one person's data can change any candidate's utility: between neighbouring datasets \\(the same but for one person's records\\)")
foreach(command select topk rows)
  dpselect_cli_test(words_${command}_help_explains_sensitivity STDOUT_REGEX "${words_neighbours_regex}"
    ARGS ${command} --help)
endforeach()
dpselect_cli_test(words_svt_help_explains_sensitivity
  STDOUT_REGEX "the most one person's data can change any query answer: between neighbouring datasets"
  ARGS svt --help)
string(CONCAT words_epsilon_regex "What epsilon means: adding, removing or changing one person's records changes the\n"
  "probability of any output by at most a factor e\\^epsilon.*Typical values: 0\\.1 to 1 strong privacy, 1 to 5 moderate; above 10 almost none")
dpselect_cli_test(words_quantile_help_explains_neighbours
  STDOUT_REGEX "what one person's data is: one value replaced \\(the number of values is public\\) or one value added or removed"
  ARGS quantile --help)
foreach(command select topk rows price svt quantile demo)
  dpselect_cli_test(words_${command}_help_explains_epsilon STDOUT_REGEX "${words_epsilon_regex}"
    ARGS ${command} --help)
endforeach()
