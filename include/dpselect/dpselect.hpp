// SPDX-License-Identifier: Apache-2.0
/// @file
/// dpselect: differentially private selection over very large output ranges.
/// The plain-C++ public API (no CUDA headers). CUDA applications that pass their own utility
/// functor to the GPU also include dpselect/select.cuh.
///
/// Includes every public header except `<dpselect/select.cuh>` (CUDA only), `<dpselect/io.hpp>`
/// (opt-in: it pulls in `<ostream>`), `<dpselect/audit.hpp>` (the empirical privacy auditor) and
/// `<dpselect/mpi.hpp>` (the optional `dpselect::mpi` target); `<dpselect/version.hpp>` is generated
/// by the build. Link `dpselect::dpselect`:
/// @code{.cpp}
/// #include <dpselect/dpselect.hpp>
///
/// dpselect::Context context;                 // secret key from the OS CSPRNG (getrandom)
/// dpselect::SelectionParams params{.epsilon = 1.0, .sensitivity = 1.0};
/// dpselect::Selection pick = dpselect::select(context, std::span<const float>(utility), params);
/// @endcode
#pragma once

#include "dpselect/accounting.hpp"
#include "dpselect/chunked_values.hpp"
#include "dpselect/context.hpp"
#include "dpselect/continuous_noise.hpp"
#include "dpselect/device_memory.hpp"
#include "dpselect/discrete_noise.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/generalized_gaussian.hpp"
#include "dpselect/linf_answers.hpp"
#include "dpselect/noise.hpp"
#include "dpselect/noise_vector.hpp"
#include "dpselect/partition_selection.hpp"
#include "dpselect/partition_ticket.hpp"
#include "dpselect/philox.hpp"
#include "dpselect/pricing.hpp"
#include "dpselect/quantiles.hpp"
#include "dpselect/random_key.hpp"
#include "dpselect/release_ticket.hpp"
#include "dpselect/rows.hpp"
#include "dpselect/secure_noise.hpp"
#include "dpselect/select.hpp"
#include "dpselect/select_functor.hpp"
#include "dpselect/sparse_vector.hpp"
#include "dpselect/shard_result.hpp"
#include "dpselect/top_k.hpp"
#include "dpselect/types.hpp"
#include "dpselect/version.hpp"
