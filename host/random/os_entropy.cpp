// SPDX-License-Identifier: Apache-2.0
#include "random/os_entropy.hpp"

#include <cerrno>
#include <cstdint>
#include <system_error>

#include <sys/random.h>

namespace dpselect::detail {

void fill_from_os_entropy(void* buffer, std::size_t size) {
  auto* bytes = static_cast<std::uint8_t*>(buffer);
  while (size > 0) {
    const ssize_t got = getrandom(bytes, size, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "dpselect: getrandom failed");
    }
    bytes += got;
    size -= static_cast<std::size_t>(got);
  }
}

}  // namespace dpselect::detail
