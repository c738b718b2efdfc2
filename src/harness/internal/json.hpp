// json.hpp — writing JSON text: string quoting and a flat-object builder.
//
// Every sample line, --list line and driver record goes through here, so that
// escaping is done once and correctly (control characters, quotes,
// backslashes; bytes >= 0x80 are passed through, invalid UTF-8 is replaced).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace kbench {

// The string as a JSON string literal, quotes included.
std::string json_quote(std::string_view s);

// Builds one flat JSON object, keys in insertion order.
class JsonObject {
 public:
  JsonObject& add(std::string_view key, std::string_view value);
  JsonObject& add(std::string_view key, const char* value) { return add(key, std::string_view(value)); }
  JsonObject& add(std::string_view key, const std::string& value) { return add(key, std::string_view(value)); }
  template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  JsonObject& add(std::string_view key, T value) {
    if constexpr (std::is_signed_v<T>) return add_int(key, static_cast<long long>(value));
    else return add_uint(key, static_cast<unsigned long long>(value));
  }
  JsonObject& add(std::string_view key, double value);  // NaN/inf become null
  JsonObject& add(std::string_view key, bool value);
  JsonObject& add_null(std::string_view key);
  JsonObject& add(std::string_view key, const std::vector<std::string>& values);
  // `json` must already be valid JSON text (a nested object or array).
  JsonObject& add_raw(std::string_view key, std::string_view json);
  template <typename T>
  JsonObject& add(std::string_view key, const std::optional<T>& v) {
    return v ? add(key, *v) : add_null(key);
  }

  std::string str() const { return body_ + "}"; }

 private:
  JsonObject& add_int(std::string_view key, long long value);
  JsonObject& add_uint(std::string_view key, unsigned long long value);
  void key(std::string_view k);
  std::string body_ = "{";
};

}  // namespace kbench
