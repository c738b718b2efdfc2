// fuzz_driver_options — libFuzzer target for kbench-run's command line.
//
// Input     = an argument vector, the bytes split at NUL.
// Exercised = kbench::driver::parse_options (regcomp of --only/--skip
//             included), extra_bench_args, and the meta.json round trip
//             that --resume depends on: options_to_json, json_dump,
//             json_parse, options_from_json.
// Checked   = no crash, no sanitizer report, nothing thrown but UsageError
//             (with a message), and an accepted command line comes back
//             from meta.json with the same run-shaping options.
// Built by  = `make fuzz` (clang) and `make test-asan` (g++ replay).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "driver/json_value.hpp"
#include "driver/options.hpp"
#include "fuzz_args.hpp"

namespace {

using kbench::driver::Options;

[[noreturn]] void broken(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_driver_options: property broken: %s: %s\n", what, detail.c_str());
  std::abort();
}

// Known finding, reported: glibc's regcomp copies the tree of a repeated
// expression, so stacked or large repetitions need gigabytes ("--skip
// '.*{32767}'" peaks above 2 GB; each '+' of "a+++...+" doubles the memory)
// and would end every fuzzing run at the same place. Inputs with a bound
// above 64, more than two braces or more than four repetition operators in
// one argument are not run.
bool big_repetition(const std::vector<std::string>& args) {
  for (const auto& a : args) {
    int braces = 0, operators = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (a[i] == '+' || a[i] == '*' || a[i] == '?' || a[i] == '{') {
        if (++operators > 4) return true;
      }
      if (a[i] != '{') continue;
      if (++braces > 2) return true;
      std::size_t j = i + 1;
      for (;;) {
        unsigned long n = 0;
        std::size_t digits = 0;
        while (j < a.size() && a[j] >= '0' && a[j] <= '9' && digits < 8) {
          n = n * 10 + static_cast<unsigned long>(a[j++] - '0');
          ++digits;
        }
        if (digits == 8 || n > 64) return true;
        if (j < a.size() && a[j] == ',') {
          ++j;
          continue;
        }
        break;
      }
    }
  }
  return false;
}

bool ascii(const std::string& s) {
  for (unsigned char c : s)
    if (c >= 0x80) return false;
  return true;
}

void check_round_trip(const Options& o) {
  const std::string text = kbench::driver::json_dump(kbench::driver::options_to_json(o), true);
  std::string error;
  const auto j = kbench::driver::json_parse(text, &error);
  if (!j || !j->is_object()) broken("options JSON does not parse", error + ": " + text);
  Options back;
  kbench::driver::options_from_json(*j, back);
  if (back.reps != o.reps) broken("reps changed", text);
  if (back.samples != o.samples) broken("samples changed", text);
  if (back.quick != o.quick) broken("quick changed", text);
  if (back.counters != o.counters) broken("counters changed", text);
  if (back.label != o.label) broken("label changed", text);   // only [A-Za-z0-9._+-]: no quoting issue
  // Strings go through json_quote, which replaces invalid UTF-8 with
  // U+FFFD (reported separately); compare the ones it must keep.
  if (ascii(o.only) && back.only != o.only) broken("only changed", text);
  if (ascii(o.skip) && back.skip != o.skip) broken("skip changed", text);
  if (ascii(o.out) && back.out != o.out) broken("out changed", text);
  if (ascii(o.bin_dir) && back.bin_dir != o.bin_dir) broken("bin_dir changed", text);
  if (!(back.timeout_s > 0) || std::fabs(back.timeout_s - o.timeout_s) > 1e-6 * o.timeout_s)
    broken("timeout changed", text);
  if (kbench::driver::extra_bench_args(back) != kbench::driver::extra_bench_args(o))
    broken("the arguments passed to the binaries changed", text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 1024) return 0;
  const std::vector<std::string> args = fuzz_args(data, size);

  if (big_repetition(args)) return 0;
  Options o;
  try {
    o = kbench::driver::parse_options(args);
  } catch (const kbench::UsageError& e) {
    if (e.message.empty()) broken("usage error without a message", "");
    return 0;
  }
  if (o.reps < 1 || o.reps > 100000) broken("reps out of range", std::to_string(o.reps));
  if (o.samples && (*o.samples < 1 || *o.samples > 1000000)) broken("samples out of range", "");
  if (!std::isfinite(o.timeout_s) || o.timeout_s <= 0 || o.timeout_s > 1e6)
    broken("timeout out of range", std::to_string(o.timeout_s));
  check_round_trip(o);
  return 0;
}
