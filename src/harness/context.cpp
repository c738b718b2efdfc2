// context.cpp — parameter access and the case's temporary directory.
#include <algorithm>
#include <cstdio>

#include "harness/bench.hpp"
#include "harness/files.hpp"
#include "harness/internal/options.hpp"

namespace kbench {

const std::string& Context::param(const std::string& key) const {
  const auto it = params_.find(key);
  // A fixture asking for a key its case does not declare is a bug in the
  // benchmark, not a user error.
  if (it == params_.end()) die("internal error: parameter '" + key + "' is not declared by this case");
  return it->second;
}

std::uint64_t Context::param_u64(const std::string& key) const {
  std::uint64_t v = 0;
  if (!parse_u64(param(key), v))
    bad_param("bad value '" + param(key) + "' for parameter " + key + " (a whole number)");
  return v;
}

std::uint64_t Context::param_u64(const std::string& key, std::uint64_t lo, std::uint64_t hi) const {
  const std::uint64_t v = param_u64(key);
  if (v < lo || v > hi)
    bad_param(key + " must be between " + std::to_string(lo) + " and " + std::to_string(hi));
  return v;
}

const std::string& Context::param_choice(const std::string& key,
                                         const std::vector<std::string>& allowed) const {
  const std::string& v = param(key);
  if (std::find(allowed.begin(), allowed.end(), v) == allowed.end()) {
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    bad_param("bad value '" + v + "' for parameter " + key + " (one of: " + list + ")");
  }
  return v;
}

const std::string& Context::temp_dir() {
  if (temp_dir_.empty()) temp_dir_ = make_temp_dir(bench_);
  return temp_dir_;
}

}  // namespace kbench
