// SPDX-License-Identifier: Apache-2.0
// Every kernel launch of the library and its tests goes through launch_kernel: under nvcc it is
// Kernel<<<grid, block, shared_bytes, stream>>>(arguments...), and in the simt build (the test
// tree's SIMT runtime, tests/simt, which compiles the kernels with the host compiler) the same
// launch run on the CPU, thread by thread, with the kernel named in its diagnostics. CUDA-only.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

namespace dpselect::detail {

template <auto Kernel, class... Arguments>
void launch_kernel(dim3 grid, dim3 block, std::size_t shared_bytes, cudaStream_t stream, Arguments&&... arguments) {
#if defined(DPSELECT_SIMT)
  simt::launch_kernel<Kernel>(grid, block, shared_bytes, stream, std::forward<Arguments>(arguments)...);
#else
  Kernel<<<grid, block, shared_bytes, stream>>>(std::forward<Arguments>(arguments)...);
#endif
}

// The block's dynamic shared memory: the launch's shared_bytes, 16-byte aligned.
__device__ __forceinline__ unsigned char* dynamic_shared_bytes() {
#if defined(DPSELECT_SIMT)
  return simt::dynamic_shared_bytes();
#else
  extern __shared__ __align__(16) unsigned char bytes[];
  return bytes;
#endif
}

}  // namespace dpselect::detail
