# SPDX-License-Identifier: Apache-2.0
# Malformed inputs never echo the data: every reader of every subcommand that reads a file (text,
# raw, .npy, CSV) is given files whose offending line, field or header holds the marker
# SECRET-MARKER-7f3a (data/make_fixtures.py), and must fail with one error naming the place
# (file:line, column, element) and what was expected, with the marker on neither stream. A
# positive control shows the marker regex matching the marker where it is legitimately printed
# (a released key). Then: released keys are escaped in text output (output.hpp).
# Included by CMakeLists.txt, whose helpers and argument lists it uses. (No | or ; in a regex:
# the helper splits arguments on them; "." stands for them.)

# '.' for the '-' or '_' between the words (the NaN payload name of marker_nan.txt takes no '-').
set(marker "SECRET.MARKER.7f3a")

# dpselect_marker_error(<name> <stderr regex> ARGS...): status 2, one error line matching the
# regex, and no marker on stdout or stderr.
function(dpselect_marker_error name stderr_regex)
  dpselect_cli_test(marker_${name} EXPECT_EXIT 2 STDERR_REGEX "${stderr_regex}"
    NOT_STDERR_REGEX "${marker}" NOT_STDOUT_REGEX "${marker}" ARGS ${ARGN})
endfunction()

# ---- numbers: every option that reads a list of numbers, each with every malformed input ----
# The subcommand's arguments, the file's option last.
set(marker_reader_select select ${select_args} --utilities)
set(marker_reader_topk topk ${select_args} --k 1 --utilities)
set(marker_reader_rows rows ${select_args} --cols 1 --utilities)
set(marker_reader_svt svt --epsilon 1 --sensitivity 1 --threshold 0 --queries)
set(marker_reader_quantile quantile --epsilon 1 --range 0:10 --q 0.5 --data)
set(marker_reader_bids price --epsilon 1 --grid 1:4:1 --bids)
set(marker_reader_prices price --epsilon 1 --bids pumpkin_bids.txt --prices)
set(marker_readers select topk rows svt quantile bids prices)

# Each file, and what its message says after the file's name.
set(marker_number_files
  marker_word.txt marker_number_then_text.txt marker_cr_only.txt marker_comment_cr_only.txt
  marker_out_of_range.txt marker_nan.txt marker_control_bytes.txt marker_nul.txt
  marker_odd_size.f64 marker_odd_size.f32 marker_npy_descr.npy marker_npy_shape.npy
  marker_npy_fortran_order.npy marker_npy_no_descr.npy)
set(one_number_a_line "a line holds one number \\(such as 12, -0\\.5 or 1e3\\), a # comment, or nothing")
set(bare_cr "a carriage return \\(CR\\) not followed by a line feed")
set(marker_message_marker_word.txt ":3: not a number at column 1. ${one_number_a_line}")
set(marker_message_marker_number_then_text.txt ":2: not a number at column 3. ${one_number_a_line}")
set(marker_message_marker_cr_only.txt
  ":1: ${bare_cr} at column 2. lines end with LF or CRLF \\(convert CR-only line ends\\)")
set(marker_message_marker_comment_cr_only.txt ":1: ${bare_cr} at column 21. ")
set(marker_message_marker_out_of_range.txt ":2: number out of the range of double at column 1")
set(marker_message_marker_nan.txt ":2: [a-z ]+ must [^\n]*\\(got 'nan'\\)")
set(marker_message_marker_control_bytes.txt ":2: looks binary, not text")
set(marker_message_marker_nul.txt ":2: looks binary, not text")
set(marker_message_marker_odd_size.f64 ": file size is not a multiple of 8 bytes \\(raw float64\\)")
set(marker_message_marker_odd_size.f32 ": file size is not a multiple of 4 bytes \\(raw float32\\)")
set(marker_message_marker_npy_descr.npy
  ": unsupported \\.npy dtype \\(expected '<f4', '<f8', '<i4' or '<i8'\\)")
set(marker_message_marker_npy_shape.npy ": malformed \\.npy shape")
set(marker_message_marker_npy_fortran_order.npy ": malformed \\.npy fortran_order")
set(marker_message_marker_npy_no_descr.npy ": \\.npy header has no 'descr'")

foreach(reader IN LISTS marker_readers)
  foreach(file IN LISTS marker_number_files)
    string(REPLACE "." "\\." file_regex "${file}")
    dpselect_marker_error(${reader}_${file} "^dpselect: error: --[a-z]+ ${file_regex}${marker_message_${file}}[^\n]*\n$"
      ${marker_reader_${reader}} ${file})
  endforeach()
endforeach()
# Standard input: named <stdin>, the line and column as for a file.
dpselect_cli_test(marker_stdin_word EXPECT_EXIT 2 INPUT_FILE marker_word.txt
  STDERR_REGEX "^dpselect: error: --utilities <stdin>:3: not a number at column 1. ${one_number_a_line}\n$"
  NOT_STDERR_REGEX "${marker}" ARGS select --utilities - ${select_args})

# ---- (user, key) pairs: dpselect keys ----
set(marker_keys keys --epsilon 1 --delta 1e-6 --data)
# A file without a header line: its first record is data, so the names found are not quoted.
string(CONCAT no_header_message "^dpselect: error: --data marker_keys_no_header\\.csv:1: no column 'user' "
  "\\(--user-column\\) among the 2 columns of the header line. the first line must name the "
  "columns 'user' and 'key' \\(--user-column, --key-column\\)\n$")
dpselect_marker_error(keys_no_header "${no_header_message}" ${marker_keys} marker_keys_no_header.csv)
# CR-only line ends: once the whole file in the message.
string(CONCAT keys_cr_only_message "^dpselect: error: --data marker_keys_cr_only\\.csv:1: column 2: "
  "${bare_cr} outside quotes. CSV lines end with LF or CRLF \\(convert CR-only line ends\\), and "
  "a field holding a CR must be quoted\n$")
dpselect_marker_error(keys_cr_only "${keys_cr_only_message}" ${marker_keys} marker_keys_cr_only.csv)
dpselect_marker_error(keys_text_users_cr_only "${keys_cr_only_message}"
  ${marker_keys} marker_keys_cr_only.csv --user-ids text)
dpselect_marker_error(keys_bad_user
  "^dpselect: error: --data marker_keys_bad_user\\.csv:2: the user id \\(column 'user'\\) is not an integer"
  ${marker_keys} marker_keys_bad_user.csv)
dpselect_marker_error(keys_integer_key
  "^dpselect: error: --data marker_keys_integer_key\\.csv:2: the key \\(column 'key'\\) is not an integer"
  ${marker_keys} marker_keys_integer_key.csv --key-type integer)
dpselect_marker_error(keys_ragged
  "^dpselect: error: --data marker_keys_ragged\\.csv:2: 3 fields, but the header has 2\n$"
  ${marker_keys} marker_keys_ragged.csv)
dpselect_marker_error(keys_quote_inside
  "^dpselect: error: --data marker_keys_quote_inside\\.csv:2: column 2: a double quote inside a field that is not quoted\n$"
  ${marker_keys} marker_keys_quote_inside.csv)
dpselect_marker_error(keys_after_quote
  "^dpselect: error: --data marker_keys_after_quote\\.csv:2: column 2: text after the closing quote of a field\n$"
  ${marker_keys} marker_keys_after_quote.csv)
dpselect_marker_error(keys_unclosed
  "^dpselect: error: --data marker_keys_unclosed\\.csv:2: column 2: a quoted field is not closed\n$"
  ${marker_keys} marker_keys_unclosed.csv)
dpselect_marker_error(keys_bad_utf8
  "^dpselect: error: --data marker_keys_bad_utf8\\.csv:2: the key \\(column 'key'\\) is not valid UTF-8\n$"
  ${marker_keys} marker_keys_bad_utf8.csv)
dpselect_marker_error(keys_nul "^dpselect: error: --data marker_keys_nul\\.csv: holds a NUL byte: not CSV text"
  ${marker_keys} marker_keys_nul.csv)
dpselect_marker_error(keys_duplicate_column
  "^dpselect: error: --data marker_keys_duplicate_column\\.csv:1: the header names the column 'user' twice \\(--user-column\\), as columns 1 and 3\n$"
  ${marker_keys} marker_keys_duplicate_column.csv)
dpselect_marker_error(keys_header_only "^dpselect: error: --data marker_keys_header_only\\.csv: no \\(user, key\\) pairs\n$"
  ${marker_keys} marker_keys_header_only.csv)
dpselect_marker_error(keys_npy_descr
  "^dpselect: error: --data marker_keys_npy_descr\\.npy: unsupported \\.npy dtype for pairs \\(expected "
  ${marker_keys} marker_keys_npy_descr.npy)
dpselect_marker_error(keys_npy_shape "^dpselect: error: --data marker_npy_shape\\.npy: malformed \\.npy shape\n$"
  ${marker_keys} marker_npy_shape.npy)
# Numbers given as pairs: the CR-only text is refused at its first CR.
dpselect_marker_error(keys_numbers_cr_only "^dpselect: error: --data marker_cr_only\\.txt:1: column 1: ${bare_cr}"
  ${marker_keys} marker_cr_only.txt)

# The positive control: the marker regex matches the marker as the command prints a released key.
set(marker_released_args keys --data marker_keys_released.csv --epsilon 1 --delta 1e-6 --seed 1)
dpselect_cli_test(marker_regex_matches_a_released_key STDOUT_REGEX "^keys SECRET-MARKER-7f3a, "
  ARGS ${marker_released_args})

# ---- released keys in text output: escaped for the terminal ----
# The key "wipe ESC [ 2 J LF line" is a quoted CSV field on the answer line and written with \x1b
# and \x0a; "back\slash" has its backslash doubled. No ESC byte reaches stdout: the report is
# printable ASCII and line feeds only. (An ESC byte in a test's argument would break its list,
# and so would an unbalanced bracket: "." stands for the "[" of ESC [ 2 J.)
set(not_printable "[^ -~\n]")
string(CONCAT escaped_keys_regex "^keys SECRET-MARKER-7f3a, back\\\\\\\\slash, \"wipe\\\\x1b.2J\\\\x0aline\"\n\n"
  ".*  keys: SECRET-MARKER-7f3a, back\\\\\\\\slash, wipe\\\\x1b.2J\\\\x0aline  \\(ascending\\)\n")
dpselect_cli_test(keys_text_escapes_control_characters STDOUT_REGEX "${escaped_keys_regex}"
  NOT_STDOUT_REGEX "${not_printable}" ARGS ${marker_released_args})
# JSON escapes by its own rules (ESC and LF as \u001b and \u000a), as before.
dpselect_cli_test(keys_json_escapes_control_characters
  STDOUT_REGEX "\"keys\": \\[\"SECRET-MARKER-7f3a\", \"back\\\\\\\\slash\", \"wipe\\\\u001b.2J\\\\u000aline\"\\]"
  NOT_STDOUT_REGEX "${not_printable}" ARGS ${marker_released_args} --json)
