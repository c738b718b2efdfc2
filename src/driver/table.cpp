// table.cpp — median-of-rep-medians table on stderr (see table.hpp).
#include "driver/table.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "driver/json_value.hpp"
#include "driver/rundir.hpp"
#include "harness/internal/median.hpp"

namespace kbench::driver {

namespace {

std::string number(double v) {
  char buf[32];
  if (v >= 1000) std::snprintf(buf, sizeof buf, "%.0f", v);
  else std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

struct CaseData {
  bool bandwidth = false;
  bool control = false;
  std::map<int, std::vector<double>> reps;  // rep_idx -> per-sample values
  std::set<std::string> without;            // optional features it ran without ("KEY": "unavailable")
};

}  // namespace

std::map<std::string, CaseEstimate> case_estimates(const std::string& samples_path) {
  std::map<std::string, CaseData> data;
  std::string text;
  try {
    text = read_whole_file(samples_path);
  } catch (const std::exception&) {
    // No samples at all (everything skipped or failed): rows from statuses.
  }
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) break;  // a partial line is not a sample
    auto v = json_parse(std::string_view(text).substr(pos, nl - pos));
    pos = nl + 1;
    if (!v || !v->is_object()) continue;
    auto name = v->get_string("case");
    const JsonValue* rep = v->find("rep_idx");
    const JsonValue* ns = v->find("ns_per_op");
    if (!name || !rep || !rep->as_int() || !ns || !ns->as_double() || *ns->as_double() <= 0)
      continue;
    CaseData& d = data[*name];
    if (const JsonValue* ctl = v->find("control")) d.control = d.control || ctl->as_bool();
    const bool bw = v->get_string("metric").value_or("latency") == "bandwidth";
    const JsonValue* bytes = v->find("bytes_per_op");
    double value = *ns->as_double();
    if (bw) {
      if (!bytes || !bytes->as_double()) continue;
      value = *bytes->as_double() / value * 1000.0;  // bytes per ns * 1000 = MB/s
      d.bandwidth = true;
    }
    d.reps[static_cast<int>(*rep->as_int())].push_back(value);
    for (const auto& [k, x] : v->members())
      if (x.is_string() && x.text() == "unavailable") d.without.insert(k);
  }

  std::map<std::string, CaseEstimate> out;
  for (const auto& [name, d] : data) {
    if (d.reps.empty()) continue;
    std::vector<double> rep_medians;
    for (const auto& [rep, values] : d.reps) rep_medians.push_back(median_of(values));
    CaseEstimate& e = out[name];
    e.value = median_of(rep_medians);
    const auto [lo, hi] = std::minmax_element(rep_medians.begin(), rep_medians.end());
    e.rep_lo = *lo;
    e.rep_hi = *hi;
    e.reps = rep_medians.size();
    e.bandwidth = d.bandwidth;
    e.control = d.control;
    e.without = d.without;
  }
  return out;
}

void print_table(std::FILE* out, const std::string& samples_path,
                 const std::map<std::string, std::string>& statuses,
                 const std::map<std::string, std::string>& reasons) {
  const std::map<std::string, CaseEstimate> data = case_estimates(samples_path);
  std::map<std::string, int> names;
  for (const auto& [n, d] : data) names[n] = 1;
  for (const auto& [n, s] : statuses) names[n] = 1;
  std::size_t width = 4;
  for (const auto& [n, one] : names) width = std::max(width, n.size());
  width = std::min<std::size_t>(width, 60);

  std::fprintf(out, "\n%-*s  %12s  %-23s  %-5s  %s\n", int(width), "case", "median", "reps min..max",
               "unit", "reps");
  // The control cases last, under their own line: they measure the machine.
  std::vector<std::string> order, controls;
  for (const auto& [name, one] : names) {
    auto it = data.find(name);
    (it != data.end() && it->second.control ? controls : order).push_back(name);
  }
  if (!controls.empty()) order.push_back("");
  order.insert(order.end(), controls.begin(), controls.end());
  bool any_bandwidth = false;
  for (const auto& name : order) {
    if (name.empty()) {
      std::fprintf(out, "-- controls (the machine's speed, not the kernel's):\n");
      continue;
    }
    auto it = data.find(name);
    auto st = statuses.find(name);
    const std::string status = st == statuses.end() ? "" : st->second;
    if (it == data.end()) {
      auto r = reasons.find(name);
      std::fprintf(out, "%-*s  %12s  %s%s%s\n", int(width), name.c_str(), "-",
                   status.empty() ? "no samples" : status.c_str(),
                   r != reasons.end() && !r->second.empty() ? ": " : "",
                   r != reasons.end() ? r->second.c_str() : "");
      continue;
    }
    const CaseEstimate& e = it->second;
    const std::string spread = number(e.rep_lo) + ".." + number(e.rep_hi);
    std::string without;
    for (const auto& k : e.without) without += (without.empty() ? "  (without " : ", ") + k;
    if (!without.empty()) without += ")";
    std::fprintf(out, "%-*s  %12s  %-23s  %-5s  %zu%s%s\n", int(width), name.c_str(),
                 number(e.value).c_str(), spread.c_str(), e.unit(), e.reps,
                 status == "failed" ? "  (some invocations failed)" : "", without.c_str());
    any_bandwidth = any_bandwidth || it->second.bandwidth;
  }
  if (any_bandwidth) std::fprintf(out, "MB/s = 10^6 bytes per second (lmbench's MB/s are 2^20).\n");
  std::fflush(out);
}

}  // namespace kbench::driver
