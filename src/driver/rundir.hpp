// rundir.hpp — the run directory: its id, creating it, and writing files in
// it safely.
//
// Two drivers started in the same second into the same results root must
// get two directories: the id carries 6 random hex digits and the final
// directory is made with a plain mkdir that fails on EEXIST (then a new id
// is drawn), while the shared parents tolerate EEXIST from a racing twin.
#pragma once

#include <cstdint>
#include <string>

namespace kbench::driver {

// Random bits from getrandom() (falls back to /dev/urandom).
std::uint64_t random_u64();

// YYYYmmddTHHMMSSZ-xxxxxx, UTC.
std::string make_run_id();

struct RunDir {
  std::string path;
  std::string run_id;
};

// Creates OUT/<host>/<kernel_release>/<run-id>/, or with a label
// OUT/<host>/<kernel_release>[<label>]/<run-id>/: the kernel's name in every
// table, so that each kernel has a directory of its own (runs of one release
// with different labels are different kernels). Throws std::runtime_error.
RunDir create_run_dir(const std::string& out, const std::string& host,
                      const std::string& kernel_release, const std::string& label = "");

// Writes via a temporary file and rename(), so a reader never sees half a
// meta.json, and a crash leaves the old one. Throws std::runtime_error.
void write_file_atomic(const std::string& path, const std::string& text);

// Reads a whole file; throws std::runtime_error (missing files included).
std::string read_whole_file(const std::string& path);

// An append-only file (O_APPEND): each append() is one write of whole lines,
// so samples.jsonl and runs.jsonl never hold half a record after a driver
// crash between invocations.
class AppendFile {
 public:
  AppendFile() = default;
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;
  ~AppendFile();
  void open(const std::string& path);   // creates it if missing; throws
  void append(const std::string& text); // throws
 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace kbench::driver

namespace kbench::driver {

// Takes an exclusive flock on the run directory for the life of the process,
// so that `--resume` of a run still in progress (or two resumes at once)
// fails cleanly instead of running invocations twice. Throws.
void lock_run_dir(const std::string& path);

}  // namespace kbench::driver
