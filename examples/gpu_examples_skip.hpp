// SPDX-License-Identifier: Apache-2.0
// The GPU examples exit with this status where no CUDA device is usable, so that CTest reports
// them as skipped (SKIP_RETURN_CODE) rather than passed.
#pragma once

inline constexpr int kNoUsableGpuExitCode = 77;
