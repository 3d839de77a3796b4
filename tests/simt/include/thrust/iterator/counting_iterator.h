// SPDX-License-Identifier: Apache-2.0
// thrust::counting_iterator for the simt build: the random-access reads the CUB shims make.
#pragma once

#include <cstddef>

namespace thrust {

template <class T>
class counting_iterator {
 public:
  explicit counting_iterator(T first) : value_(first) {}
  T operator*() const { return value_; }
  T operator[](std::ptrdiff_t offset) const { return static_cast<T>(value_ + offset); }
  counting_iterator operator+(std::ptrdiff_t offset) const { return counting_iterator(static_cast<T>(value_ + offset)); }
  counting_iterator& operator++() {
    ++value_;
    return *this;
  }

 private:
  T value_;
};

}  // namespace thrust
