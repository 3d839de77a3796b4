// SPDX-License-Identifier: Apache-2.0
// A budget of (1, 1e-6) spread over 100 exponential-mechanism releases, charged as they happen.
#include <dpselect/dpselect.hpp>
#include <dpselect/io.hpp>

#include <cstdint>
#include <iostream>
#include <memory>
#include <vector>

int main() {
  dpselect::Context context;
  dpselect::SelectionParams params;
  params.sensitivity = 1.0;
  const std::vector<float> utility = {4.0f, 8.0f, 15.0f, 16.0f, 23.0f, 42.0f};
  // [doc:accounting]
  auto accountant = std::make_shared<dpselect::PrivacyAccountant>(
      dpselect::PrivacyBound{.epsilon = 1.0, .delta = 1e-6});                  // thread-safe
  context.charge_to(accountant);
  const double eps = dpselect::per_release_epsilon(100, 1.0, 1e-6, dpselect::ReleaseKind::exponential_mechanism);
  params.epsilon = eps;                                                        // 0.044, not 0.01
  std::vector<std::uint64_t> picks;
  for (int i = 0; i < 100; ++i) {
    picks.push_back(dpselect::select(context, std::span<const float>(utility), params).index);  // charged
  }
  dpselect::AccountedBound spent = accountant->spent();   // (<= 1, <= 1e-6) and the theorem used
  std::cout << "spent epsilon " << spent.epsilon << ", delta " << spent.delta << " by " << spent.route << '\n';
  // [/doc:accounting]
  bool refused = false;
  try {
    dpselect::select(context, std::span<const float>(utility), params);
  } catch (const dpselect::BudgetExceeded&) {
    refused = true;  // the budget is spent: nothing was released
  }
  std::cout << "per-release epsilon " << eps << "; a 101st release " << (refused ? "was refused" : "was made")
            << '\n';
  return spent.epsilon <= 1.0 && spent.delta <= 1e-6 ? 0 : 1;
}
