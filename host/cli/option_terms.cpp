// SPDX-License-Identifier: Apache-2.0
#include "option_terms.hpp"

#include <cctype>
#include <utility>
#include <vector>

namespace dpselect::cli {
namespace {

// A library name and the option spelling that replaces it. Longer phrases come before the
// words they contain, since the first entry that matches wins.
using Terms = std::vector<std::pair<std::string_view, std::string_view>>;

const Terms& backend_terms() {
  static const Terms terms{
      {"backend Gpu", "--backend gpu"},
      {"backend must be Cpu or Auto", "--backend must be cpu or auto"},
      {"backend must be Gpu or Auto", "--backend must be gpu or auto"},
      {"(got Gpu)", "(got gpu)"},
      {"(got Cpu)", "(got cpu)"},
  };
  return terms;
}

const Terms& selection_terms() {
  static const Terms terms{
      {"(utility_bound; for pricing, max_bidders)", "(--utility-bound)"},
      {"utility_bound", "--utility-bound"},
      {"utility_reference", "--utility-reference"},
      {"epsilon", "--epsilon"},
      {"sensitivity", "--sensitivity"},
      {"mechanism", "--mechanism"},
      {"laplace-noisy-max", "laplace"},
      {"laplace_noisy_max", "laplace"},
      {"permute_and_flip", "permute-and-flip"},
  };
  return terms;
}

// topk hands the library the epsilon of one pick: --epsilon / --k.
const Terms& top_k_terms() {
  static const Terms terms{
      {"(utility_bound; for pricing, max_bidders)", "(--utility-bound)"},
      {"utility_bound", "--utility-bound"},
      {"utility_reference", "--utility-reference"},
      {"epsilon", "--epsilon / --k"},
      {"sensitivity", "--sensitivity"},
      {"k", "--k"},
  };
  return terms;
}

const Terms& pricing_terms() {
  static const Terms terms{
      // A price's utility is its revenue, bounded through the number of bidders.
      {"a public bound on |utility| (utility_bound; for pricing, max_bidders)",
       "a public --max-bidders"},
      {"max_bidders,", "--max-bidders"},
      {"max_bidders", "--max-bidders"},
      {"a price range", "--range"},
      {"the bid-interval sampler", "--grid-sampler bid-intervals"},
      {"epsilon", "--epsilon"},
      {"mechanism", "--mechanism"},
      {"laplace-noisy-max", "laplace"},
      {"laplace_noisy_max", "laplace"},
      {"permute_and_flip", "permute-and-flip"},
  };
  return terms;
}

const Terms& sparse_vector_terms() {
  static const Terms terms{
      {"algorithm lyu_su_li", "--algorithm lyu-su-li"},
      {"algorithm dwork_roth", "--algorithm dwork-roth"},
      {"lyu_su_li", "lyu-su-li"},
      {"dwork_roth", "dwork-roth"},
      {"max_positives (c)", "--max-positives"},
      {"max_positives", "--max-positives"},
      {"for NumericSparse", "with --numeric"},
      {"value_bound", "--value-bound"},
      {"epsilon", "--epsilon"},
      {"delta", "--delta"},
      {"sensitivity", "--sensitivity"},
      {"threshold", "--threshold"},
      {"monotone", "--monotone"},
  };
  return terms;
}

const Terms& quantile_terms() {
  static const Terms terms{
      // The utility of a quantile is a count, bounded through the number of values.
      {"a public bound on |utility| (utility_bound; for pricing, max_bidders)", "a public --max-points"},
      {"on these utilities", "on these data"},
      {"max_points", "--max-points"},
      {"range lower", "--range LOWER"},
      {"range upper", "--range UPPER"},
      {"epsilon", "--epsilon"},
      {"delta", "--delta"},
  };
  return terms;
}

const Terms& keys_terms() {
  static const Terms terms{
      {"max_partitions", "--max-partitions"},
      {"round_budget_ratio", "--round-budget-ratio"},
      {"policy_cutoff_sigmas", "--policy-cutoff"},
      {"pre_threshold", "--pre-threshold"},
      {"epsilon", "--epsilon"},
      {"delta", "--delta"},
  };
  return terms;
}

const Terms& audit_terms() {
  static const Terms terms{
      {"selection_runs", "--selection-runs"},
      {"runs", "--runs"},
      {"confidence", "--confidence"},
  };
  return terms;
}

const Terms& terms_of(std::string_view subcommand) {
  static const Terms none;
  if (subcommand == "select" || subcommand == "rows") return selection_terms();
  if (subcommand == "topk") return top_k_terms();
  if (subcommand == "price" || subcommand == "demo") return pricing_terms();
  if (subcommand == "svt") return sparse_vector_terms();
  if (subcommand == "quantile") return quantile_terms();
  if (subcommand == "keys") return keys_terms();
  if (subcommand == "audit") return audit_terms();
  return none;
}

// Part of a name: a term must not start or end inside one ("delta" in "delta_lower", or an
// option already spelled --delta).
bool name_character(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
}

// The entry of `terms` that matches `message` at `at` as whole words, or nullptr.
const std::pair<std::string_view, std::string_view>* term_at(const Terms& terms,
                                                             std::string_view message,
                                                             std::size_t at) {
  if (at > 0 && name_character(message[at - 1])) return nullptr;
  for (const auto& term : terms) {
    const std::size_t end = at + term.first.size();
    if (message.substr(at).starts_with(term.first) &&
        (end == message.size() || !name_character(term.first.back()) ||
         !name_character(message[end]))) {
      return &term;
    }
  }
  return nullptr;
}

}  // namespace

std::string in_option_terms(std::string_view subcommand, std::string_view message) {
  const Terms* tables[] = {&backend_terms(), &terms_of(subcommand)};
  std::string text;
  for (std::size_t at = 0; at < message.size();) {
    const std::pair<std::string_view, std::string_view>* term = nullptr;
    for (const Terms* table : tables) {
      if ((term = term_at(*table, message, at)) != nullptr) break;
    }
    if (term != nullptr) {
      text += term->second;
      at += term->first.size();
    } else {
      text += message[at++];
    }
  }
  return text;
}

std::string in_option_terms(const CLI::App& app, std::string_view message) {
  const std::vector<CLI::App*> parsed = app.get_subcommands();
  return in_option_terms(parsed.empty() ? std::string_view() : parsed.front()->get_name(), message);
}

}  // namespace dpselect::cli
