# SPDX-License-Identifier: Apache-2.0
# Inputs as people have them (included by CMakeLists.txt, whose helpers and argument lists it
# uses). A file read right gives the same released indices as utilities.txt for the same seed;
# a file refused gives exactly one message, anchored at both ends so that no stray (binary)
# bytes can hide in it. (A ';' in a message is matched by '.': the test helpers pass lists.)

set(same_as_utilities_txt select --utilities utilities.txt ${select_args} --seed 7 --repeat 8 --json)
# dpselect_input_agrees(<name> [INPUT_FILE <file>] ARGS <dpselect select arguments>): the same
# indices as utilities.txt.
function(dpselect_input_agrees name)
  dpselect_cli_test(${name} COMPARE_REGEX "${index_regex}" ${ARGN}
    COMPARE_ARGS ${same_as_utilities_txt})
endfunction()
# dpselect_input_error(<name> <message> <arguments>... [INPUT_FILE <file>]): exactly
# "dpselect: error: <message>" (INPUT_FILE, a keyword of dpselect_cli_test, may end the list).
function(dpselect_input_error name message)
  dpselect_cli_error(${name} "^dpselect: error: ${message}\n$" ${ARGN})
endfunction()

set(agree_args ${select_args} --seed 7 --repeat 8 --json)
set(looks_binary "looks binary, not text. give its format with --format f32, f64 or npy")

# ---- text as editors and exporters write it ----
dpselect_input_agrees(inputs_byte_order_mark ARGS select --utilities utilities_bom.txt ${agree_args})
dpselect_input_agrees(inputs_crlf_line_ends ARGS select --utilities utilities_crlf.txt ${agree_args})
dpselect_input_agrees(inputs_plus_signs ARGS select --utilities utilities_plus.txt ${agree_args})
set(one_number_a_line "a line holds one number \\(such as 12, -0\\.5 or 1e3\\), a # comment, or nothing")
dpselect_input_error(inputs_plus_minus_refused
  "--utilities plus_minus\\.txt:2: not a number at column 1. ${one_number_a_line}"
  select --utilities plus_minus.txt ${select_args})

# ---- binary data given as text: refused without echoing its bytes ----
dpselect_input_error(inputs_control_bytes_look_binary
  "--utilities binary_garbage\\.txt:1: ${looks_binary}"
  select --utilities binary_garbage.txt ${select_args})
# Raw float64 data holds NUL bytes.
dpselect_input_error(inputs_raw_f64_as_text_looks_binary
  "--utilities utilities\\.f64:1: ${looks_binary}"
  select --utilities utilities.f64 --format text ${select_args})
# Text that is not a number is not quoted (it is data): its line and the column where the number
# stops say where it is.
dpselect_input_error(inputs_non_ascii_line_not_quoted
  "--utilities euro_sign\\.txt:2: not a number at column 2. ${one_number_a_line}"
  select --utilities euro_sign.txt ${select_args})

# ---- file names ----
dpselect_input_agrees(inputs_upper_case_f32_extension
  ARGS select --utilities upper_case.F32 ${agree_args})
# Read as .npy (by the extension, without regard to case), not as text: text_named.NPY holds text.
dpselect_input_error(inputs_upper_case_npy_extension
  "--utilities text_named\\.NPY: not a \\.npy file \\(bad magic\\)"
  select --utilities text_named.NPY ${select_args})
# A .npy is recognised by its magic bytes whatever it is called...
dpselect_input_agrees(inputs_renamed_npy ARGS select --utilities utilities_npy.txt ${agree_args})
# ...unless --format says text, which it could never be.
string(CONCAT renamed_npy_as_text "--utilities utilities_npy\\.txt: a NumPy \\.npy file \\(by its "
  "magic bytes\\), not text. use --format npy or leave --format out")
dpselect_input_error(inputs_renamed_npy_format_text "${renamed_npy_as_text}"
  select --utilities utilities_npy.txt --format text ${select_args})

# ---- standard input ----
dpselect_input_agrees(inputs_stdin_text INPUT_FILE utilities.txt
  ARGS select --utilities - ${agree_args})
dpselect_input_agrees(inputs_stdin_npy INPUT_FILE utilities.npy
  ARGS select --utilities - ${agree_args})
dpselect_input_agrees(inputs_stdin_raw_f32 INPUT_FILE utilities.f32
  ARGS select --utilities - --format f32 ${agree_args})
# Standard input has no extension to tell raw data by.
dpselect_input_error(inputs_stdin_raw_needs_format "--utilities <stdin>:1: ${looks_binary}"
  select --utilities - ${select_args} INPUT_FILE utilities.f64)
dpselect_cli_test(inputs_stdin_error_line EXPECT_EXIT 2 INPUT_FILE malformed.txt
  STDERR_REGEX "^dpselect: error: --utilities <stdin>:3: not a number at column 1. ${one_number_a_line}\n$"
  ARGS select --utilities - ${select_args})
dpselect_cli_test(inputs_stdin_bids INPUT_FILE pumpkin_bids.txt
  STDOUT_REGEX "optimal price: 1\n  optimal revenue: 4\n"
  ARGS ${price_args} --bids - --grid 0.5:4:0.01 --diagnostics)
dpselect_cli_test(inputs_stdin_queries INPUT_FILE svt_queries.txt
  STDOUT_REGEX "\"above\": \\[3\\],"
  ARGS svt --queries - --epsilon 1 --sensitivity 1 --threshold 5000 --json)
string(CONCAT stdin_twice_message "--bids and --prices both read standard input \\('-'\\), "
  "which can be read only once. give files to all but one")
dpselect_input_error(inputs_stdin_twice "${stdin_twice_message}" ${price_args} --bids - --prices -)

# ---- 2-D arrays: refused where one list is expected, unless --flatten ----
set(use_rows "use 'dpselect rows' for one pick per row, or")
set(flatten_hint "--flatten to read it row after row as one list")
dpselect_input_error(inputs_2d_select_refused
  "--utilities utilities_2d\\.npy: a 2-D array. ${use_rows} ${flatten_hint}"
  select --utilities utilities_2d.npy ${select_args})
dpselect_input_error(inputs_2d_topk_refused
  "--utilities utilities_2d\\.npy: a 2-D array. ${use_rows} ${flatten_hint}"
  topk --utilities utilities_2d.npy --k 2 ${select_args})
dpselect_input_error(inputs_2d_stdin_refused
  "--utilities <stdin>: a 2-D array. ${use_rows} ${flatten_hint}"
  select --utilities - ${select_args} INPUT_FILE utilities_2d.npy)
dpselect_input_error(inputs_2d_svt_refused
  "--queries svt_queries_2x5\\.npy: a 2-D array. use ${flatten_hint}"
  svt --queries svt_queries_2x5.npy --epsilon 1 --sensitivity 1 --threshold 5000)
dpselect_input_error(inputs_2d_bids_refused
  "--bids rows_3x4\\.npy: a 2-D array. use ${flatten_hint}"
  ${price_args} --bids rows_3x4.npy --grid 1:4:1)
dpselect_input_error(inputs_2d_prices_refused
  "--prices rows_3x4\\.npy: a 2-D array. use ${flatten_hint}"
  ${pumpkin_args} --prices rows_3x4.npy)
dpselect_input_agrees(inputs_2d_select_flatten
  ARGS select --utilities utilities_2d.npy --flatten ${agree_args})
dpselect_cli_test(inputs_2d_topk_flatten COMPARE_REGEX "${indices_regex}"
  ARGS topk --utilities utilities_2d.npy --flatten --k 5 ${agree_args}
  COMPARE_ARGS topk --utilities utilities.txt --k 5 ${agree_args})
# Flattened in C order, the queries above the threshold keep their indices 3, 6 and 8 (in
# Fortran order they would be 3, 6 and 7).
dpselect_cli_test(inputs_2d_svt_flatten
  STDOUT_REGEX "\"shape\": \"\\(2, 5\\)\",.*\"above\": \\[3, 6, 8\\],\n      \"queries_answered\": 10,"
  ARGS svt --queries svt_queries_2x5.npy --flatten --epsilon 1 --sensitivity 1 --threshold 5000
    --max-positives 5 --json)
# rows works on the matrix itself: it has no --flatten.
dpselect_cli_error(inputs_rows_has_no_flatten "--flatten"
  rows --utilities rows_3x4.npy ${select_args} --flatten)

# ---- 1-D data to rows ----
string(CONCAT rows_1d_message "--cols is required: --utilities utilities\\.npy is a 1-D array "
  "\\(16,\\). give --cols, or use 'dpselect select' for one pick among all its values")
dpselect_input_error(inputs_rows_1d_without_cols "${rows_1d_message}"
  rows --utilities utilities.npy ${select_args})
dpselect_cli_test(inputs_rows_1d_with_cols COMPARE_REGEX "${indices_regex}"
  ARGS rows --utilities utilities.npy --cols 4 ${agree_args}
  COMPARE_ARGS rows --utilities utilities.txt --cols 4 ${agree_args})
