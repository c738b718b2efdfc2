// scaling.cpp — the scaling cases of kbench-run --scaling (see scaling.hpp).
#include "driver/scaling.hpp"

#include <algorithm>
#include <regex.h>
#include <set>

#include "driver/json_value.hpp"

namespace kbench::driver {

const char* const kDefaultScaling =
    "^(lat_syscall null|lat_pagefault anon|lat_proc fork|lat_pipe rt @same|"
    "lat_udp rt family=ipv4,size=1 @(same|cross)|lat_fs create dir=default,mode=fresh,size_kb=0|ctl_machine alu)$";
const char* const kThreadsScaling = "^(lat_pagefault anon|lat_mmap mmap|lat_fs create)( |$)";

namespace {

bool matches(const char* ere, const std::string& text) {
  regex_t re;
  if (regcomp(&re, ere, REG_EXTENDED | REG_NOSUB) != 0) return false;
  const bool m = regexec(&re, text.c_str(), 0, nullptr, 0) == 0;
  regfree(&re);
  return m;
}

// The base's args without its placement options.
std::vector<std::string> unplaced(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if ((args[i] == "--cpu" || args[i] == "--partner-cpu") && i + 1 < args.size()) {
      ++i;
      continue;
    }
    out.push_back(args[i]);
  }
  return out;
}

}  // namespace

std::vector<int> scaling_counts(int cpus) {
  std::vector<int> out;
  for (int n = 1; n < cpus; n *= 2) out.push_back(n);
  out.push_back(std::max(cpus, 1));
  return out;
}

void add_scaling_cases(Discovery& found, const std::string& ere, int cpus) {
  std::vector<Case> added;
  std::set<std::string> names;
  for (const auto& base : found.cases) {
    if (!matches(ere.c_str(), base.name)) continue;
    const bool two_party = base.name.find(" @") != std::string::npos;
    // A pair per CPU (@same) or pairs across CPUs (@cross: --cross-pairs).
    if (two_party && base.placement != "same" && base.placement != "cross") continue;
    const bool cross = two_party && base.placement == "cross";
    std::vector<std::string> modes = {"processes"};
    if (!two_party && matches(kThreadsScaling, base.name)) modes.push_back("threads");
    const auto decl = json_parse(base.declaration, nullptr);
    for (const auto& mode : modes) {
      for (int n : scaling_counts(cpus)) {
        Case c = base;
        c.control = false;  // a scaled control traces no machine speed: a scaling case like the others
        c.name = base.name + (mode == "threads" ? " threads" : "") + " x" + std::to_string(n);
        if (!names.insert(c.name).second) continue;
        c.placement = two_party ? (cross ? "cross" : "same") : "pinned";
        c.args = unplaced(base.args);
        c.args.insert(c.args.end(), {"--copies", std::to_string(n)});
        if (cross) c.args.push_back("--cross-pairs");
        if (mode == "threads") c.args.push_back("--threads");
        if (decl && decl->is_object()) {
          JsonValue d = *decl;
          d.set("case", JsonValue::string(c.name));
          d.set("placement", JsonValue::string(c.placement));
          JsonValue args = JsonValue::array();
          for (const auto& a : c.args) args.push(JsonValue::string(a));
          d.set("args", args);
          d.set("summary", JsonValue());
          d.set("curve", JsonValue());
          d.set("category", JsonValue::string("Scaling (per copy)"));
          d.set("category_rank", JsonValue::integer(900));
          d.set("copies", JsonValue::integer(n));
          d.set("copy_mode", JsonValue::string(mode));
          d.set("scaling_of", JsonValue::string(base.name));
          d.set("control", JsonValue::boolean(false));
          d.set("scaling_control", JsonValue::boolean(base.control));
          c.declaration = json_dump(d, false);
        }
        added.push_back(std::move(c));
      }
    }
  }
  found.cases.insert(found.cases.end(), added.begin(), added.end());
}

}  // namespace kbench::driver
