# SPDX-License-Identifier: Apache-2.0
# Faults: output that cannot be written (a full device, a reader that leaves, a file-size limit
# on --output), input that ends before its announced size, named pipes, and memory exhaustion
# while loading. Each must end in a non-zero status and one clear error line, never in status 0
# with the output cut short or in a kill. Included by CMakeLists.txt; docs/reliability.md lists the cases.

# ---- a full device: every way of writing stdout ----
# /dev/full accepts the open and fails every write with ENOSPC.
if(EXISTS /dev/full)
  set(lost_report_regex
    "^dpselect: error: the release was made but its report could not be written to standard output: No space left on device\n$")
  set(lost_output_regex "^dpselect: error: the output could not be written to standard output")
  set(fault_select_args select --utilities utilities.txt ${select_args})
  # About 4 MB and 7 MB: many buffer flushes before the end, not one write at exit.
  set(fault_long_select select --utilities utilities.txt --epsilon 0.00001 --sensitivity 1
    --repeat 20000)
  set(fault_long_topk topk --utilities utilities.txt --k 15 --epsilon 0.00001 --sensitivity 1
    --repeat 20000)
  dpselect_cli_test(fault_full_device_text EXPECT_EXIT 1 STDOUT_FILE /dev/full
    STDERR_REGEX "${lost_report_regex}" ARGS ${fault_select_args})
  dpselect_cli_test(fault_full_device_json EXPECT_EXIT 1 STDOUT_FILE /dev/full
    STDERR_REGEX "${lost_report_regex}" ARGS ${fault_select_args} --json)
  dpselect_cli_test(fault_full_device_long_text EXPECT_EXIT 1 STDOUT_FILE /dev/full
    STDERR_REGEX "${lost_report_regex}" ARGS ${fault_long_select})
  dpselect_cli_test(fault_full_device_long_quiet EXPECT_EXIT 1 STDOUT_FILE /dev/full
    STDERR_REGEX "${lost_report_regex}" ARGS ${fault_long_select} --quiet)
  dpselect_cli_test(fault_full_device_long_topk EXPECT_EXIT 1 STDOUT_FILE /dev/full
    STDERR_REGEX "${lost_report_regex}" ARGS ${fault_long_topk} --json)
  # Output that is not a release report: written by CLI11 or printf, checked at exit.
  dpselect_cli_test(fault_full_device_audit_list EXPECT_EXIT 1 STDOUT_FILE /dev/full
    STDERR_REGEX "${lost_output_regex}: No space left on device\n$" ARGS audit --list)
  dpselect_cli_test(fault_full_device_help EXPECT_EXIT 1 STDOUT_FILE /dev/full
    STDERR_REGEX "${lost_output_regex}: No space left on device\n$" ARGS select --help)
  dpselect_cli_test(fault_full_device_version EXPECT_EXIT 1 STDOUT_FILE /dev/full
    STDERR_REGEX "${lost_output_regex}" ARGS --version)
endif()

# ---- pipes, short files, memory and file-size limits: faults.sh (POSIX sh, coreutils; Linux:
# mkfifo, sysfs, ulimit -v, ulimit -f). Status 77 is a skip, with the reason in the test's output. ----
if(CMAKE_HOST_SYSTEM_NAME STREQUAL "Linux")
  foreach(fault_case closed_pipe closed_pipe_sigpipe_ignored npy_pipe_ends_early
      named_pipe_without_writer file_shorter_than_its_size memory_limit output_file_size_limit
      empty_argument)
    add_test(NAME cli.fault_${fault_case}
      COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/faults.sh ${fault_case} $<TARGET_FILE:dpselect_cli>
        ${CMAKE_CURRENT_BINARY_DIR}/fault_files/${fault_case}
      WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/data)
    # A hang (a named pipe opened plainly waits for a writer) fails by the timeout.
    set_tests_properties(cli.fault_${fault_case} PROPERTIES LABELS "cli" TIMEOUT 30
      SKIP_RETURN_CODE 77)
  endforeach()
endif()
