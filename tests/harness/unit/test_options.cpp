// test_options.cpp — the shared option parser: values, defaults and errors.
#include <catch2/catch.hpp>

#include "harness/internal/options.hpp"

using kbench::parse_options;

namespace {
// The message of the UsageError the arguments throw; "" if they parse.
std::string error_of(std::vector<std::string> args) {
  try {
    parse_options(args);
  } catch (const kbench::UsageError& e) {
    return e.message;
  }
  return "";
}
}  // namespace

TEST_CASE("defaults") {
  const auto o = parse_options({});
  CHECK(o.samples == 10);
  CHECK(o.min_sample_ms == 2);
  CHECK(o.warmup_ms == 5);
  CHECK_FALSE(o.iters);
  CHECK_FALSE(o.cpu);
  CHECK(o.variant.empty());
}

TEST_CASE("every option, both spellings") {
  const auto o = parse_options({"rt", "--samples", "7", "--iters=123", "--warmup-ms", "0", "--min-sample-ms=3",
                                "--cpu", "1", "--partner-cpu=0", "--param", "size=64", "--param=mode=fresh",
                                "--run-id", "R1", "--rep=4", "--counters"});
  CHECK(o.variant == "rt");
  CHECK(o.samples == 7);
  CHECK(o.iters == std::optional<std::uint64_t>{123});
  CHECK(o.warmup_ms == 0);
  CHECK(o.warmup_given);
  CHECK(o.min_sample_ms == 3);
  CHECK(o.cpu == std::optional<int>{1});
  CHECK(o.partner_cpu == std::optional<int>{0});
  CHECK(o.params.at("size") == "64");
  CHECK(o.params.at("mode") == "fresh");
  CHECK(o.run_id == "R1");
  CHECK(o.rep == 4);
  CHECK(o.counters == std::optional<std::string>{""});
}

TEST_CASE("bad input throws UsageError with a message naming it") {
  CHECK(error_of({"--frobnicate"}) == "unknown option '--frobnicate'");
  CHECK(error_of({"-x"}) == "unknown option '-x'");
  CHECK(error_of({"--samples"}) == "option --samples needs a value");
  CHECK(error_of({"--samples", "0"}).find("bad value '0' for --samples") == 0);
  CHECK(error_of({"--samples", "-3"}).find("bad value '-3'") == 0);
  CHECK(error_of({"--samples", "12abc"}).find("bad value '12abc'") == 0);
  CHECK(error_of({"--iters", "99999999999999999999999"}).find("bad value") == 0);
  CHECK(error_of({"--cpu", "-1"}).find("bad value '-1' for --cpu") == 0);
  CHECK(error_of({"--param", "size"}).find("bad --param 'size'") == 0);
  CHECK(error_of({"--param", "Size=1"}).find("bad --param key 'Size'") == 0);
  CHECK(error_of({"--param", "size="}).find("bad --param value") == 0);
  CHECK(error_of({"--param", "a=b,c=d"}).find("bad --param value") == 0);
  CHECK(error_of({"--list=yes"}) == "option --list takes no value");
  CHECK(error_of({"rt", "other"}).find("more than one variant") == 0);
  CHECK(error_of({"--run-id", std::string("a\nb")}).find("bad value for --run-id") == 0);
}

TEST_CASE("parse_u64 is strict") {
  std::uint64_t v = 0;
  CHECK(kbench::parse_u64("0", v));
  CHECK(v == 0);
  CHECK(kbench::parse_u64("18446744073709551615", v));
  CHECK(v == UINT64_MAX);
  CHECK_FALSE(kbench::parse_u64("18446744073709551616", v));
  CHECK_FALSE(kbench::parse_u64("", v));
  CHECK_FALSE(kbench::parse_u64("+1", v));
  CHECK_FALSE(kbench::parse_u64(" 1", v));
  CHECK_FALSE(kbench::parse_u64("1.5", v));
}
