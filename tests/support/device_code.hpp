// SPDX-License-Identifier: Apache-2.0
// DPSELECT_TEST_DEVICE_CODE: 1 where a GPU test translation unit is compiled with the CUDA
// backend's device code, by nvcc (a .cu copy of the test) or by the host compiler against the SIMT
// runtime of tests/simt (DPSELECT_SIMT); 0 in the CPU-only build, where the GPU tests skip.
#pragma once

#if defined(__CUDACC__) || defined(DPSELECT_SIMT)
#define DPSELECT_TEST_DEVICE_CODE 1
#else
#define DPSELECT_TEST_DEVICE_CODE 0
#endif
