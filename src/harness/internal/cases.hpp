// cases.hpp — naming of cases and the --list lines.
//
// A case's identity is "bench variant[ params][ @placement]": the same
// string in --list, in every sample and in the reports, so a driver and the
// scripts never need a second table of cases.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/bench.hpp"

namespace kbench {

// "k=v,k=v", sorted by key.
std::string canonical_params(const Params& p);
const char* metric_name(Metric m);

// one-party: "unpinned" or "pinned"; two-party: "same", "cross",
// "unpinned", or "mixed" (only one side pinned).
std::string placement_name(bool two_party, std::optional<int> cpu, std::optional<int> partner_cpu);

std::string case_name(const std::string& bench, const std::string& variant, const Params& p,
                      bool two_party, const std::string& placement);

// The --list lines of a binary: identity, args and the declaration
// (category, rank, direction, unit, summary, curve). `category` is the
// binary's default. `cpus` are the CPUs to offer for same and cross
// placements (the first two allowed; with one CPU the cross case names a
// CPU that is not there and will be skipped with 77 when run). A summary
// column that matches none of the binary's cases is a bug: exit 1.
std::vector<std::string> list_lines(const std::string& bench, const std::optional<Category>& category,
                                    const std::vector<CaseSpec>& specs, const std::vector<int>& cpus);

}  // namespace kbench
