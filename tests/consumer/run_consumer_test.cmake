# SPDX-License-Identifier: Apache-2.0
# Installs the built library into a scratch prefix, then configures, builds and runs the
# consumer project against it. Invoked by ctest (tests "install_consumer", and
# "install_consumer_mpi" with -DAPP=distributed_app -DLAUNCHER=<mpiexec and its flags, ,-joined>).
# CONSUMER_CXX_COMPILER, CONSUMER_CXX_FLAGS and CONSUMER_LINKER_FLAGS are the library build's
# own (a sanitizer build's library needs its compiler's runtime in the consumer too).
if(NOT DEFINED APP)
  set(APP app)
endif()
string(REPLACE "," ";" launcher "${LAUNCHER}")
set(prefix "${WORK_DIR}/prefix")
file(REMOVE_RECURSE "${WORK_DIR}")
foreach(step
    "${CMAKE_COMMAND};--install;${DPSELECT_BUILD_DIR};--prefix;${prefix}"
    "${CMAKE_COMMAND};-S;${CONSUMER_SOURCE_DIR};-B;${WORK_DIR}/build;-G;${GENERATOR};-DCMAKE_PREFIX_PATH=${prefix};-DCMAKE_BUILD_TYPE=Release;-DCMAKE_CXX_COMPILER=${CONSUMER_CXX_COMPILER};-DCMAKE_CXX_FLAGS=${CONSUMER_CXX_FLAGS};-DCMAKE_EXE_LINKER_FLAGS=${CONSUMER_LINKER_FLAGS}"
    "${CMAKE_COMMAND};--build;${WORK_DIR}/build"
    "${launcher};${WORK_DIR}/build/${APP}")
  execute_process(COMMAND ${step} RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "install_consumer: step failed (${result}): ${step}")
  endif()
endforeach()
