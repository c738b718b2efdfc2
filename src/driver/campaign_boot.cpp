// campaign_boot.cpp — what a campaign's test boot gets and needs
// (campaign_boot.hpp): pure functions, no access to the machine.
#include "driver/campaign_boot.hpp"

#include <cerrno>
#include <cstring>
#include <sstream>

namespace kbench::campaign {

std::string safety_args(const BootSafety& b) {
  std::string out = "panic=" + std::to_string(b.panic_s) + " oops=panic softlockup_panic=1";
  if (!b.serial.empty()) out += " console=tty0 console=" + b.serial + ",115200n8";
  if (b.watchdog_open_s > 0)
    out += " watchdog.stop_on_reboot=0 watchdog.open_timeout=" + std::to_string(b.watchdog_open_s);
  return out;
}

namespace {

std::string word_key(const std::string& w) { return w.substr(0, w.find('=')); }

}  // namespace

std::string kexec_cmdline(const std::string& proc_cmdline, const std::string& safety, const std::string& append) {
  std::vector<std::string> dropped = {"BOOT_IMAGE", "initrd", "kbench.campaign"};
  {
    std::istringstream in(safety);
    std::string w;
    while (in >> w)
      if (word_key(w) != "console") dropped.push_back(word_key(w));
  }
  std::istringstream in(proc_cmdline);
  std::string w, out;
  auto add = [&out](const std::string& word) { out += (out.empty() ? "" : " ") + word; };
  while (in >> w) {
    bool drop = false;
    for (const auto& d : dropped) drop = drop || word_key(w) == d;
    if (!drop) add(w);
  }
  for (const std::string& more : {safety, append}) {
    std::istringstream extra(more);
    while (extra >> w) add(w);
  }
  return out;
}

std::string serial_console(const std::optional<std::string>& text) {
  if (!text) return "";
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    const auto uart = line.find("uart:");
    if (colon == std::string::npos || uart == std::string::npos) continue;
    const std::string n = line.substr(0, colon);
    if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos) continue;
    std::istringstream rest(line.substr(uart + 5));
    std::string type;
    rest >> type;
    if (!type.empty() && type != "unknown") return "ttyS" + n;
  }
  return "";
}

bool has_console(const std::string& cmdline) {
  std::istringstream in(cmdline);
  std::string w;
  while (in >> w)
    if (w.rfind("console=", 0) == 0) return true;
  return false;
}

std::vector<std::string> image_candidates(const std::string& release, const std::string& machine_id) {
  std::vector<std::string> out = {"/boot/vmlinuz-" + release};
  if (!machine_id.empty())
    for (const char* boot : {"/boot", "/efi", "/boot/efi"})
      out.push_back(std::string(boot) + "/" + machine_id + "/" + release + "/linux");
  return out;
}

std::vector<std::string> initrd_candidates(const std::string& image, const std::string& release) {
  const auto slash = image.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : image.substr(0, slash);
  const std::string name = slash == std::string::npos ? image : image.substr(slash + 1);
  std::vector<std::string> releases;
  if (!release.empty()) releases.push_back(release);
  if (name.rfind("vmlinuz-", 0) == 0 && name.size() > 8 && name.substr(8) != release) releases.push_back(name.substr(8));
  std::vector<std::string> out;
  auto add = [&out](const std::string& p) {
    for (const auto& o : out)
      if (o == p) return;
    out.push_back(p);
  };
  if (name == "linux") add(dir + "/initrd");
  for (const std::string& d : {dir, std::string("/boot")})
    for (const auto& r : releases)
      for (const std::string& n : {"initrd.img-" + r, "initramfs-" + r + ".img", "initrd-" + r, "initrd-" + r + ".img",
                                   "initramfs-" + r})
        add(d + "/" + n);
  return out;
}

std::string watchdog_unfit(const WatchdogSeen& w, int margin_s) {
  if (w.device.empty() && w.module.empty()) return "no hardware watchdog (/dev/watchdog) on this machine";
  if (w.module == "softdog" || w.identity.find("Software Watchdog") != std::string::npos)
    return "softdog is no hardware watchdog: it lives in the kernel and dies at the kexec";
  if (w.max_timeout > 0 && w.max_timeout < margin_s)
    return (w.identity.empty() ? w.device : w.identity) + ": its longest timeout, " + std::to_string(w.max_timeout) +
           " s, is shorter than a boot's margin of " + std::to_string(margin_s) + " s (--watchdog-timeout)";
  return "";
}

std::vector<std::string> timer_units(const std::string& list_units) {
  std::vector<std::string> out;
  std::istringstream in(list_units);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream w(line);
    std::string unit;
    if (!(w >> unit)) continue;
    if (unit == "\xe2\x97\x8f" && !(w >> unit)) continue;  // a failed unit's bullet
    if (unit.size() > 6 && unit.compare(unit.size() - 6, 6, ".timer") == 0) out.push_back(unit);
  }
  return out;
}

std::string time_daemon(const std::vector<std::string>& comms) {
  for (const auto& c : comms)
    for (const char* d : {"chronyd", "ntpd", "systemd-timesyn", "openntpd", "timesyncd", "ntpsec"})
      if (c == d) return c;
  return "";
}

bool clock_settled(int adjtimex_state, long status, long tick, long user_hz) {
  constexpr int kTimeError = 5;     // TIME_ERROR
  constexpr long kStaUnsync = 0x40;  // STA_UNSYNC
  if (adjtimex_state == kTimeError || (status & kStaUnsync) || user_hz <= 0) return false;
  const long nominal = 1000000 / user_hz;
  const long off = tick > nominal ? tick - nominal : nominal - tick;
  return off * 2000 <= nominal;  // within 500 ppm
}

bool modules_have(const std::string& modules_dep, const std::string& modules_builtin, const std::string& module) {
  auto norm = [](std::string n) {
    for (auto& c : n)
      if (c == '-') c = '_';
    return n;
  };
  const std::string want = norm(module);
  for (const std::string* text : {&modules_dep, &modules_builtin}) {
    std::istringstream in(*text);
    std::string line;
    while (std::getline(in, line)) {
      std::string path = line.substr(0, line.find(':'));
      path = path.substr(path.rfind('/') + 1);
      const auto ko = path.find(".ko");
      if (ko != std::string::npos && norm(path.substr(0, ko)) == want) return true;
    }
  }
  return false;
}

std::string errno_name(int e) {
  switch (e) {
    case EPERM: return "EPERM";
    case ENOENT: return "ENOENT";
    case EIO: return "EIO";
    case E2BIG: return "E2BIG";
    case ENOEXEC: return "ENOEXEC";
    case EBADF: return "EBADF";
    case ENOMEM: return "ENOMEM";
    case EACCES: return "EACCES";
    case EBUSY: return "EBUSY";
    case EINVAL: return "EINVAL";
    case ENOSYS: return "ENOSYS";
    case ENODATA: return "ENODATA";
    case ENOPKG: return "ENOPKG";
    case EBADMSG: return "EBADMSG";
    case EMSGSIZE: return "EMSGSIZE";
    case EKEYREJECTED: return "EKEYREJECTED";
    case EKEYREVOKED: return "EKEYREVOKED";
    case EKEYEXPIRED: return "EKEYEXPIRED";
    case ENOKEY: return "ENOKEY";
    default: return "errno " + std::to_string(e);
  }
}

std::string load_refusal(int e, const std::string& lockdown) {
  const bool locked = lockdown.find("[integrity]") != std::string::npos ||
                      lockdown.find("[confidentiality]") != std::string::npos;
  const std::string head = errno_name(e) + " (" + std::strerror(e) + ")";
  switch (e) {
    case EPERM:
      return head + (locked ? ": the kernel is locked down (" + lockdown.substr(0, lockdown.find('\n')) +
                                  "), so it kexecs only an image whose signature it verifies: this one is unsigned or "
                                  "signed by a key it does not trust (sign it with a key in its keyrings, or boot "
                                  "with Secure Boot off)"
                            : ": not permitted (root with CAP_SYS_BOOT; kernel.kexec_load_disabled)");
    case ENOEXEC: return head + ": not an image this kernel can kexec (another format or architecture)";
    case EKEYREJECTED:
    case EKEYREVOKED:
    case EKEYEXPIRED:
    case ENOKEY: return head + ": its signature did not verify: signed by a key this kernel does not trust";
    case ENODATA:
    case ENOPKG: return head + ": it has no usable signature, and this kernel takes only signed images";
    case EBADMSG: return head + ": its signature is malformed";
    case ENOMEM:
    case E2BIG: return head + ": too large for the memory kexec can use";
    case EBUSY: return head + ": kexec is busy (another load under way)";
    default: return head;
  }
}

}  // namespace kbench::campaign
