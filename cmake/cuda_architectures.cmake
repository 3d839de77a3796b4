# SPDX-License-Identifier: Apache-2.0
# The GPU architectures the CUDA backend is compiled for, unless the caller chose them
# (-DCMAKE_CUDA_ARCHITECTURES=... or the CUDAARCHS environment variable).
#
# By default: a cubin for the lowest minor version of every major architecture from Turing (7.5)
# on that the installed nvcc supports (with CUDA 13: 75, 80, 90, 100, 110 and 120), plus PTX of
# the newest architecture. A cubin runs on every GPU of its major version with an equal or
# higher minor version (CUDA C++ Programming Guide, "Binary Compatibility"), so these cubins
# cover every GPU from Turing on that the toolkit knows: 7.5 (T4, RTX 20), 8.x (A100, A10, RTX 30,
# L4, L40S, RTX 40), 9.0 (H100, H200), 10.x, 11.x and 12.x (RTX 50); the PTX is compiled by the
# driver for GPUs newer than the toolkit. `native` builds for the GPUs of the building machine
# alone (the fastest build); the presets that CI runs build sm_90 alone.
function(dpselect_default_cuda_architectures)
  if(DEFINED CMAKE_CUDA_ARCHITECTURES OR DEFINED ENV{CUDAARCHS})
    return()
  endif()
  execute_process(COMMAND "${CMAKE_CUDA_COMPILER}" --list-gpu-arch
    OUTPUT_VARIABLE listed RESULT_VARIABLE failed ERROR_QUIET)
  string(REGEX MATCHALL "compute_[0-9]+" virtual_archs "${listed}")
  set(newest 0)
  foreach(virtual_arch IN LISTS virtual_archs)
    string(REPLACE "compute_" "" arch "${virtual_arch}")
    if(arch LESS 75)
      continue()
    endif()
    if(arch GREATER newest)
      set(newest ${arch})
    endif()
    math(EXPR major "${arch} / 10")
    if(NOT DEFINED lowest_${major} OR arch LESS lowest_${major})
      set(lowest_${major} ${arch})
      list(APPEND majors ${major})
    endif()
  endforeach()
  if(failed OR newest EQUAL 0)
    # nvcc older than --list-gpu-arch (CUDA 11.0) or unreadable: let CMake pick nvcc's default.
    message(STATUS "dpselect: could not list nvcc's GPU architectures; using nvcc's default")
    return()
  endif()
  list(REMOVE_DUPLICATES majors)
  set(architectures "")
  foreach(major IN LISTS majors)
    list(APPEND architectures ${lowest_${major}}-real)
  endforeach()
  list(SORT architectures COMPARE NATURAL)
  list(APPEND architectures ${newest}-virtual)
  set(CMAKE_CUDA_ARCHITECTURES "${architectures}" CACHE STRING
      "GPU architectures of the CUDA backend (default: every major architecture from Turing on, PTX of the newest)")
  message(STATUS "dpselect: CUDA architectures ${architectures} (set CMAKE_CUDA_ARCHITECTURES=native for this machine's GPU alone)")
endfunction()

# Whether this machine has an NVIDIA GPU that a build for it should target: nvidia-smi lists one.
# (Configure-time only: the library decides at run time whether a GPU is usable.)
function(dpselect_machine_has_gpu result)
  set(${result} OFF PARENT_SCOPE)
  find_program(dpselect_nvidia_smi nvidia-smi)
  if(dpselect_nvidia_smi)
    execute_process(COMMAND "${dpselect_nvidia_smi}" -L OUTPUT_VARIABLE listed RESULT_VARIABLE failed
      ERROR_QUIET TIMEOUT 20)
    if(NOT failed AND listed MATCHES "GPU [0-9]+:")
      set(${result} ON PARENT_SCOPE)
    endif()
  endif()
endfunction()
