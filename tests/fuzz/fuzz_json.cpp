// fuzz_json — libFuzzer target for the driver's JSON reader and writer.
//
// Input     = any bytes: a --list line, a sample line, runs.jsonl or
//             meta.json as the driver reads them (resume, end table).
// Exercised = kbench::driver::json_parse, json_dump (compact and pretty),
//             the typed accessors, json_quote of the raw bytes.
// Checked   = no crash, no sanitizer report, and:
//             - what parses dumps to text that parses again and dumps to the
//               same text (the writer's output is valid and stable);
//             - a parse failure comes with a message;
//             - json_quote of any bytes is one valid JSON string, and gives
//               back the bytes unchanged when they were valid UTF-8;
//             - the harness's json_quote and the driver's agree.
// Built by  = `make fuzz` (clang) and `make test-asan` (g++ replay of the
//             corpus, replay.cpp).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "driver/json_value.hpp"
#include "harness/internal/json.hpp"

namespace {

using kbench::driver::JsonValue;

[[noreturn]] void broken(const char* what, std::string_view detail) {
  std::fprintf(stderr, "fuzz_json: property broken: %s: %.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

// Strict UTF-8 (no overlongs, no surrogates, at most U+10FFFF).
bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    std::size_t n;
    unsigned cp, min;
    if (b < 0x80) { ++i; continue; }
    if ((b & 0xE0) == 0xC0) { n = 2; cp = b & 0x1F; min = 0x80; }
    else if ((b & 0xF0) == 0xE0) { n = 3; cp = b & 0x0F; min = 0x800; }
    else if ((b & 0xF8) == 0xF0) { n = 4; cp = b & 0x07; min = 0x10000; }
    else return false;
    if (i + n > s.size()) return false;
    for (std::size_t k = 1; k < n; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (c & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n;
  }
  return true;
}

// Walks the value through every accessor (they must not crash on any kind).
void touch(const JsonValue& v, int depth) {
  (void)v.as_int();
  (void)v.as_uint();
  (void)v.as_double();
  (void)v.as_bool();
  (void)v.text();
  (void)v.find("case");
  (void)v.get_string("status");
  if (depth > 100) broken("nesting deeper than the reader allows", "");
  for (const auto& item : v.items()) touch(item, depth + 1);
  for (const auto& m : v.members()) touch(m.second, depth + 1);
}

void check_quote(std::string_view raw) {
  const std::string q = kbench::json_quote(raw);
  if (!valid_utf8(q)) broken("json_quote produced invalid UTF-8", q);
  std::string error;
  const auto back = kbench::driver::json_parse(q, &error);
  if (!back || !back->is_string()) broken("json_quote output does not parse as a string", q);
  if (valid_utf8(raw) && back->text() != raw) broken("json_quote round trip changed valid UTF-8", raw);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 65536) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check_quote(text);

  std::string error;
  const auto v = kbench::driver::json_parse(text, &error);
  if (!v) {
    if (error.empty()) broken("parse failure without a message", text);
    return 0;
  }
  touch(*v, 0);
  // The first dump normalises (invalid UTF-8 becomes \ufffd, which reads
  // back as the character itself); from then on text and value are fixed.
  for (bool pretty : {false, true}) {
    const std::string once = kbench::driver::json_dump(*v, pretty);
    if (!valid_utf8(once)) broken("json_dump produced invalid UTF-8", once);
    std::string error2;
    const auto again = kbench::driver::json_parse(once, &error2);
    if (!again) broken("json_dump output does not parse", error2 + ": " + once);
    const std::string twice = kbench::driver::json_dump(*again, pretty);
    const auto third = kbench::driver::json_parse(twice, &error2);
    if (!third) broken("json_dump output does not parse", error2 + ": " + twice);
    if (kbench::driver::json_dump(*third, pretty) != twice) broken("json_dump is not stable", twice);
    if (valid_utf8(text) && text.find("\\u") == std::string_view::npos && twice != once)
      broken("json_dump changed a document without escapes or invalid bytes", once + " vs " + twice);
  }
  return 0;
}
