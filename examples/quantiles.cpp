// SPDX-License-Identifier: Apache-2.0
// Private quantiles of 100,000 synthetic incomes over the public range [0, 500000]: the median,
// then the deciles with JointExp; and the median of 100,000 whole ages, with a public resolution.
#include <dpselect/dpselect.hpp>

#include <cmath>
#include <iostream>
#include <random>
#include <vector>

int main() {
  dpselect::Context context;
  std::mt19937_64 generator(1);
  std::lognormal_distribution<double> lognormal(std::log(40'000.0), 0.8);
  std::vector<double> incomes(100'000);
  for (double& income : incomes) income = lognormal(generator);
  std::binomial_distribution<int> years(100, 0.4);
  std::vector<double> ages(100'000);
  for (double& age : ages) age = years(generator);  // whole years: many ties
  // [doc:quantiles]
  dpselect::QuantileParams params;
  params.range = {0.0, 500'000.0};  // public bounds: values outside are clipped to them
  params.epsilon = 1.0;
  const dpselect::QuantileData data(std::span<const double>(incomes), params.range);  // sorted once
  dpselect::QuantileRelease median = dpselect::select_quantile(context, data, 0.5, params);
  // median.value: a point of the range's 2^40 + 1 point grid; with probability >= 95% its rank
  // error is at most alpha + 1/2 (Dwork & Roth 2014, Thm 3.11; ties add to the 1/2):
  double alpha = dpselect::quantile_rank_error_bound(params, 0.5, 0.05);

  dpselect::QuantilesParams several{.base = params, .method = dpselect::QuantilesMethod::joint_exponential};
  const std::vector<double> deciles = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9};
  dpselect::QuantilesRelease joint = dpselect::select_quantiles(context, data, deciles, several);
  // joint.values: nine sorted grid points for epsilon = 1 in all (Gillenwater, Joseph & Kulesza 2021)

  // Whole ages: a public resolution of 1 makes the outputs whole ages, and an age held by many
  // people that holds the median's rank can be released itself (its rank error counting ties: 0).
  dpselect::QuantileParams by_year{.range = {0.0, 120.0, 1.0}, .epsilon = 1.0};
  const dpselect::QuantileData age_data(std::span<const double>(ages), by_year.range);
  const double median_age = dpselect::select_quantile(context, age_data, 0.5, by_year).value;
  // [/doc:quantiles]
  std::cout << "median " << median.value << " (rank error <= " << alpha << " + 1/2 w.p. 95%)\n";
  bool ordered = true;
  for (std::size_t j = 0; j < joint.values.size(); ++j) {
    std::cout << "decile " << deciles[j] << ": " << joint.values[j] << '\n';
    if (j > 0 && joint.values[j] < joint.values[j - 1]) ordered = false;
  }
  std::cout << "median age " << median_age << '\n';
  const bool median_in_range = median.value >= 0.0 && median.value <= 500'000.0;
  const bool whole_age = median_age == std::round(median_age);
  return ordered && median_in_range && whole_age ? 0 : 1;
}
