// runner.hpp — bench_main with explicit arguments and output stream.
//
// bench_main (bench.hpp) is this with argv and stdout; the unit tests call
// it directly to run a binary's cases in-process.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "harness/bench.hpp"

namespace kbench {

// Parses `args`, then lists (--list), explains (--help) or runs one case of
// `specs`, writing its samples to `out`; returns the exit status.
// `category` is the default of every case that declares none.
int run_main(const char* name, const std::vector<CaseSpec>& specs, const std::vector<std::string>& args,
             FILE* out, const std::optional<Category>& category = std::nullopt);

}  // namespace kbench
