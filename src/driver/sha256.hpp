// sha256.hpp — SHA-256 (FIPS 180-4) of a file or a string, as lowercase hex.
//
// The campaign records the digest of every kernel image and initrd when it
// starts and compares it before each kexec: a package upgrade that rewrites
// /boot mid-campaign must not make later steps measure another build. The
// digest is the one `sha256sum` prints, so a person can check it by hand.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace kbench::driver {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t n);
  std::string hex();  // finishes; the object is then spent

 private:
  void block(const unsigned char* p);
  std::uint32_t h_[8];
  unsigned char buf_[64];
  std::size_t used_ = 0;
  std::uint64_t bytes_ = 0;
};

std::string sha256_hex(const std::string& data);
// nullopt when the file cannot be read
std::optional<std::string> sha256_file(const std::string& path);

}  // namespace kbench::driver
