# SPDX-License-Identifier: Apache-2.0
# Runs the dpselect command and checks its exit status and output (cmake -P, no other tools).
#   -DCLI=<binary> -DARGS=<arguments separated by |>
#   -DINPUT_FILE=<file>        standard input of the ARGS run (not of the COMPARE_ARGS run);
#                              default: none given
#   -DSTDOUT_FILE=<file>       standard output of the ARGS run goes there (/dev/full: a failed
#                              write); stdout then reads as empty
#   -DEXPECT_EXIT=<status>     default 0. A non-zero status also requires an empty stdout (nothing
#                              released) and exactly one stderr line starting "dpselect: error: ",
#                              the last, after nothing but "dpselect: warning: " lines (printed
#                              before the first release, so a refusal during it follows them; a
#                              refusal of the input comes before them: tests anchor it at ^).
#   -DSTDOUT_REGEX=<regex>     stdout must match
#   -DNOT_STDOUT_REGEX=<regex> stdout must not match
#   -DSTDERR_REGEX=<regex>     stderr must match
#   -DNOT_STDERR_REGEX=<regex> stderr must not match ("." : stderr must be empty)
#   -DWRITTEN_FILE=<path>      removed before the run; the run must create it
#   -DWRITTEN_FILE_REGEX=<regex>      ... and its text must match
#   -DWRITTEN_FILE_HEX_REGEX=<regex>  ... and its bytes, as lower-case hex, must match
#   -DPREEXISTING_FILE=<path>  written ("existing contents") before the run; must be unchanged after
#   -DNO_FILES_MATCHING=<glob> no file may match it after the run (e.g. a temporary file left behind)
#   -DJSON_MEMBERS=<a|b|...>   stdout must parse as JSON with these members: top-level names,
#                              or paths with / between names and array indices (releases/0/index)
#   -DCOMPARE_ARGS=<a|b|...> -DCOMPARE_REGEX=<regex>
#                              run again with COMPARE_ARGS; every match of COMPARE_REGEX in the
#                              two stdouts must agree (e.g. the released indices)
cmake_minimum_required(VERSION 3.25)

if(NOT DEFINED EXPECT_EXIT)
  set(EXPECT_EXIT 0)
endif()

# Extra arguments are passed on to execute_process (INPUT_FILE <file>).
function(run_cli argument_text out_stdout out_stderr out_status)
  string(REPLACE "|" ";" arguments "${argument_text}")
  execute_process(COMMAND "${CLI}" ${arguments} ${ARGN}
    RESULT_VARIABLE status OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  set(${out_stdout} "${stdout}" PARENT_SCOPE)
  set(${out_stderr} "${stderr}" PARENT_SCOPE)
  set(${out_status} "${status}" PARENT_SCOPE)
endfunction()

function(fail message)
  message(FATAL_ERROR
    "${message}\n--- command: ${CLI} ${ARGS}\n--- stdout:\n${stdout}\n--- stderr:\n${stderr}")
endfunction()

if(DEFINED WRITTEN_FILE)
  file(REMOVE "${WRITTEN_FILE}")
endif()
set(preexisting_contents "existing contents\n")
if(DEFINED PREEXISTING_FILE)
  file(WRITE "${PREEXISTING_FILE}" "${preexisting_contents}")
endif()

set(redirections "")
if(DEFINED INPUT_FILE)
  list(APPEND redirections INPUT_FILE "${INPUT_FILE}")
endif()
if(DEFINED STDOUT_FILE)
  list(APPEND redirections OUTPUT_FILE "${STDOUT_FILE}")
endif()
run_cli("${ARGS}" stdout stderr status ${redirections})
if(NOT status STREQUAL EXPECT_EXIT)
  fail("exit status ${status}, expected ${EXPECT_EXIT}")
endif()

if(NOT EXPECT_EXIT EQUAL 0)
  if(NOT stdout STREQUAL "")
    fail("a failed run printed on stdout")
  endif()
  set(error_lines "${stderr}")
  while(error_lines MATCHES "^dpselect: warning: [^\n]*\n")
    string(LENGTH "${CMAKE_MATCH_0}" warning_length)
    string(SUBSTRING "${error_lines}" ${warning_length} -1 error_lines)
  endwhile()
  string(REGEX MATCHALL "\n" stderr_line_ends "${error_lines}")
  list(LENGTH stderr_line_ends stderr_lines)
  if(NOT error_lines MATCHES "^dpselect: error: " OR NOT stderr_lines EQUAL 1)
    fail("stderr must be exactly one line starting 'dpselect: error: ', after warnings only")
  endif()
endif()

if(DEFINED NOT_STDOUT_REGEX AND stdout MATCHES "${NOT_STDOUT_REGEX}")
  fail("stdout matches '${NOT_STDOUT_REGEX}', which it must not")
endif()
if(DEFINED STDOUT_REGEX AND NOT stdout MATCHES "${STDOUT_REGEX}")
  fail("stdout does not match '${STDOUT_REGEX}'")
endif()
if(DEFINED STDERR_REGEX AND NOT stderr MATCHES "${STDERR_REGEX}")
  fail("stderr does not match '${STDERR_REGEX}'")
endif()
if(DEFINED NOT_STDERR_REGEX AND stderr MATCHES "${NOT_STDERR_REGEX}")
  fail("stderr matches '${NOT_STDERR_REGEX}', which it must not")
endif()

if(DEFINED WRITTEN_FILE)
  if(NOT EXISTS "${WRITTEN_FILE}")
    fail("the run did not create ${WRITTEN_FILE}")
  endif()
  if(DEFINED WRITTEN_FILE_REGEX)
    file(READ "${WRITTEN_FILE}" written)
    if(NOT written MATCHES "${WRITTEN_FILE_REGEX}")
      fail("${WRITTEN_FILE} holds '${written}', which does not match '${WRITTEN_FILE_REGEX}'")
    endif()
  endif()
  if(DEFINED WRITTEN_FILE_HEX_REGEX)
    file(READ "${WRITTEN_FILE}" written HEX)
    if(NOT written MATCHES "${WRITTEN_FILE_HEX_REGEX}")
      fail("${WRITTEN_FILE} holds (hex) ${written}, which does not match '${WRITTEN_FILE_HEX_REGEX}'")
    endif()
  endif()
endif()
if(DEFINED PREEXISTING_FILE)
  file(READ "${PREEXISTING_FILE}" kept)
  if(NOT kept STREQUAL preexisting_contents)
    fail("${PREEXISTING_FILE} was changed to '${kept}'")
  endif()
endif()

if(DEFINED NO_FILES_MATCHING)
  file(GLOB left_behind LIST_DIRECTORIES true "${NO_FILES_MATCHING}")
  if(left_behind)
    fail("the run left ${left_behind} behind")
  endif()
endif()

if(DEFINED JSON_MEMBERS)
  string(REPLACE "|" ";" members "${JSON_MEMBERS}")
  foreach(member IN LISTS members)
    string(REPLACE "/" ";" member_path "${member}")
    string(JSON value ERROR_VARIABLE json_error GET "${stdout}" ${member_path})
    if(json_error)
      fail("JSON member '${member}': ${json_error}")
    endif()
  endforeach()
endif()

if(DEFINED COMPARE_ARGS)
  string(REGEX MATCHALL "${COMPARE_REGEX}" expected "${stdout}")
  set(first_stdout "${stdout}")
  run_cli("${COMPARE_ARGS}" stdout stderr status)
  string(REGEX MATCHALL "${COMPARE_REGEX}" compared "${stdout}")
  if(NOT status EQUAL 0 OR expected STREQUAL "" OR NOT expected STREQUAL compared)
    fail("'${COMPARE_REGEX}' matched '${expected}' in the first run but '${compared}' in the "
         "run with ${COMPARE_ARGS} (status ${status})")
  endif()
endif()
