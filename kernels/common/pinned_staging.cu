// SPDX-License-Identifier: Apache-2.0
#include "pinned_staging.cuh"

#include <cuda_runtime.h>

#include <mutex>
#include <vector>

#include "dpselect/detail/cuda_check.cuh"

namespace dpselect::detail {
namespace {

struct StagingCache {
  std::mutex mutex;
  std::vector<unsigned char*> idle;  // guarded by mutex
};

// Never destroyed: a static destructor would call cudaFreeHost while the CUDA runtime may already
// be shutting down. The operating system reclaims the memory at exit.
StagingCache& staging_cache() {
  static StagingCache* const cache = new StagingCache;
  return *cache;
}

}  // namespace

PinnedStaging::PinnedStaging() {
  StagingCache& cache = staging_cache();
  {
    const std::lock_guard lock(cache.mutex);
    if (!cache.idle.empty()) {
      pair_ = cache.idle.back();
      cache.idle.pop_back();
      return;
    }
  }
  void* pair = nullptr;
  // Portable: page-locked for every device, so one cache serves them all.
  if (cudaHostAlloc(&pair, 2 * kStagingBufferBytes, cudaHostAllocPortable) == cudaSuccess) {
    pair_ = static_cast<unsigned char*>(pair);
  } else {
    static_cast<void>(cudaGetLastError());  // the caller falls back to pageable copies
  }
}

PinnedStaging::~PinnedStaging() {
  if (pair_ == nullptr) return;
  StagingCache& cache = staging_cache();
  {
    const std::lock_guard lock(cache.mutex);
    if (cache.idle.size() < kMaxIdleStagingPairs) {
      cache.idle.push_back(pair_);
      return;
    }
  }
  static_cast<void>(cudaFreeHost(pair_));
}

void release_idle_pinned_staging() {
  std::vector<unsigned char*> released;
  {
    StagingCache& cache = staging_cache();
    const std::lock_guard lock(cache.mutex);
    released.swap(cache.idle);
  }
  cudaError_t first_failure = cudaSuccess;
  for (unsigned char* pair : released) {
    const cudaError_t status = cudaFreeHost(pair);
    if (status != cudaSuccess && first_failure == cudaSuccess) first_failure = status;
  }
  if (first_failure != cudaSuccess) throw_cuda_error(first_failure, "cudaFreeHost(staging)", __FILE__, __LINE__);
}

}  // namespace dpselect::detail
