# SPDX-License-Identifier: Apache-2.0
# Raw and .npy files are read a chunk at a time (host/cli/chunked_file.cpp), text whole: over
# inputs of more than one chunk (write_chunked_fixtures.cpp) both give the same releases, and a bad
# value in a later chunk is named by its index in the whole file before anything is released.
# Included by CMakeLists.txt, whose dpselect_cli_test and regexes these use.
add_executable(dpselect_write_chunked_fixtures write_chunked_fixtures.cpp)
set(chunked_folder ${CMAKE_CURRENT_BINARY_DIR}/output_files/chunked)
add_test(NAME cli.chunked.write_fixtures COMMAND ${CMAKE_COMMAND} -E make_directory ${chunked_folder})
add_test(NAME cli.chunked.fixtures COMMAND dpselect_write_chunked_fixtures ${chunked_folder})
set_tests_properties(cli.chunked.write_fixtures PROPERTIES FIXTURES_SETUP cli_chunked_folder LABELS "cli")
set_tests_properties(cli.chunked.fixtures PROPERTIES FIXTURES_SETUP cli_chunked FIXTURES_REQUIRED cli_chunked_folder
  LABELS "cli")

function(dpselect_chunked_test name)
  dpselect_cli_test(chunked.${name} ${ARGN})
  set_tests_properties(cli.chunked.${name} PROPERTIES FIXTURES_REQUIRED cli_chunked)
endfunction()

set(chunked @DIR@/chunked/chunked_utilities)
foreach(format f32 f64 npy)
  foreach(mechanism exponential permute-and-flip laplace)
    dpselect_chunked_test(select_${format}_${mechanism} COMPARE_REGEX "${index_regex}"
      ARGS select --utilities ${chunked}.txt ${select_args} --mechanism ${mechanism} --seed 5 --repeat 3 --json
      COMPARE_ARGS select --utilities ${chunked}.${format} ${select_args} --mechanism ${mechanism} --seed 5 --repeat 3 --json)
  endforeach()
  dpselect_chunked_test(topk_${format} COMPARE_REGEX "${indices_regex}"
    ARGS topk --utilities ${chunked}.txt ${select_args} --k 20 --backend cpu --seed 5 --json
    COMPARE_ARGS topk --utilities ${chunked}.${format} ${select_args} --k 20 --backend cpu --seed 5 --json)
  dpselect_chunked_test(rows_${format} COMPARE_REGEX "\"indices\": \\[[0-9, \n]+\\]"
    ARGS rows --utilities ${chunked}.txt --cols 1000 ${select_args} --seed 5 --json
    COMPARE_ARGS rows --utilities ${chunked}.${format} --cols 1000 ${select_args} --seed 5 --json)
  dpselect_chunked_test(quantile_${format} COMPARE_REGEX "\"values\": \\[[-0-9., e]+\\]"
    ARGS quantile --data ${chunked}.txt --q 0.1,0.5,0.9 --range -7000:7000 --epsilon 1 --seed 5 --json
    COMPARE_ARGS quantile --data ${chunked}.${format} --q 0.1,0.5,0.9 --range -7000:7000 --epsilon 1 --seed 5 --json)
  dpselect_chunked_test(price_${format} COMPARE_REGEX "\"price\": [0-9.]+"
    ARGS price --bids @DIR@/chunked/chunked_bids.txt --epsilon 1 --grid 1:12000:1 --seed 5 --json
    COMPARE_ARGS price --bids @DIR@/chunked/chunked_bids.${format} --epsilon 1 --grid 1:12000:1 --seed 5 --json)
endforeach()
dpselect_chunked_test(nan_in_a_later_chunk EXPECT_EXIT 2
  STDERR_REGEX "chunked_nan\\.f32: element 4200000: utility must not be NaN or \\+inf \\(got nan\\)"
  NOT_STDOUT_REGEX "."
  ARGS select --utilities @DIR@/chunked/chunked_nan.f32 ${select_args})
