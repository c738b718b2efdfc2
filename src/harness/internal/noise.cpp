// noise.cpp — run-queue delay, steal and migrations around each sample.
#include "harness/internal/noise.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

#include "harness/sys.hpp"

namespace kbench {

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }

// A decimal number at text[pos] after optional blanks; pos moves past it.
// It must end at a blank or a newline: a number cut by the end of the text
// (a truncated read) could be a prefix of the real one.
std::optional<std::uint64_t> number_at(std::string_view text, std::size_t& pos) {
  while (pos < text.size() && is_blank(text[pos])) ++pos;
  std::uint64_t v = 0;
  const std::size_t start = pos;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
    const std::uint64_t d = static_cast<std::uint64_t>(text[pos] - '0');
    if (v > (UINT64_MAX - d) / 10) return std::nullopt;
    v = v * 10 + d;
    ++pos;
  }
  if (pos == start || pos == text.size()) return std::nullopt;
  if (!is_blank(text[pos]) && text[pos] != '\n') return std::nullopt;
  return v;
}

// Calls fn(line) for each complete line (newline excluded) until it returns
// true; a last line without its newline is never passed (it may be cut).
template <typename Fn>
void for_each_line(std::string_view text, Fn fn) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) return;
    if (fn(text.substr(pos, nl - pos + 1))) return;  // keeps the '\n' as terminator
    pos = nl + 1;
  }
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

// -1 when the file is missing: no /proc mounted (or KBENCH_MISSING=procfs),
// a kernel without CONFIG_SCHED_INFO (schedstat) or CONFIG_SCHED_DEBUG
// (sched). The marker is then null in every sample.
int open_proc(const char* path) {
  if (simulated_missing("procfs")) return -1;
  return ::open(path, O_RDONLY | O_CLOEXEC);
}

}  // namespace

std::optional<std::uint64_t> parse_schedstat_run_delay(std::string_view text) {
  // "<on-cpu ns> <run-queue wait ns> <timeslices>\n"
  std::size_t pos = 0;
  if (!number_at(text, pos)) return std::nullopt;
  return number_at(text, pos);
}

std::optional<std::uint64_t> parse_proc_stat_steal(std::string_view text, std::optional<int> cpu) {
  // "cpu  user nice system idle iowait irq softirq steal guest guest_nice"
  // (the aggregate line has two blanks after "cpu"; per-CPU lines "cpuN ").
  const std::string prefix = cpu ? "cpu" + std::to_string(*cpu) : "cpu";
  std::optional<std::uint64_t> steal;
  for_each_line(text, [&](std::string_view line) {
    if (!starts_with(line, prefix) || line.size() == prefix.size() || !is_blank(line[prefix.size()]))
      return false;
    std::size_t pos = prefix.size();
    for (int field = 1; field <= 8; ++field) {
      const auto v = number_at(line, pos);
      if (!v) return true;  // too few fields (kernels before 2.6.11): unknown
      if (field == 8) steal = v;
    }
    return true;
  });
  return steal;
}

std::optional<std::uint64_t> parse_sched_migrations(std::string_view text) {
  // "se.nr_migrations                             :                    3"
  constexpr std::string_view key = "se.nr_migrations";
  std::optional<std::uint64_t> n;
  for_each_line(text, [&](std::string_view line) {
    if (!starts_with(line, key)) return false;
    std::size_t pos = key.size();
    while (pos < line.size() && is_blank(line[pos])) ++pos;
    if (pos == key.size() && pos < line.size() && line[pos] != ':') return false;  // a longer key
    if (pos >= line.size() || line[pos] != ':') return true;
    n = number_at(line, ++pos);
    return true;
  });
  return n;
}

NoiseDelta noise_delta(const NoiseSnapshot& a, const NoiseSnapshot& b, long ticks_per_s) {
  auto inc = [](const std::optional<std::uint64_t>& x,
                const std::optional<std::uint64_t>& y) -> std::optional<std::int64_t> {
    if (!x || !y || *y < *x) return std::nullopt;
    return static_cast<std::int64_t>(*y - *x);
  };
  NoiseDelta d;
  d.run_delay_ns = inc(a.run_delay_ns, b.run_delay_ns);
  d.migrations = inc(a.migrations, b.migrations);
  if (const auto ticks = inc(a.steal_ticks, b.steal_ticks); ticks && ticks_per_s > 0)
    d.steal_ns = *ticks * (1000000000 / ticks_per_s);
  return d;
}

NoiseMarkers::NoiseMarkers(std::optional<int> cpu) : cpu_(cpu), ticks_per_s_(::sysconf(_SC_CLK_TCK)) {
  schedstat_fd_ = open_proc("/proc/self/schedstat");
  stat_fd_ = open_proc("/proc/stat");
  sched_fd_ = open_proc("/proc/self/sched");
  // /proc/stat starts with the aggregate line and one line per possible CPU
  // (each well under 256 bytes); reading only that far skips the long intr
  // line. The sched file is about 2 KB; its migrations line is near the top.
  const long conf = ::sysconf(_SC_NPROCESSORS_CONF);
  const std::size_t cpus = static_cast<std::size_t>(std::max<long>({conf, cpu.value_or(0) + 1L, 1L}));
  schedstat_buf_.resize(256);
  stat_buf_.resize((cpus + 2) * 256);
  sched_buf_.resize(8192);
}

NoiseMarkers::~NoiseMarkers() {
  for (int fd : {schedstat_fd_, stat_fd_, sched_fd_})
    if (fd >= 0) ::close(fd);
}

std::optional<std::string_view> NoiseMarkers::read_file(int fd, std::vector<char>& buf) {
  if (fd < 0) return std::nullopt;
  // One pread at offset 0: a procfs file regenerates its text when read from
  // the start and fills the request in one call unless it ends first. A file
  // longer than the buffer is cut; the parsers reject a cut line.
  ssize_t n;
  do n = ::pread(fd, buf.data(), buf.size(), 0);
  while (n < 0 && errno == EINTR);
  if (n <= 0) return std::nullopt;
  return std::string_view(buf.data(), static_cast<std::size_t>(n));
}

NoiseSnapshot NoiseMarkers::read() {
  NoiseSnapshot s;
  read_steal_migrations(s);
  read_run_delay(s);
  return s;
}

void NoiseMarkers::read_steal_migrations(NoiseSnapshot& s) {
  if (const auto t = read_file(stat_fd_, stat_buf_)) s.steal_ticks = parse_proc_stat_steal(*t, cpu_);
  if (const auto t = read_file(sched_fd_, sched_buf_)) s.migrations = parse_sched_migrations(*t);
}

void NoiseMarkers::read_run_delay(NoiseSnapshot& s) {
  if (const auto t = read_file(schedstat_fd_, schedstat_buf_)) s.run_delay_ns = parse_schedstat_run_delay(*t);
}

NoiseDelta NoiseMarkers::delta(const NoiseSnapshot& a, const NoiseSnapshot& b) const {
  return noise_delta(a, b, ticks_per_s_);
}

}  // namespace kbench
