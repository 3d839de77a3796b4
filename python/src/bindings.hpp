// SPDX-License-Identifier: Apache-2.0
// The pieces of the extension module dpselect._dpselect (nanobind), one function per concern.
#pragma once

#include <nanobind/nanobind.h>

namespace dpselect::python {

void bind_errors(nanobind::module_& m);         // exceptions: errors.cpp
void bind_types(nanobind::module_& m);          // enums, params, reports, Context, accountant: types.cpp
void bind_selection(nanobind::module_& m);      // select, top-k, rows, repeated: selection.cpp
void bind_releases(nanobind::module_& m);       // Release, ReleaseTicket, ShardResult, merge: releases.cpp
void bind_pricing(nanobind::module_& m);        // Bids, grids, ranges, select_price: pricing.cpp
void bind_quantiles(nanobind::module_& m);      // QuantileData, select_quantile(s), calculators: quantiles.cpp
void bind_sparse_vector(nanobind::module_& m);  // SparseVector, the batch, calculators: sparse_vector.cpp
void bind_noise(nanobind::module_& m);          // noise vectors, secure noise, the l-inf answerer: noise.cpp
void bind_accounting(nanobind::module_& m);     // composition, zCDP, budget splits: accounting.cpp
void bind_audit(nanobind::module_& m);          // the empirical privacy auditor: audit.cpp
void bind_partition_selection(nanobind::module_& m);  // strategies, keep probabilities: partition_selection.cpp
void bind_string_ids(nanobind::module_& m);  // str, bytes and Arrow ids numbered in C++: string_ids.cpp

}  // namespace dpselect::python
