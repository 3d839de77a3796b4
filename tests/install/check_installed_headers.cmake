# SPDX-License-Identifier: Apache-2.0
# The installed headers, as the install rules lay them out (test "installed_headers"): installs the
# built library into a scratch prefix, then
#   1. every header under include/dpselect/detail/ must be reachable from a public header (one
#      outside detail/) through "dpselect/..." includes: an internal header that no public header
#      needs belongs in host/ or kernels/, not in the installed tree; and every "dpselect/..."
#      include of an installed header must name an installed header;
#   2. every installed header must compile alone (included twice, after nothing else): a .hpp with
#      the plain C++ compiler (mpi.hpp with MPI's compiler wrapper), a .cuh with nvcc.
# The list is whatever the install put under include/dpselect, never a hand-kept one.
#
# -D variables: DPSELECT_BUILD_DIR, WORK_DIR, CXX_COMPILER; MPI_CXX_COMPILER (empty: mpi.hpp is
# not compiled, as where the build found no MPI); CUDA_COMPILER (empty: the .cuh headers are not
# compiled, as in a CPU-only build) and CUDA_ARCHITECTURES (the build's, ','-separated).
cmake_minimum_required(VERSION 3.25)

set(prefix "${WORK_DIR}/prefix")
file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${DPSELECT_BUILD_DIR}" --prefix "${prefix}"
  RESULT_VARIABLE result OUTPUT_QUIET)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "installed_headers: cmake --install failed (${result})")
endif()
set(include_dir "${prefix}/include")
file(GLOB_RECURSE headers RELATIVE "${include_dir}" "${include_dir}/dpselect/*")
list(SORT headers)
if(NOT headers)
  message(FATAL_ERROR "installed_headers: nothing installed under ${include_dir}/dpselect")
endif()

# Reports a failure (the text may hold semicolons: a compiler's output) and counts it.
set(failures 0)
function(dpselect_fail text)
  message("installed_headers: FAILED: ${text}")
  math(EXPR count "${failures} + 1")
  set(failures ${count} PARENT_SCOPE)
endfunction()

# ---- 1. every installed detail header is needed by a public one ------------------------------
set(public "")
foreach(header IN LISTS headers)
  file(STRINGS "${include_dir}/${header}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]dpselect/")
  set(includes_${header} "")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[<\"](dpselect/[^>\"]+)[>\"].*$" "\\1" included "${line}")
    if(NOT included IN_LIST headers)
      dpselect_fail("${header} includes ${included}, which is not installed")
    endif()
    list(APPEND includes_${header} "${included}")
  endforeach()
  if(NOT header MATCHES "^dpselect/detail/")
    list(APPEND public "${header}")
  endif()
endforeach()
set(reached ${public})
set(frontier ${public})
while(frontier)
  set(next "")
  foreach(header IN LISTS frontier)
    foreach(included IN LISTS includes_${header})
      if(included IN_LIST headers AND NOT included IN_LIST reached)
        list(APPEND reached "${included}")
        list(APPEND next "${included}")
      endif()
    endforeach()
  endforeach()
  set(frontier ${next})
endwhile()
foreach(header IN LISTS headers)
  if(NOT header IN_LIST reached)
    dpselect_fail("${header} is installed but no public header includes it, directly or through \
another detail header: move it into the internal tree (host/ or kernels/)")
  endif()
endforeach()

# ---- 2. every installed header compiles alone ------------------------------------------------
set(cuda_flags "")
string(REPLACE "," ";" architectures "${CUDA_ARCHITECTURES}")
if(CUDA_COMPILER AND architectures)
  # The build's first architecture ("90", "75-real"); nvcc's default for "native", "all" and the like.
  list(GET architectures 0 first_architecture)
  string(REGEX REPLACE "-(real|virtual)$" "" first_architecture "${first_architecture}")
  if(first_architecture MATCHES "^[0-9]+[af]?$")
    set(cuda_flags "-arch=sm_${first_architecture}")
  endif()
endif()
set(checked 0)
set(skipped "")
file(MAKE_DIRECTORY "${WORK_DIR}/units")
foreach(header IN LISTS headers)
  string(MAKE_C_IDENTIFIER "${header}" unit)
  if(header MATCHES "\\.cuh$")
    if(NOT CUDA_COMPILER)
      list(APPEND skipped "${header} (no nvcc in this build)")
      continue()
    endif()
    set(source "${WORK_DIR}/units/${unit}.cu")
    set(command "${CUDA_COMPILER}" -std=c++20 ${cuda_flags} -I "${include_dir}" -c "${source}"
                -o "${WORK_DIR}/units/${unit}.o")
  elseif(header MATCHES "\\.hpp$")
    set(source "${WORK_DIR}/units/${unit}.cpp")
    set(compiler "${CXX_COMPILER}")
    if(header STREQUAL "dpselect/mpi.hpp")
      if(NOT MPI_CXX_COMPILER)
        list(APPEND skipped "${header} (no MPI in this build)")
        continue()
      endif()
      set(compiler "${MPI_CXX_COMPILER}")
    endif()
    set(command "${compiler}" -std=c++20 -fsyntax-only -I "${include_dir}" "${source}")
  else()
    dpselect_fail("${header}: an installed file under include/dpselect that is neither .hpp nor .cuh")
    continue()
  endif()
  file(WRITE "${source}" "#include <${header}>\n#include <${header}>\n")
  execute_process(COMMAND ${command} RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  math(EXPR checked "${checked} + 1")
  if(NOT result EQUAL 0)
    dpselect_fail("${header} does not compile alone:\n${output}")
  endif()
endforeach()

list(LENGTH headers installed)
list(LENGTH public public_count)
message(STATUS "installed_headers: ${installed} installed headers (${public_count} public), "
               "${checked} compiled alone")
foreach(entry IN LISTS skipped)
  message(STATUS "installed_headers: not compiled: ${entry}")
endforeach()
if(failures GREATER 0)
  message(FATAL_ERROR "installed_headers: ${failures} failure(s), above")
endif()
