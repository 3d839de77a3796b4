# Runs the dpselect command and checks its exit status and output (cmake -P, no other tools).
#   -DCLI=<binary> -DARGS=<arguments separated by |>
#   -DEXPECT_EXIT=<status>     default 0. A non-zero status also requires an empty stdout (nothing
#                              released) and exactly one stderr line starting "dpselect: error: ".
#   -DSTDOUT_REGEX=<regex>     stdout must match
#   -DNOT_STDOUT_REGEX=<regex> stdout must not match
#   -DSTDERR_REGEX=<regex>     stderr must match
#   -DNOT_STDERR_REGEX=<regex> stderr must not match
#   -DJSON_MEMBERS=<a|b|...>   stdout must parse as JSON with these members: top-level names,
#                              or paths with / between names and array indices (releases/0/index)
#   -DCOMPARE_ARGS=<a|b|...> -DCOMPARE_REGEX=<regex>
#                              run again with COMPARE_ARGS; every match of COMPARE_REGEX in the
#                              two stdouts must agree (e.g. the released indices)
cmake_minimum_required(VERSION 3.25)

if(NOT DEFINED EXPECT_EXIT)
  set(EXPECT_EXIT 0)
endif()

function(run_cli argument_text out_stdout out_stderr out_status)
  string(REPLACE "|" ";" arguments "${argument_text}")
  execute_process(COMMAND "${CLI}" ${arguments}
    RESULT_VARIABLE status OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  set(${out_stdout} "${stdout}" PARENT_SCOPE)
  set(${out_stderr} "${stderr}" PARENT_SCOPE)
  set(${out_status} "${status}" PARENT_SCOPE)
endfunction()

function(fail message)
  message(FATAL_ERROR
    "${message}\n--- command: ${CLI} ${ARGS}\n--- stdout:\n${stdout}\n--- stderr:\n${stderr}")
endfunction()

run_cli("${ARGS}" stdout stderr status)
if(NOT status STREQUAL EXPECT_EXIT)
  fail("exit status ${status}, expected ${EXPECT_EXIT}")
endif()

if(NOT EXPECT_EXIT EQUAL 0)
  if(NOT stdout STREQUAL "")
    fail("a failed run printed on stdout")
  endif()
  string(REGEX MATCHALL "\n" stderr_line_ends "${stderr}")
  list(LENGTH stderr_line_ends stderr_lines)
  if(NOT stderr MATCHES "^dpselect: error: " OR NOT stderr_lines EQUAL 1)
    fail("stderr must be exactly one line starting 'dpselect: error: '")
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
