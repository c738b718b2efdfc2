// test_json.cpp — JSON text produced by the harness is valid and exact.
#include <catch2/catch.hpp>
#include <cmath>

#include "harness/internal/json.hpp"

using kbench::json_quote;
using kbench::JsonObject;

TEST_CASE("json_quote escapes quotes, backslashes and control characters") {
  CHECK(json_quote("plain") == "\"plain\"");
  CHECK(json_quote("a\"b") == "\"a\\\"b\"");
  CHECK(json_quote("a\\b") == "\"a\\\\b\"");
  CHECK(json_quote("l1\nl2\r\t") == "\"l1\\nl2\\r\\t\"");
  CHECK(json_quote(std::string("\x01\x1f\x7f", 3)) == "\"\\u0001\\u001f\\u007f\"");
  CHECK(json_quote(std::string("nul\0x", 5)) == "\"nul\\u0000x\"");
}

TEST_CASE("json_quote keeps valid UTF-8 and replaces invalid bytes") {
  CHECK(json_quote("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") == "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
  CHECK(json_quote("bad\xff") == "\"bad\\ufffd\"");
  CHECK(json_quote("cut\xe2\x82") == "\"cut\\ufffd\\ufffd\"");
  CHECK(json_quote("overlong\xc0\xaf") == "\"overlong\\ufffd\\ufffd\"");
  CHECK(json_quote("surrogate\xed\xa0\x80") == "\"surrogate\\ufffd\\ufffd\\ufffd\"");
}

TEST_CASE("JsonObject builds a flat object in insertion order") {
  JsonObject o;
  o.add("s", "x<y").add("i", -3).add("u", 18446744073709551615ull).add("b", true).add_null("n");
  o.add("d", 0.5).add("nan", std::nan("")).add("inf", INFINITY);
  o.add("list", std::vector<std::string>{"a", "b\"c"});
  o.add("opt", std::optional<int>{}).add("opt2", std::optional<int>{7});
  CHECK(o.str() ==
        "{\"s\":\"x<y\",\"i\":-3,\"u\":18446744073709551615,\"b\":true,\"n\":null,\"d\":0.5,"
        "\"nan\":null,\"inf\":null,\"list\":[\"a\",\"b\\\"c\"],\"opt\":null,\"opt2\":7}");
  CHECK(JsonObject().str() == "{}");
}
