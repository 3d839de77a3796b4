// SPDX-License-Identifier: Apache-2.0
// A small thread-safe memo for the deterministic calibrations (the analytic Gaussian sigma, the
// generalized Gaussian sigma, the secure-noise plan): each costs from ~50 microseconds to ~1 s and
// mechanisms call it again with the same parameters on every release. Keeps the last Capacity
// results (FIFO). A computation that throws stores nothing; the computation runs outside the lock.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

namespace dpselect::detail {

template <class Key, class Value, std::size_t Capacity = 64>
class CalibrationCache {
 public:
  template <class Compute>
  Value get(const Key& key, Compute compute) {
    if (std::optional<Value> cached = find(key)) return *std::move(cached);
    Value value = compute();
    insert(key, value);
    return value;
  }

 private:
  std::optional<Value> find(const Key& key) {
    const std::lock_guard lock(mutex_);
    for (const auto& [k, v] : entries_) {
      if (k == key) return v;
    }
    return std::nullopt;
  }

  void insert(const Key& key, const Value& value) {
    const std::lock_guard lock(mutex_);
    if (entries_.size() < Capacity) {
      entries_.emplace_back(key, value);
    } else {
      entries_[next_] = {key, value};
      next_ = (next_ + 1) % Capacity;
    }
  }

  std::mutex mutex_;
  std::vector<std::pair<Key, Value>> entries_;
  std::size_t next_ = 0;
};

}  // namespace dpselect::detail
