// median.cpp — see median.hpp.
#include "harness/internal/median.hpp"

#include <algorithm>

namespace kbench {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace kbench
