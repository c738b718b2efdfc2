// campaign_hook.cpp — the boot hook's files as text (campaign_hook.hpp).
#include "driver/campaign_hook.hpp"

#include <sstream>

namespace kbench::campaign {

std::string systemd_quote(const std::string& s, bool exec_line) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '%') out += '%';
    if (c == '$' && exec_line) out += '$';
    out += c;
  }
  return out + "\"";
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

namespace {

std::string header(const std::string& id, const std::string& state, const char* what) {
  return std::string("# Installed by kbench-campaign for campaign ") + id + "; it removes this " + what +
         " at the end\n# (or: kbench-campaign stop).\n# state: " + state + "\n";
}

}  // namespace

std::string hook_unit(const std::string& id, const std::string& exe, const std::string& state,
                      const std::vector<std::string>& mounts) {
  std::string m;
  for (const auto& p : mounts) m += " " + systemd_quote(p, false);
  return header(id, state, "unit") +
         "[Unit]\n"
         "Description=kbench campaign " + id + " (resumes it at every boot)\n"
         "After=local-fs.target remote-fs.target network.target systemd-user-sessions.service\n"
         "RequiresMountsFor=" + m.substr(1) + "\n"
         // a mount that never came (a dependency) or a failed resume: home
         "OnFailure=kbench-campaign-home.service\n"
         "\n[Service]\n"
         // simple: the boot goes on and settles while the hook waits for it
         "Type=simple\n"
         "ExecStart=" + systemd_quote(exe, true) + " resume " + systemd_quote(state, true) + "\n"
         "TimeoutStartSec=infinity\n"
         // at a kexec or reboot it ends at once; a stuck kbench-run is killed after this
         "TimeoutStopSec=30\n"
         "StandardOutput=journal+console\nStandardError=journal+console\n"
         "\n[Install]\nWantedBy=multi-user.target\n";
}

std::string home_unit(const std::string& id, const std::string& exe, const std::string& state) {
  return header(id, state, "unit") +
         "[Unit]\n"
         "Description=kbench campaign " + id + ": home after a failure of its hook\n"
         "\n[Service]\n"
         "Type=oneshot\n"
         "ExecStart=" + systemd_quote(exe, true) + " home " + systemd_quote(state, true) + "\n"
         "StandardOutput=journal+console\nStandardError=journal+console\n";
}

std::string init_script(const std::string& id, const std::string& exe, const std::string& state) {
  return "#!/bin/sh\n" + header(id, state, "script") +
         "case \"$1\" in stop) exit 0 ;; esac\n" + shell_quote(exe) + " resume " + shell_quote(state) + " || " +
         shell_quote(exe) + " home " + shell_quote(state) + "\n";
}

std::vector<std::string> hook_files(const std::string& kind, bool rc2d) {
  if (kind == "systemd") return {kHookUnitLink, kHookUnit, kHomeUnit, kHookExe};
  if (rc2d) return {kRcLink, kInitScript, kHookExe};
  return {kInitScript, kHookExe};
}

std::string hook_state_path(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("# state: ", 0) == 0) return line.substr(9);
  return "";
}

}  // namespace kbench::campaign
