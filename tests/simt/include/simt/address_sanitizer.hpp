// SPDX-License-Identifier: Apache-2.0
// SIMT_ADDRESS_SANITIZER: defined where AddressSanitizer instruments this translation unit (clang's
// __has_feature, GCC's __SANITIZE_ADDRESS__): the runtime then tells ASan of its fiber switches
// and poisons what lies past each allocation. Test-tree only.
#pragma once

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIMT_ADDRESS_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(SIMT_ADDRESS_SANITIZER)
#define SIMT_ADDRESS_SANITIZER 1
#endif
