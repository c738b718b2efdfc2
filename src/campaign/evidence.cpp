// evidence.cpp — what a failed boot left (evidence.hpp).
#include "campaign/evidence.hpp"

#include <dirent.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <vector>

#include "campaign/files.hpp"
#include "campaign/run.hpp"

namespace kbench::campaign {

namespace {

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (const dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != ".." && is_file(dir + "/" + n)) out.push_back(n);
    }
    closedir(d);
  }
  return out;
}

}  // namespace

std::string keep_evidence(const State& s, const std::string& name) {
  const std::string root = fake_root();
  const std::string dest = s.dir + "/evidence/" + name;
  std::vector<std::string> kept;
  auto keep = [&](const std::string& file, const std::string& as, const std::string& text) {
    mkdir((s.dir + "/evidence").c_str(), 0755);
    mkdir(dest.c_str(), 0755);
    try {
      write_file(dest + "/" + as, text, 0644);
      kept.push_back(as);
    } catch (const Failure& e) {
      say("warning: " + e.message + " (" + file + ")");
    }
  };
  // pstore: where the kernel keeps it, and where systemd-pstore moves it at boot
  const std::string pstore = root + "/sys/fs/pstore";
  if (root.empty() && is_dir(pstore) && files_in(pstore).empty())
    mount("pstore", pstore.c_str(), "pstore", 0, nullptr);  // not mounted by anyone (no systemd)
  for (const auto& f : files_in(pstore))
    if (auto t = read_text(pstore + "/" + f)) keep(pstore + "/" + f, "pstore-" + f, *t);
  const std::string archived = root + "/var/lib/systemd/pstore";
  if (DIR* d = opendir(archived.c_str())) {  // one directory per boot, by its time: the newest
    std::string newest;
    while (const dirent* e = readdir(d))
      if (e->d_name[0] != '.' && std::string(e->d_name) > newest) newest = e->d_name;
    closedir(d);
    if (!newest.empty())
      for (const auto& f : files_in(archived + "/" + newest))
        if (auto t = read_text(archived + "/" + newest + "/" + f)) keep(archived + "/" + newest + "/" + f, "pstore-" + f, *t);
  }
  // the previous boot's kernel messages, where the journal keeps them
  if (const std::string jc = which("journalctl"); !jc.empty()) {
    RunOptions o;
    o.deadline_s = 60;
    const Ran r = run_child({jc, "-k", "-b", "-1", "--no-pager", "-o", "short-monotonic"}, o);
    if (r.status == 0 && !r.out.empty()) keep("journalctl -k -b -1", "kernel-log-previous-boot.txt", r.out);
  }
  if (kept.empty()) return "";
  std::string list;
  for (const auto& k : kept) list += (list.empty() ? "" : ", ") + k;
  return dest + "/: " + list;
}

}  // namespace kbench::campaign
