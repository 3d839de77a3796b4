#include "cpu_backend.hpp"

#include <atomic>
#include <exception>
#include <mutex>
#include <vector>

#include <omp.h>

#include "dpselect/detail/release_access.hpp"

namespace dpselect::detail {
namespace {

// Chunk of candidates one worker scores at a time: large enough to amortize scheduling, small
// enough that the buffer of a generated range stays in L1/L2.
constexpr std::uint64_t kChunk = std::uint64_t{1} << 13;

// Runs score_chunk(first_offset, count, accumulator) over [0, n) in kChunk pieces on all
// cores and merges the per-thread accumulators. A throwing chunk stops the pass and the
// exception is rethrown here.
template <class ScoreChunk>
ShardResult parallel_chunks(std::uint64_t n, ScoreChunk score_chunk) {
  ShardResult total;
  total.executed_on = ExecutedOn::cpu;
  const std::uint64_t chunks = (n + kChunk - 1) / kChunk;
  if (chunks == 1) {  // small inputs: no thread start-up
    ShardAccumulator accumulator;
    score_chunk(0, n, accumulator);
    return merge(total, accumulator.result);
  }
  std::mutex merge_mutex;
  std::exception_ptr failure;
  std::atomic<bool> failed{false};
#pragma omp parallel
  {
    ShardAccumulator accumulator;
#pragma omp for schedule(dynamic, 1)
    for (std::uint64_t chunk = 0; chunk < chunks; ++chunk) {
      if (failed.load(std::memory_order_relaxed)) continue;
      const std::uint64_t first = chunk * kChunk;
      const std::uint64_t count = first + kChunk <= n ? kChunk : n - first;
      try {
        score_chunk(first, count, accumulator);
      } catch (...) {
        std::lock_guard lock(merge_mutex);
        if (!failure) failure = std::current_exception();
        failed.store(true, std::memory_order_relaxed);
      }
    }
    std::lock_guard lock(merge_mutex);
    total = merge(total, accumulator.result);
  }
  if (failure) std::rethrow_exception(failure);
  return total;
}

template <class T>
ShardResult evaluate_array(const NoiseSpec& spec, const T* utilities, IndexRange range) {
  return parallel_chunks(range.size(), [&](std::uint64_t first, std::uint64_t count,
                                           ShardAccumulator& accumulator) {
    for (std::uint64_t k = first; k < first + count; ++k) {
      accumulator.add(spec, range.begin + k, static_cast<double>(utilities[k]));
    }
  });
}

}  // namespace

ShardResult cpu_evaluate_array(const NoiseSpec& spec, const float* utilities, IndexRange range) {
  return evaluate_array(spec, utilities, range);
}

ShardResult cpu_evaluate_array(const NoiseSpec& spec, const double* utilities, IndexRange range) {
  return evaluate_array(spec, utilities, range);
}

ShardResult cpu_evaluate_generated(const NoiseSpec& spec, IndexRange range, FillUtilities fill,
                                   const void* functor) {
  return parallel_chunks(range.size(), [&](std::uint64_t first, std::uint64_t count,
                                           ShardAccumulator& accumulator) {
    thread_local std::vector<double> buffer;
    buffer.resize(kChunk);
    fill(functor, range.begin + first, count, buffer.data());
    for (std::uint64_t k = 0; k < count; ++k) {
      accumulator.add(spec, range.begin + first + k, buffer[k]);
    }
  });
}

}  // namespace dpselect::detail
