// SPDX-License-Identifier: Apache-2.0
// The sparse vector technique over 1,000 query answers: streaming, then as one batch.
#include <dpselect/dpselect.hpp>
#include <dpselect/io.hpp>

#include <iostream>
#include <vector>

int main() {
  dpselect::Context context;
  std::vector<double> answers(1000, 100.0);   // f_i(D): most far below the threshold...
  answers[250] = 900.0;                        // ...a few far above it
  answers[600] = 950.0;
  answers[800] = 1000.0;
  // [doc:sparse_vector]
  dpselect::SparseVectorParams svt{.epsilon = 1.0, .sensitivity = 1.0, .threshold = 500.0,
                                   .max_positives = 3};        // Sparse with c = 3; c = 1 is AboveThreshold
  dpselect::SparseVector sparse(context, svt);
  for (double answer : answers) {                              // f_i(D), chosen adaptively
    if (sparse.answer(answer).above && sparse.halted()) break; // answer() throws once halted
  }
  auto batch = dpselect::sparse_vector_batch(context, std::span<const double>(answers), svt);
  // batch.above: the "above" answers (index, NumericSparse value); batch.report.queries answered
  double alpha = dpselect::sparse_vector_alpha(svt, 1000, 0.05);  // Dwork & Roth 2014, Thm 3.26

  svt.algorithm = dpselect::SparseVectorAlgorithm::lyu_su_li;  // one threshold, optimized split
  svt.monotone = true;                                         // counting queries: half the query noise
  // [/doc:sparse_vector]
  auto optimized = dpselect::sparse_vector_batch(context, std::span<const double>(answers), svt);
  std::cout << "streaming: " << sparse.report().positives << " above in " << sparse.report().queries
            << " queries; batch: " << batch.above.size() << " above; " << svt.algorithm << ": "
            << optimized.above.size() << " above; alpha " << alpha << '\n';
  return batch.above.size() <= svt.max_positives ? 0 : 1;
}
