#include <dpselect/dpselect.hpp>

#include <cstdio>
#include <vector>

int main() {
  dpselect::Context context;  // OS entropy
  const std::vector<double> utilities = {0.0, 10.0, 1.0};
  dpselect::SelectionParams params;
  params.epsilon = 4.0;
  params.sensitivity = 1.0;
  params.backend = dpselect::Backend::Cpu;
  const dpselect::Selection s = dpselect::select(context, std::span<const double>(utilities), params);
  std::printf("consumer: index %llu on %s\n", static_cast<unsigned long long>(s.index),
              dpselect::to_string(s.report.executed_on).data());
  return s.index < utilities.size() ? 0 : 1;
}
