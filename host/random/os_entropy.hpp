// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>

namespace dpselect::detail {

// Fills `size` bytes from the operating system's CSPRNG (getrandom(2), blocking until the pool
// is initialised). Throws std::system_error on failure; never falls back to a weaker source.
void fill_from_os_entropy(void* buffer, std::size_t size);

}  // namespace dpselect::detail
