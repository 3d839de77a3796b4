// SPDX-License-Identifier: Apache-2.0
// Quantile data preparation on the host: validation, grid slots and a parallel radix sort.
//
// The releases read only the sorted grid slots (QuantileGrid::slot; quantiles_internal.hpp), so
// the sort runs on 8-byte integers of at most 42 significant bits: four passes of 11-bit digits (a
// pass whose digit is the same for every value is skipped), each a per-thread histogram and a
// stable scatter. The result is the sorted sequence itself, so it never depends on the thread count.
#include <omp.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <string>

#include "dpselect/errors.hpp"
#include "validation/validation.hpp"
#include "device/gpu.hpp"
#include "quantiles/gpu.hpp"
#include "quantiles/quantiles_internal.hpp"

namespace dpselect {
namespace {

constexpr double kLargestRangeMagnitude = 0x1p960;  // keeps upper - lower finite
constexpr std::uint64_t kGridSteps = std::uint64_t{1} << 40;
constexpr std::uint64_t kMaxValues = std::uint64_t{1} << 40;

// The step of QuantileRange::grid(): 2^40 steps (a power-of-two scaling of one rounded
// difference), or as many as keep consecutive points apart.
double range_grid_step(const QuantileRange& range) {
  const double magnitude = std::max(std::fabs(range.lower), std::fabs(range.upper));
  return std::max((range.upper - range.lower) * 0x1p-40, magnitude * 0x1p-50);
}

// A public resolution: a positive step that keeps consecutive points apart and divides the range
// into 1 to 2^40 steps. Decimal steps (0.01) are inexact in binary, so the division is accepted
// within a relative 2^-44 of the range's magnitude: far above its rounding, far below one step.
void validate_resolution(const QuantileRange& range, double step) {
  if (!std::isfinite(step) || !(step > 0.0)) detail::throw_invalid("range resolution", "finite and > 0", step);
  const double magnitude = std::max(std::fabs(range.lower), std::fabs(range.upper));
  if (!(step >= magnitude * 0x1p-50)) {
    detail::throw_invalid("range resolution",
                          ">= max(|lower|, |upper|) 2^-50 = " + detail::format_value(magnitude * 0x1p-50) +
                              ", so that consecutive grid points differ",
                          step);
  }
  const double steps = (range.upper - range.lower) / step;
  if (!(steps <= static_cast<double>(kGridSteps) + 0.5)) {
    detail::throw_invalid("range resolution",
                          ">= (upper - lower) 2^-40 = " + detail::format_value((range.upper - range.lower) * 0x1p-40) +
                              " (a grid of at most 2^40 + 1 points)",
                          step);
  }
  const double whole = std::nearbyint(steps);
  const double tolerance = 0x1p-44 * (std::fabs(range.lower) + std::fabs(range.upper)) / step;
  if (whole < 1.0 || std::fabs(steps - whole) > tolerance) {
    detail::throw_invalid("range resolution",
                          "a divisor of upper - lower = " + detail::format_value(range.upper - range.lower) +
                              " (the range must hold a whole number of steps)",
                          step);
  }
}

constexpr int kDigitBits = 11;
constexpr int kDigits = 4;  // 44 bits >= the 42 of a slot < 2 (2^40 + 1)
constexpr std::size_t kBuckets = std::size_t{1} << kDigitBits;
// Below this many values std::sort is faster than four passes over 2048 buckets.
constexpr std::size_t kRadixSortMinimum = std::size_t{1} << 16;

std::size_t digit_of(std::uint64_t position, int digit) {
  return static_cast<std::size_t>(position >> (kDigitBits * digit)) & (kBuckets - 1);
}

// One stable counting-sort pass of `from` into `to` by `digit`, on all threads. Each thread owns
// one contiguous chunk, counts it, and scatters it to the offsets that the counts of the chunks
// before it (for the same bucket) and of all smaller buckets leave free.
void radix_pass(const std::vector<std::uint64_t>& from, std::vector<std::uint64_t>& to, int digit, int threads) {
  const std::size_t n = from.size();
  std::vector<std::array<std::size_t, kBuckets>> counts(static_cast<std::size_t>(threads));
#pragma omp parallel num_threads(threads)
  {
    const auto thread = static_cast<std::size_t>(omp_get_thread_num());
    const std::size_t first = n * thread / static_cast<std::size_t>(threads);
    const std::size_t last = n * (thread + 1) / static_cast<std::size_t>(threads);
    auto& mine = counts[thread];
    mine.fill(0);
    for (std::size_t i = first; i < last; ++i) ++mine[digit_of(from[i], digit)];
#pragma omp barrier
#pragma omp single
    {
      std::size_t offset = 0;
      for (std::size_t bucket = 0; bucket < kBuckets; ++bucket) {
        for (auto& chunk : counts) {
          const std::size_t count = chunk[bucket];
          chunk[bucket] = offset;
          offset += count;
        }
      }
    }
    for (std::size_t i = first; i < last; ++i) to[mine[digit_of(from[i], digit)]++] = from[i];
  }
}

// Above this many values the positions are sorted in place: the LSD passes' second buffer would
// double the data's memory (8 GB for 2^29 positions) just when it is scarcest.
constexpr std::size_t kInPlaceSortMinimum = std::size_t{1} << 27;

// In place: one MSD pass on the highest 11 bits in which the positions differ, permuting each into
// its bucket by following cycles (American flag sort: McIlroy, Bostic & McIlroy 1993, "Engineering
// radix sort"), then each bucket sorted by std::sort on all threads.
void sort_by_highest_differing_bits(std::vector<std::uint64_t>& positions, std::uint64_t differing) {
  const int highest_bit = 63 - std::countl_zero(differing);
  const int shift = std::max(0, highest_bit + 1 - kDigitBits);
  const auto bucket_of = [shift](std::uint64_t position) {
    return static_cast<std::size_t>(position >> shift) & (kBuckets - 1);
  };
  const std::int64_t n = static_cast<std::int64_t>(positions.size());
  std::array<std::size_t, kBuckets> counts{};
#pragma omp parallel
  {
    std::array<std::size_t, kBuckets> mine{};
#pragma omp for schedule(static) nowait
    for (std::int64_t i = 0; i < n; ++i) ++mine[bucket_of(positions[static_cast<std::size_t>(i)])];
#pragma omp critical
    for (std::size_t b = 0; b < kBuckets; ++b) counts[b] += mine[b];
  }
  std::array<std::size_t, kBuckets + 1> begin{};
  for (std::size_t b = 0; b < kBuckets; ++b) begin[b + 1] = begin[b] + counts[b];
  std::array<std::size_t, kBuckets> next{};
  std::copy_n(begin.begin(), kBuckets, next.begin());
  for (std::size_t b = 0; b < kBuckets; ++b) {
    while (next[b] < begin[b + 1]) {
      std::uint64_t carried = positions[next[b]];
      std::size_t home = bucket_of(carried);
      while (home != b) {  // place it and pick up what was there, until one belongs at next[b]
        std::swap(carried, positions[next[home]++]);
        home = bucket_of(carried);
      }
      positions[next[b]++] = carried;
    }
  }
#pragma omp parallel for schedule(dynamic)
  for (std::int64_t b = 0; b < static_cast<std::int64_t>(kBuckets); ++b) {
    const auto bucket = static_cast<std::size_t>(b);
    std::sort(positions.begin() + static_cast<std::ptrdiff_t>(begin[bucket]),
              positions.begin() + static_cast<std::ptrdiff_t>(begin[bucket + 1]));
  }
}

void sort_positions(std::vector<std::uint64_t>& positions) {
  if (positions.size() < kRadixSortMinimum) {
    std::sort(positions.begin(), positions.end());
    return;
  }
  if (positions.size() >= kInPlaceSortMinimum) {
    detail::sort_positions_in_place(positions);
    return;
  }
  const int threads = std::max(1, omp_get_max_threads());
  // A digit shared by every value (data within a small part of the range) needs no pass.
  // Every value lies between the smallest and the largest, so all share the bits above the highest
  // bit in which those two differ: the passes of digits wholly above it are skipped.
  const auto [smallest, largest] = std::minmax_element(positions.begin(), positions.end());
  const std::uint64_t differing = *smallest ^ *largest;
  std::vector<std::uint64_t> buffer(positions.size());
  for (int digit = 0; digit < kDigits; ++digit) {
    if ((differing >> (kDigitBits * digit)) == 0) break;
    radix_pass(positions, buffer, digit, threads);
    positions.swap(buffer);
  }
}

// Each value's grid slot. QuantileGrid::slot is exact whatever the hardware (its fma rounds once
// either way), so where the CPU has FMA instructions the same loop is compiled to use them instead
// of calling libm's fma: about 2.5x faster, the same slots.
constexpr std::int64_t kPositionChunk = std::int64_t{1} << 16;

template <class T>
void compute_positions_portable(const QuantileGrid& grid, const T* values, std::uint64_t* positions, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) positions[i] = grid.slot(static_cast<double>(values[i]));
}

#if defined(__x86_64__) && defined(__GNUC__)
template <class T>
__attribute__((target("fma"))) void compute_positions_fma(const QuantileGrid& grid, const T* values,
                                                          std::uint64_t* positions, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) positions[i] = grid.slot(static_cast<double>(values[i]));
}
#endif

template <class T>
void compute_positions(const QuantileGrid& grid, const T* values, std::uint64_t* positions, std::size_t count) {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool has_fma = __builtin_cpu_supports("fma");
  if (has_fma) {
    compute_positions_fma(grid, values, positions, count);
    return;
  }
#endif
  compute_positions_portable(grid, values, positions, count);
}

// Every check of new data before any work: the range, and 1 to 2^40 values.
void validate_data(const QuantileRange& range, std::uint64_t count) {
  range.validate();
  if (count == 0) throw InvalidArgument("dpselect: data must hold at least one value (got none)");
  if (count > kMaxValues) {
    throw InvalidArgument("dpselect: data must hold at most 2^40 values (got " + std::to_string(count) + ")");
  }
}

template <class T>
QuantileData prepare_device(DeviceSpan<const T> values, const QuantileRange& range, cuda_stream_t stream) {
  validate_data(range, values.size);
  detail::resolve_backend(Backend::Gpu);
  // A host pointer would raise a sticky cudaErrorIllegalAddress in the first kernel.
  detail::validate_device_pointer(values.data, "data");
  detail::PreparedQuantileData prepared = detail::gpu_prepare_quantile_data(values.data, values.size, range, stream);
  if (prepared.first_nan < values.size) {
    detail::throw_invalid("data[" + std::to_string(prepared.first_nan) + "]",
                          "a number (values outside the range are clipped)", prepared.first_nan_value);
  }
  return QuantileData(std::move(prepared.storage));
}

std::shared_ptr<QuantileData::Storage> new_host_storage(const QuantileRange& range, std::uint64_t count) {
  validate_data(range, count);
  auto storage = std::make_shared<QuantileData::Storage>();
  storage->range = range;
  storage->grid = range.grid();
  storage->count = count;
  return storage;
}

// The slots of values[first_index, first_index + values.size()) into `slots`, on all threads;
// throws for a NaN (the smallest index, whatever the threads), before anything is written.
// Returns whether any value sits on a grid point (an odd slot): then a single quantile has atoms
// to score.
template <class T>
bool fill_positions(const QuantileGrid& grid, std::span<const T> values, std::uint64_t first_index,
                    std::uint64_t* slots) {
  const std::int64_t n = static_cast<std::int64_t>(values.size());
  std::int64_t first_nan = n;
#pragma omp parallel for reduction(min : first_nan) schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    if (std::isnan(values[static_cast<std::size_t>(i)]) && i < first_nan) first_nan = i;
  }
  if (first_nan < n) {
    detail::throw_invalid("data[" + std::to_string(first_index + static_cast<std::uint64_t>(first_nan)) + "]",
                          "a number (values outside the range are clipped)",
                          static_cast<double>(values[static_cast<std::size_t>(first_nan)]));
  }
  const std::int64_t chunks = (n + kPositionChunk - 1) / kPositionChunk;
  // The odd slots are read from each chunk while it is still in cache, not in a pass of its own.
  bool on_points = false;
#pragma omp parallel for reduction(|| : on_points) schedule(static)
  for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
    const std::int64_t first = chunk * kPositionChunk;
    const std::size_t count = static_cast<std::size_t>(std::min(kPositionChunk, n - first));
    std::uint64_t* chunk_slots = slots + first;
    compute_positions(grid, values.data() + first, chunk_slots, count);
    std::uint64_t odd = 0;
    for (std::size_t i = 0; i < count; ++i) odd |= chunk_slots[i];
    on_points = on_points || (odd & 1u) != 0;
  }
  return on_points;
}

template <class T>
std::shared_ptr<const QuantileData::Storage> prepare_host(std::span<const T> values, const QuantileRange& range) {
  const std::shared_ptr<QuantileData::Storage> storage = new_host_storage(range, values.size());
  std::vector<std::uint64_t> positions(values.size());
  storage->has_values_on_points = fill_positions(storage->grid, values, 0, positions.data());
  storage->set_host_positions(std::move(positions));  // sorted when a release first needs it
  return storage;
}

// The values read a chunk at a time into their slots: the values themselves are never held whole.
template <class T>
std::shared_ptr<const QuantileData::Storage> prepare_host(const ChunkedValues<T>& values, const QuantileRange& range) {
  const std::shared_ptr<QuantileData::Storage> storage = new_host_storage(range, values.size);
  if (!values.read) throw InvalidArgument("dpselect: values.read must be a reader (got an empty function)");
  if (values.chunk_size == 0) throw InvalidArgument("dpselect: values.chunk_size must be at least 1 (got 0)");
  std::vector<T> buffer(std::min(values.chunk_size, values.size));
  std::vector<std::uint64_t> positions(values.size);
  bool on_points = false;
  for (std::uint64_t first = 0; first < values.size; first += buffer.size()) {
    const std::span<T> chunk(buffer.data(), std::min<std::uint64_t>(buffer.size(), values.size - first));
    values.read(first, chunk);
    on_points = fill_positions(storage->grid, std::span<const T>(chunk), first, positions.data() + first) || on_points;
  }
  storage->has_values_on_points = on_points;
  storage->set_host_positions(std::move(positions));
  return storage;
}

// Below this many values the order statistics are found by sorting them all.
constexpr std::size_t kSortDirectly = std::size_t{1} << 16;
constexpr int kSelectionBucketBits = 12;
constexpr std::uint64_t kPositionLimit = std::uint64_t{1} << 42;  // every slot is < 2 (2^40 + 1)

// The values of `from` in [lo, hi), in any order, on all threads.
std::vector<std::uint64_t> values_between(std::span<const std::uint64_t> from, std::uint64_t lo, std::uint64_t hi) {
  const int threads = std::max(1, omp_get_max_threads());
  std::vector<std::vector<std::uint64_t>> parts(static_cast<std::size_t>(threads));
#pragma omp parallel num_threads(threads)
  {
    auto& mine = parts[static_cast<std::size_t>(omp_get_thread_num())];
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(from.size()); ++i) {
      const std::uint64_t position = from[static_cast<std::size_t>(i)];
      if (position >= lo && position < hi) mine.push_back(position);
    }
  }
  std::vector<std::uint64_t> all;
  for (const auto& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

}  // namespace

namespace detail {

std::vector<std::uint64_t> order_statistics(std::span<const std::uint64_t> positions, std::uint64_t first_rank,
                                            std::uint64_t last_rank) {
  // Invariant: `current` holds exactly the values in [lo, hi), and `below` values lie below lo.
  std::uint64_t lo = 0;
  std::uint64_t hi = kPositionLimit;
  std::uint64_t below = 0;
  std::vector<std::uint64_t> subset;
  std::span<const std::uint64_t> current = positions;
  const int threads = std::max(1, omp_get_max_threads());
  constexpr std::size_t kBuckets = std::size_t{1} << kSelectionBucketBits;
  while (current.size() > kSortDirectly && hi - lo > 1) {
    const int width_bits = std::bit_width(hi - lo - 1);
    const int shift = std::max(0, width_bits - kSelectionBucketBits);
    std::vector<std::array<std::uint64_t, kBuckets>> counts(static_cast<std::size_t>(threads));
#pragma omp parallel num_threads(threads)
    {
      auto& mine = counts[static_cast<std::size_t>(omp_get_thread_num())];
      mine.fill(0);
#pragma omp for schedule(static)
      for (std::int64_t i = 0; i < static_cast<std::int64_t>(current.size()); ++i) {
        ++mine[(current[static_cast<std::size_t>(i)] - lo) >> shift];
      }
    }
    std::uint64_t cumulative = below;
    std::uint64_t first_bucket = kBuckets;
    std::uint64_t last_bucket = kBuckets;
    std::uint64_t below_first = below;
    for (std::size_t bucket = 0; bucket < kBuckets && last_bucket == kBuckets; ++bucket) {
      std::uint64_t count = 0;
      for (const auto& chunk : counts) count += chunk[bucket];
      if (first_bucket == kBuckets && cumulative + count > first_rank) {
        first_bucket = bucket;
        below_first = cumulative;
      }
      if (cumulative + count >= last_rank) last_bucket = bucket;
      cumulative += count;
    }
    const std::uint64_t new_lo = lo + (first_bucket << shift);
    const std::uint64_t new_hi = std::min(hi, lo + ((last_bucket + 1) << shift));
    if (new_lo == lo && new_hi == hi) break;  // cannot narrow further: sort what is left
    subset = values_between(current, new_lo, new_hi);
    current = subset;
    lo = new_lo;
    hi = new_hi;
    below = below_first;
  }
  std::vector<std::uint64_t> result;
  if (hi - lo == 1) {  // every remaining value is lo
    result.assign(last_rank - first_rank, lo);
    return result;
  }
  std::vector<std::uint64_t> sorted(current.begin(), current.end());
  std::sort(sorted.begin(), sorted.end());
  result.assign(sorted.begin() + static_cast<std::ptrdiff_t>(first_rank - below),
                sorted.begin() + static_cast<std::ptrdiff_t>(last_rank - below));
  return result;
}

}  // namespace detail

std::span<const std::uint64_t> QuantileData::Storage::sorted_host_positions() const {
  if (!sorted_.load(std::memory_order_acquire)) {
    std::unique_lock lock(sort_mutex_);
    if (!sorted_.load(std::memory_order_relaxed)) {
      sort_positions(host_positions_);
      sorted_.store(true, std::memory_order_release);
    }
  }
  return host_positions_;
}

std::string_view to_string(RecordNeighbours neighbours) {
  switch (neighbours) {
    case RecordNeighbours::replace_one_record:
      return "replace";
    case RecordNeighbours::add_or_remove_record:
      return "add-remove";
  }
  return "unknown";
}

void QuantileRange::validate() const {
  if (!std::isfinite(lower) || !(std::fabs(lower) <= kLargestRangeMagnitude)) {
    detail::throw_invalid("range lower", "finite and within +-2^960", lower);
  }
  if (!std::isfinite(upper) || !(std::fabs(upper) <= kLargestRangeMagnitude) || !(upper > lower)) {
    detail::throw_invalid("range upper", "finite, within +-2^960 and > lower (" + detail::format_value(lower) + ")",
                          upper);
  }
  // The grid's step (grid()) must be a positive double: a range of denormals around 0 has none
  // (its step underflowed to 0 and the point count to infinity; found by tests/fuzz/fuzz_parameters).
  if (!(range_grid_step(*this) > 0)) {
    detail::throw_invalid("range upper", "far enough from lower (" + detail::format_value(lower) +
                                             ") that the grid has a positive step (a range wider than 2^-1034)",
                          upper);
  }
  if (resolution.has_value()) validate_resolution(*this, *resolution);
}

QuantileGrid QuantileRange::grid() const {
  validate();
  if (resolution.has_value()) {
    const double steps = std::nearbyint((upper - lower) / *resolution);  // validate(): in [1, 2^40]
    return QuantileGrid{lower, *resolution, static_cast<std::uint64_t>(steps) + 1, true};
  }
  QuantileGrid grid{lower, range_grid_step(*this), 0};
  // floor((upper - lower) / step) + 1 points, corrected for the roundings of the division and of point().
  std::uint64_t last = std::min(kGridSteps, static_cast<std::uint64_t>(std::floor((upper - lower) / grid.step)));
  while (last > 0 && grid.point(last) > upper) --last;
  while (last < kGridSteps && grid.point(last + 1) <= upper) ++last;
  grid.size = last + 1;
  return grid;
}

QuantileData::QuantileData(std::shared_ptr<const Storage> storage) : storage_(std::move(storage)) {}
QuantileData::QuantileData(std::span<const double> values, const QuantileRange& range)
    : storage_(prepare_host(values, range)) {}
QuantileData::QuantileData(std::span<const float> values, const QuantileRange& range)
    : storage_(prepare_host(values, range)) {}
QuantileData::QuantileData(const ChunkedValues<double>& values, const QuantileRange& range)
    : storage_(prepare_host(values, range)) {}
QuantileData::QuantileData(const ChunkedValues<float>& values, const QuantileRange& range)
    : storage_(prepare_host(values, range)) {}

QuantileData QuantileData::from_device(DeviceSpan<const double> values, const QuantileRange& range,
                                       cuda_stream_t stream) {
  return prepare_device(values, range, stream);
}

QuantileData QuantileData::from_device(DeviceSpan<const float> values, const QuantileRange& range,
                                       cuda_stream_t stream) {
  return prepare_device(values, range, stream);
}

std::uint64_t QuantileData::size() const { return storage_->count; }
const QuantileRange& QuantileData::range() const { return storage_->range; }
QuantileGrid QuantileData::grid() const { return storage_->grid; }
bool QuantileData::on_device() const { return storage_->on_device(); }

void detail::sort_positions_in_place(std::vector<std::uint64_t>& positions) {
  if (positions.size() < 2) return;
  const auto [smallest, largest] = std::minmax_element(positions.begin(), positions.end());
  if (*smallest != *largest) sort_by_highest_differing_bits(positions, *smallest ^ *largest);
}

std::vector<std::uint64_t> detail::sorted_slots(const QuantileData& data) {
  const QuantileData::Storage& storage = data.storage();
  if (storage.on_device()) return gpu_read_quantile_positions(storage, 0, storage.count);
  const std::span<const std::uint64_t> sorted = storage.sorted_host_positions();
  return {sorted.begin(), sorted.end()};
}

std::vector<std::uint64_t> QuantileData::sorted_positions() const {
  std::vector<std::uint64_t> positions = detail::sorted_slots(*this);
  for (std::uint64_t& slot : positions) slot = detail::grid_position_of_slot(slot);
  return positions;
}

}  // namespace dpselect
