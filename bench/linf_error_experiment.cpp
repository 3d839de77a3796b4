// SPDX-License-Identifier: Apache-2.0
// The l_inf error of answering k counting queries at (epsilon, delta) (Ganesh & Zhao 2021):
// Laplace, Gaussian, the generalized Gaussian with the best fixed p, and the generalized Gaussian
// composed with the sparse vector technique (linf_answers.hpp). Prints one Markdown table:
// E ||released - d||_inf (mean over trials, with its standard error) per mechanism and k.
//
//   ./build/cpu-only/bench/dpselect_linf_experiment [--max-k 10000000] [--epsilon 1] [--delta 1e-6]
//
// Fixed seeds (data and keys): the table is reproducible bit for bit on any machine.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "dpselect/context.hpp"
#include "dpselect/generalized_gaussian.hpp"
#include "dpselect/linf_answers.hpp"
#include "dpselect/noise_vector.hpp"

namespace {

struct Options {
  double epsilon = 1.0;
  double delta = 1e-6;
  std::uint64_t max_k = 10'000'000;
};

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--epsilon") == 0) {
      options.epsilon = std::strtod(argv[i + 1], nullptr);
    } else if (std::strcmp(argv[i], "--delta") == 0) {
      options.delta = std::strtod(argv[i + 1], nullptr);
    } else if (std::strcmp(argv[i], "--max-k") == 0) {
      options.max_k = std::strtoull(argv[i + 1], nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: %s [--max-k K] [--epsilon E] [--delta D]\n", argv[0]);
      std::exit(2);
    }
  }
  return options;
}

std::vector<double> counting_answers(std::uint64_t k) {
  std::mt19937_64 rng(0xC0DA7A + k);
  std::uniform_int_distribution<int> count(0, 999);
  std::vector<double> answers(k);
  for (double& a : answers) a = count(rng);
  return answers;
}

double linf_distance(std::span<const double> a, std::span<const double> b) {
  double largest = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) largest = std::max(largest, std::fabs(a[i] - b[i]));
  return largest;
}

struct Estimate {
  double mean = 0.0;
  double standard_error = 0.0;
};

// Mean and standard error over `trials` runs of release(context, values) on fresh copies of d.
template <class Release>
Estimate measure(const std::vector<double>& truth, int trials, std::uint64_t seed, Release release) {
  dpselect::Context context = dpselect::Context::with_fixed_seed(seed);
  std::vector<double> errors;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> values = truth;
    release(context, std::span<double>(values));
    errors.push_back(linf_distance(values, truth));
  }
  Estimate e;
  for (double x : errors) e.mean += x / trials;
  double variance = 0.0;
  for (double x : errors) variance += (x - e.mean) * (x - e.mean) / std::max(1, trials - 1);
  e.standard_error = std::sqrt(variance / trials);
  return e;
}

std::string cell(const Estimate& e) {
  char text[64];
  std::snprintf(text, sizeof text, "%.4g ± %.2g", e.mean, e.standard_error);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  std::printf("E||released - d||_inf for k counting queries at epsilon = %g, delta = %g (mean ± standard error "
              "over the trials; generator ChaCha20, fixed seeds)\n\n",
              options.epsilon, options.delta);
  std::printf("| k | trials | Laplace | Gaussian | GG, best fixed p | GG + sparse vector (plan) | Gaussian / GG+SV |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (std::uint64_t k = 100; k <= options.max_k; k *= 10) {
    const int trials = k <= 100'000 ? 20 : (k <= 1'000'000 ? 6 : 3);
    const std::vector<double> truth = counting_answers(k);
    const auto started = std::chrono::steady_clock::now();

    const Estimate laplace = measure(truth, trials, 1, [&](dpselect::Context& c, std::span<double> v) {
      // k counting queries: L1 sensitivity k (Dwork & Roth Thm 3.6).
      dpselect::add_noise(c, v, {.distribution = dpselect::NoiseDistribution::laplace, .epsilon = options.epsilon,
                                 .sensitivity = static_cast<double>(k)});
    });
    const Estimate gaussian = measure(truth, trials, 2, [&](dpselect::Context& c, std::span<double> v) {
      // L2 sensitivity sqrt(k) (Balle & Wang 2018).
      dpselect::add_noise(c, v, {.distribution = dpselect::NoiseDistribution::gaussian, .epsilon = options.epsilon,
                                 .delta = options.delta, .sensitivity = std::sqrt(static_cast<double>(k))});
    });
    const double p_grid[] = {1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 8.0};
    const dpselect::GeneralizedGaussianChoice best =
        dpselect::generalized_gaussian_best_p(options.epsilon, options.delta, k, p_grid);
    const Estimate generalized = measure(truth, trials, 3, [&](dpselect::Context& c, std::span<double> v) {
      // L_inf sensitivity 1 (Ganesh & Zhao 2021).
      dpselect::add_noise(c, v, {.distribution = dpselect::NoiseDistribution::generalized_gaussian,
                                 .epsilon = options.epsilon, .delta = options.delta, .sensitivity = 1.0,
                                 .p = best.p});
    });
    const dpselect::LinfAnswerParams composed_params{.epsilon = options.epsilon, .delta = options.delta};
    const dpselect::LinfAnswerPlan plan = dpselect::plan_linf_answers(composed_params, k);
    const Estimate composed = measure(truth, trials, 4, [&](dpselect::Context& c, std::span<double> v) {
      dpselect::answer_counting_queries(c, v, composed_params);
    });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::printf("| %llu | %d | %s | %s | %s (p = %g) | %s (p = %g, c = %llu, %s) | %.2f |\n",
                static_cast<unsigned long long>(k), trials, cell(laplace).c_str(), cell(gaussian).c_str(),
                cell(generalized).c_str(), best.p, cell(composed).c_str(), plan.p,
                static_cast<unsigned long long>(plan.check.max_positives),
                plan.repair_with_sparse_vector ? std::string(dpselect::to_string(plan.check.algorithm)).c_str() : "-",
                gaussian.mean / composed.mean);
    std::fflush(stdout);
    std::fprintf(stderr, "k = %llu done in %.1f s\n", static_cast<unsigned long long>(k), seconds);
  }
  return 0;
}
