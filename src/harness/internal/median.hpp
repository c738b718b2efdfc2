// median.hpp — the one median of the C++ side.
//
// The headline of a binary's human line (median ns/op of its samples) and
// of kbench-run's own table (median of the rep medians), and the rep values
// of its budget rounds. scripts/kbench/model/stats.py computes the same for the
// reports.
#pragma once

#include <vector>

namespace kbench {

// The median of `v`: the middle value, or the mean of the middle two for an
// even count; 0 when empty.
double median_of(std::vector<double> v);

}  // namespace kbench
