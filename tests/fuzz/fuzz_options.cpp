// fuzz_options — libFuzzer target for the benchmark command line.
//
// Input     = an argument vector: the bytes split at NUL (so "--param\0k=v"
//             is two arguments), any bytes allowed inside an argument.
// Exercised = kbench::parse_options (every shared option and --param),
//             parse_counter_list on --counters, parse_u64 on every argument,
//             canonical_params/case_name on what was accepted, and the
//             harness's JSON writer read back by the driver's JSON reader.
// Checked   = no crash, no sanitizer report, nothing thrown but UsageError
//             (with a message), and the properties below (a broken one
//             calls abort(), which libFuzzer and the replayer both report
//             as a finding).
// Built by  = `make fuzz` (clang, -fsanitize=fuzzer) and, through
//             replay.cpp, by `make test-asan` (g++) to replay the corpus.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "driver/json_value.hpp"
#include "harness/bench.hpp"
#include "harness/internal/cases.hpp"
#include "harness/internal/counters.hpp"
#include "harness/internal/json.hpp"
#include "harness/internal/options.hpp"
#include "fuzz_args.hpp"

namespace {

[[noreturn]] void broken(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_options: property broken: %s: %s\n", what, detail.c_str());
  std::abort();
}

// The reference parse_u64 must agree with: decimal digits only, at most 20
// of them, value below 2^64 (computed in 128 bits, no overflow possible).
bool reference_u64(const std::string& s, std::uint64_t& out) {
  if (s.empty() || s.size() > 20) return false;
  unsigned __int128 v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  if (v > UINT64_MAX) return false;
  out = static_cast<std::uint64_t>(v);
  return true;
}

bool printable(const std::string& s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7F) return false;
  return true;
}

void check_u64(const std::string& arg) {
  std::uint64_t got = 12345, want = 0;
  const bool ok = kbench::parse_u64(arg, got);
  const bool ref = reference_u64(arg, want);
  if (ok != ref) broken("parse_u64 accepts differently from the reference", arg);
  if (ok && got != want) broken("parse_u64 value", arg);
  if (!ok && got != 12345) broken("parse_u64 wrote its output on failure", arg);
}

void check_counters(const std::string& list) {
  std::vector<std::string> out;
  try {
    out = kbench::parse_counter_list(list);
  } catch (const kbench::UsageError& e) {
    if (e.message.empty()) broken("parse_counter_list failed without a message", list);
    return;
  }
  if (out.empty()) broken("parse_counter_list accepted an empty list", list);
  const auto& known = kbench::counter_names();
  for (std::size_t i = 0; i < out.size(); ++i) {
    bool found = false;
    for (const auto& k : known) found = found || k == out[i];
    if (!found) broken("parse_counter_list returned an unknown counter", out[i]);
    for (std::size_t j = 0; j < i; ++j)
      if (out[j] == out[i]) broken("parse_counter_list returned a duplicate", out[i]);
  }
}

// What was accepted must survive the trip into a sample line and back.
void check_accepted(const kbench::Options& o) {
  if (o.samples < 1 || o.samples > 1000000) broken("samples out of range", std::to_string(o.samples));
  if (o.iters && (*o.iters < 1 || *o.iters > UINT64_MAX / 2)) broken("iters out of range", "");
  if (o.cpu && (*o.cpu < 0 || *o.cpu > 65535)) broken("cpu out of range", "");
  if (!o.variant.empty() && o.variant[0] == '-') broken("variant starts with '-'", o.variant);
  if (o.run_id.size() > 128 || !printable(o.run_id)) broken("run id accepted", o.run_id);
  for (const auto& [k, v] : o.params) {
    if (k.empty() || v.empty()) broken("empty --param key or value", k + "=" + v);
    if (k.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
      broken("--param key with a bad character", k);
    if (v.find_first_of(",=") != std::string::npos || !printable(v)) broken("--param value accepted", v);
  }
  // canonical "k=v,k=v" splits back into the same map.
  const std::string canon = kbench::canonical_params(o.params);
  std::map<std::string, std::string> back;
  std::size_t start = 0;
  while (!canon.empty() && start <= canon.size()) {
    const std::size_t comma = canon.find(',', start);
    const std::string kv = canon.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::size_t eq = kv.find('=');
    if (eq == std::string::npos) broken("canonical params not k=v", canon);
    back[kv.substr(0, eq)] = kv.substr(eq + 1);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (back != o.params) broken("canonical params do not split back", canon);

  const std::string placement = kbench::placement_name(true, o.cpu, o.partner_cpu);
  const std::string name = kbench::case_name("lat_fuzz", o.variant, o.params, true, placement);
  kbench::JsonObject obj;
  obj.add("run_id", o.run_id).add("variant", o.variant).add("params", canon).add("case", name)
      .add("rep_idx", o.rep).add("samples", o.samples).add("cpu", o.cpu).add("partner_cpu", o.partner_cpu);
  if (o.counters) obj.add("counters", *o.counters);
  const std::string line = obj.str();
  std::string error;
  const auto parsed = kbench::driver::json_parse(line, &error);
  if (!parsed || !parsed->is_object()) broken("harness JSON not readable by the driver", error + ": " + line);
  const auto case_back = parsed->get_string("case");
  if (!case_back) broken("case lost in JSON", line);
  // json_quote replaces invalid UTF-8 with U+FFFD; printable ASCII-only
  // strings must come back byte for byte.
  bool ascii = true;
  for (unsigned char c : name) ascii = ascii && c < 0x80;
  if (ascii && *case_back != name) broken("case changed by JSON round trip", name);
  const auto rep = parsed->find("rep_idx");
  if (!rep || !rep->as_uint() || *rep->as_uint() != o.rep) broken("rep_idx changed by JSON round trip", line);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 4096) return 0;  // longer inputs only slow the search down
  const std::vector<std::string> args = fuzz_args(data, size);

  for (const auto& a : args) {
    check_u64(a);
    check_counters(a);
  }
  kbench::Options o;
  try {
    o = kbench::parse_options(args);
  } catch (const kbench::UsageError& e) {
    if (e.message.empty()) broken("parse_options failed without a message", "");
    return 0;
  }
  check_accepted(o);
  return 0;
}
