// SPDX-License-Identifier: Apache-2.0
// The public noise math compiled twice, with the library's flags and with a consumer's
// (-O2 -mfma -ffp-contract=fast): contraction_test.cpp compares the two bit for bit.
#pragma once

#include <cstddef>

namespace dpselect_contraction_probe {

// out[i] = portable_log(in[i]), portable_exp(in[i]) and portable_log1m(in[i]).
void log_values_unfused(const double* in, double* out, std::size_t n);
void exp_values_unfused(const double* in, double* out, std::size_t n);
void log1m_values_unfused(const double* in, double* out, std::size_t n);
void log_values_fma_fast(const double* in, double* out, std::size_t n);
void exp_values_fma_fast(const double* in, double* out, std::size_t n);
void log1m_values_fma_fast(const double* in, double* out, std::size_t n);

}  // namespace dpselect_contraction_probe
