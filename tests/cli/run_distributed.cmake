# SPDX-License-Identifier: Apache-2.0
# Runs the dpselect command once as one process and once under mpiexec, and requires the same
# exit status, the same standard output byte for byte, and the same error line (cmake -P).
#   -DCLI=<binary> -DMPIEXEC=<launcher> -DRANKS=<n> -DARGS=<arguments separated by |>
#   -DEXPECT_EXIT=<status>  default 0: stdout must then be non-empty; otherwise stdout must be
#                           empty and stderr must hold one "dpselect: error: " line, the same.
cmake_minimum_required(VERSION 3.25)
if(NOT DEFINED EXPECT_EXIT)
  set(EXPECT_EXIT 0)
endif()
string(REPLACE "|" ";" arguments "${ARGS}")

execute_process(COMMAND "${CLI}" ${arguments}
  RESULT_VARIABLE single_status OUTPUT_VARIABLE single_stdout ERROR_VARIABLE single_stderr)
execute_process(COMMAND "${MPIEXEC}" -n ${RANKS} --oversubscribe "${CLI}" ${arguments}
  RESULT_VARIABLE job_status OUTPUT_VARIABLE job_stdout ERROR_VARIABLE job_stderr)

function(fail message)
  message(FATAL_ERROR "${message}\n--- arguments: ${ARGS}\n--- one process (status ${single_status}):\n"
    "${single_stdout}${single_stderr}\n--- ${RANKS} ranks (status ${job_status}):\n${job_stdout}${job_stderr}")
endfunction()

if(NOT single_status STREQUAL "${EXPECT_EXIT}")
  fail("one process: status ${single_status}, expected ${EXPECT_EXIT}")
endif()
if(NOT job_status STREQUAL "${EXPECT_EXIT}")
  fail("${RANKS} ranks: status ${job_status}, expected ${EXPECT_EXIT}")
endif()
if(NOT job_stdout STREQUAL single_stdout)
  fail("the standard outputs differ")
endif()
if(EXPECT_EXIT EQUAL 0)
  if(single_stdout STREQUAL "")
    fail("nothing released")
  endif()
else()
  if(NOT single_stdout STREQUAL "")
    fail("an error with standard output")
  endif()
  # The launcher adds its own lines; the command's error line must be there once, the same.
  string(REGEX MATCHALL "dpselect: error: [^\n]*" single_errors "${single_stderr}")
  string(REGEX MATCHALL "dpselect: error: [^\n]*" job_errors "${job_stderr}")
  list(LENGTH job_errors job_error_count)
  if(NOT job_error_count EQUAL 1 OR NOT job_errors STREQUAL single_errors)
    fail("the error lines differ (or a rank other than 0 printed one)")
  endif()
endif()
