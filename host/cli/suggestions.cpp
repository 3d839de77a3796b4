// SPDX-License-Identifier: Apache-2.0
#include "suggestions.hpp"

#include <algorithm>
#include <numeric>

namespace dpselect::cli {
namespace {

std::string_view without_dashes(std::string_view name) {
  while (name.starts_with('-')) name.remove_prefix(1);
  return name;
}

// A typo changes a few characters: more edits than this on a short name is another word.
std::size_t typo_limit(std::size_t length) {
  if (length <= 2) return 0;
  if (length <= 4) return 1;
  return length <= 8 ? 2 : 3;
}

// More suggestions than this read as a list of the options, which --help already gives.
constexpr std::size_t most_suggestions = 3;

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the dynamic-programming table: the transposition looks two rows back.
  std::vector<std::size_t> before_previous(b.size() + 1), previous(b.size() + 1),
      current(b.size() + 1);
  std::iota(previous.begin(), previous.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        current[j] = std::min(current[j], before_previous[j - 2] + 1);
      }
    }
    std::swap(before_previous, previous);
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::vector<std::string> closest_names(std::string_view typed,
                                       const std::vector<std::string>& known) {
  const std::string_view body = without_dashes(typed.substr(0, typed.find('=')));
  std::vector<std::string> names;
  if (body.empty()) return names;
  for (const std::string& name : known) {
    if (without_dashes(name).starts_with(body)) names.push_back(name);
  }
  if (!names.empty()) {
    if (names.size() > most_suggestions) names.clear();
    return names;
  }
  const std::size_t limit = typo_limit(body.size());
  std::size_t nearest = limit;
  for (const std::string& name : known) {
    const std::size_t distance = edit_distance(body, without_dashes(name));
    if (distance > limit) continue;
    if (distance < nearest) {
      nearest = distance;
      names.clear();
    }
    if (distance == nearest) names.push_back(name);
  }
  if (names.size() > most_suggestions) names.clear();
  return names;
}

std::string did_you_mean(const std::vector<std::string>& names) {
  if (names.empty()) return {};
  std::string text = " (did you mean ";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) text += i + 1 == names.size() ? " or " : ", ";
    text += names[i];
  }
  return text + "?)";
}

}  // namespace dpselect::cli
