// test_campaign.cpp — a campaign's pure part (src/driver/campaign.cpp): the
// balanced plan, the state file's round trip, every transition, a crash at
// every point of a whole campaign, and each refusal (with a fake machine:
// no root, no kexec, no reboot needed).
#include <catch2/catch.hpp>
#include <cerrno>
#include <map>
#include <string>
#include <vector>

#include "driver/campaign.hpp"
#include "driver/json_value.hpp"
#include "driver/sha256.hpp"
#include "harness/internal/usage_error.hpp"

namespace kc = kbench::campaign;
using kbench::driver::json_dump;
using kbench::driver::json_parse;

namespace {

kc::State two_kernels(int rounds) {
  kc::State s;
  s.id = "t";
  s.dir = "/r/campaign-t";
  s.home_release = "6.1";
  s.home_boot_id = "boot0";
  for (const char* rel : {"6.1", "6.12"}) {
    kc::Kernel k;
    k.spec = k.image = std::string("/boot/vmlinuz-") + rel;
    k.release = rel;
    s.kernels.push_back(k);
  }
  for (int k : kc::balanced_order(2, rounds)) {
    kc::Step p;
    p.kernel = k;
    s.steps.push_back(p);
  }
  return s;
}

kc::State roundtrip(const kc::State& s) {
  auto j = json_parse(json_dump(kc::state_to_json(s), true));
  REQUIRE(j);
  return kc::state_from_json(*j);
}

kc::Probe fake(unsigned euid, std::map<std::string, std::string> files, int kexec_errno) {
  kc::Probe p;
  p.euid = [euid] { return euid; };
  p.read_file = [files](const std::string& f) -> std::optional<std::string> {
    auto it = files.find(f);
    if (it == files.end()) return std::nullopt;
    return it->second;
  };
  p.is_file = [files](const std::string& f) { return files.count(f) > 0; };
  p.kexec_probe = [kexec_errno] { return kexec_errno; };
  return p;
}

}  // namespace

TEST_CASE("balanced_order: A B B A A B ..., each kernel's mean position equal over pairs of rounds", "[campaign]") {
  CHECK(kc::balanced_order(2, 3) == std::vector<int>{0, 1, 1, 0, 0, 1});
  CHECK(kc::balanced_order(3, 2) == std::vector<int>{0, 1, 2, 2, 1, 0});
  CHECK(kc::balanced_order(0, 2).empty());
  CHECK(kc::balanced_order(2, 0).empty());
  for (int n = 1; n <= 6; ++n)
    for (int rounds = 2; rounds <= 8; rounds += 2) {
      const auto o = kc::balanced_order(n, rounds);
      REQUIRE(o.size() == std::size_t(n * rounds));
      std::vector<long> pos_sum(std::size_t(n), 0), count(std::size_t(n), 0);
      for (std::size_t i = 0; i < o.size(); ++i) {
        pos_sum[std::size_t(o[i])] += long(i);
        ++count[std::size_t(o[i])];
      }
      for (int k = 0; k < n; ++k) {
        CHECK(count[std::size_t(k)] == rounds);
        CHECK(pos_sum[std::size_t(k)] == pos_sum[0]);  // a linear drift adds the same to every kernel
      }
    }
}

TEST_CASE("parse_kernel_spec: image or release, initrd= and label=, bad options refused", "[campaign]") {
  auto k = kc::parse_kernel_spec("/boot/vmlinuz-6.12,initrd=/boot/i.img,label=patched");
  CHECK(k.spec == "/boot/vmlinuz-6.12");
  CHECK(k.initrd == "/boot/i.img");
  CHECK(k.label == "patched");
  CHECK(kc::parse_kernel_spec("6.1.0-57-cloud-amd64").spec == "6.1.0-57-cloud-amd64");
  CHECK_THROWS_AS(kc::parse_kernel_spec(""), kbench::UsageError);
  CHECK_THROWS_AS(kc::parse_kernel_spec("x,initrd="), kbench::UsageError);
  CHECK_THROWS_AS(kc::parse_kernel_spec("x,foo=1"), kbench::UsageError);
  CHECK_THROWS_AS(kc::parse_kernel_spec("x,label=a b"), kbench::UsageError);
}

TEST_CASE("image_release_from_bytes: the x86 boot header's version string", "[campaign]") {
  std::string head(0x1000, '\0');
  head.replace(0x202, 4, "HdrS");
  head[0x20E] = char(0x00);
  head[0x20F] = char(0x03);  // version string at 0x200 + 0x300
  const std::string v = "6.12.117+deb12-cloud-amd64 (debian-kernel@lists.debian.org) #1 SMP";
  head.replace(0x500, v.size(), v);
  CHECK(kc::image_release_from_bytes(head) == std::optional<std::string>("6.12.117+deb12-cloud-amd64"));
  CHECK_FALSE(kc::image_release_from_bytes(std::string(0x1000, 'x')));
  CHECK_FALSE(kc::image_release_from_bytes("short"));
}

TEST_CASE("kexec_cmdline: the current line without BOOT_IMAGE= and initrd=, then the explicit extras", "[campaign]") {
  CHECK(kc::kexec_cmdline("BOOT_IMAGE=/vmlinuz-6.1 root=UUID=ab ro initrd=/x quiet\n", "mitigations=off") ==
        "root=UUID=ab ro quiet mitigations=off");
  CHECK(kc::kexec_cmdline("console=ttyS0 root=/dev/vda", "") == "console=ttyS0 root=/dev/vda");
}

TEST_CASE("state: the file's round trip keeps everything; a bad file is refused", "[campaign]") {
  kc::State s = two_kernels(2);
  s.run_args = {"--quick", "--only", "lat_syscall null"};
  s.kernels[1].initrd = "/boot/initrd";
  s.kernels[1].label = "new";
  s.kernels[1].cmdline = "root=/dev/vda";
  s.steps[0].status = "done";
  s.steps[0].run_dir = "/r/campaign-t/A/h/6.1/run1";
  s.steps[0].exit_code = 0;
  s.pending_boot = kc::Boot{1, "6.12", "boot0", "now", "requested"};
  s.boots.push_back(kc::Boot{0, "6.1", "boot0", "t0", "x"});
  s.hook_kind = "initd";
  s.hook_files = {"/etc/init.d/S99kbench-campaign"};
  const kc::State r = roundtrip(s);
  CHECK(json_dump(kc::state_to_json(r)) == json_dump(kc::state_to_json(s)));
  CHECK(r.pending_boot->kernel == 1);
  CHECK(r.steps[0].run_dir == s.steps[0].run_dir);
  CHECK(r.run_args == s.run_args);
  CHECK_THROWS(kc::state_from_json(*json_parse("{\"schema\":\"other\"}")));
  auto bad = kc::state_to_json(s);
  bad.find("steps")->items();
  auto text = json_dump(bad);
  text.replace(text.find("\"kernel\":1"), 10, "\"kernel\":7");
  CHECK_THROWS(kc::state_from_json(*json_parse(text)));
}

TEST_CASE("next_action: run on the kernel we are in, kexec for another, finish home", "[campaign]") {
  kc::State s = two_kernels(2);  // A B B A
  kc::Now home{"6.1", "boot0", "t"};
  auto a = kc::next_action(s, home);
  CHECK(a.kind == kc::ActionKind::run);
  CHECK(a.step == 0);
  kc::mark_step_running(s, 0, home);
  kc::mark_step_ended(s, 0, 0, "/r/A/h/6.1/1", "", home);
  a = kc::next_action(s, home);
  CHECK(a.kind == kc::ActionKind::boot);
  CHECK(a.kernel == 1);
  kc::mark_boot_requested(s, 1, home);
  kc::Now b{"6.12", "boot1", "t"};
  CHECK(kc::reconcile(s, b).size() == 1);
  CHECK(s.boots.back().kernel == 1);
  for (int step : {1, 2}) {
    a = kc::next_action(s, b);
    REQUIRE(a.kind == kc::ActionKind::run);  // B B: one boot, two runs
    CHECK(a.step == step);
    kc::mark_step_running(s, step, b);
    kc::mark_step_ended(s, step, 1, "/r/B/h/6.12/x", "", b);  // exit 1: some case failed, still a run
  }
  a = kc::next_action(s, b);
  CHECK(a.kind == kc::ActionKind::boot);
  CHECK(a.kernel == 0);
  kc::mark_boot_requested(s, 0, b);
  kc::Now c{"6.1", "boot2", "t"};
  kc::reconcile(s, c);
  a = kc::next_action(s, c);
  REQUIRE(a.kind == kc::ActionKind::run);
  kc::mark_step_running(s, 3, c);
  kc::mark_step_ended(s, 3, 0, "/r/A/h/6.1/2", "", c);
  a = kc::next_action(s, c);
  CHECK(a.kind == kc::ActionKind::finish);
  CHECK(a.go_home);  // a kexec'd boot of the same release is not the default boot
  CHECK(kc::step_counts(s) == "4 done, 0 failed, 0 not run");
  CHECK_FALSE(kc::next_action(s, home).go_home);
}

TEST_CASE("a kernel that boots the wrong release, or does not boot, is failed; the others go on", "[campaign]") {
  kc::State s = two_kernels(2);
  kc::Now home{"6.1", "boot0", "t"};
  kc::mark_step_running(s, 0, home);
  kc::mark_step_ended(s, 0, 0, "/r/a", "", home);
  kc::mark_boot_requested(s, 1, home);
  kc::Now back{"6.1", "boot1", "t"};  // it panicked: the machine came back in its default kernel
  const auto said = kc::reconcile(s, back);
  REQUIRE(said.size() == 1);
  CHECK_THAT(said[0], Catch::Contains("booted 6.1 instead of 6.12"));
  CHECK(s.kernels[1].status == "failed");
  CHECK(s.steps[1].status == "failed");
  CHECK(s.steps[2].status == "failed");
  auto a = kc::next_action(s, back);
  REQUIRE(a.kind == kc::ActionKind::run);  // A's second step, on the default kernel (release 6.1, not ambiguous)
  CHECK(a.step == 3);
  kc::mark_step_running(s, 3, back);
  kc::mark_step_ended(s, 3, 0, "/r/b", "", back);
  a = kc::next_action(s, back);
  CHECK(a.kind == kc::ActionKind::finish);
  CHECK_FALSE(a.go_home);  // a boot the campaign did not ask for: the default kernel already
  // no reboot at all after the request: failed too
  kc::State t = two_kernels(2);
  kc::mark_boot_requested(t, 1, home);
  kc::reconcile(t, home);
  CHECK(t.kernels[1].status == "failed");
  CHECK_THAT(t.kernels[1].reason, Catch::Contains("did not happen"));
}

TEST_CASE("a step left running is failed at the next boot, never run again", "[campaign]") {
  kc::State s = two_kernels(2);
  kc::Now home{"6.1", "boot0", "t"};
  kc::mark_step_running(s, 0, home);
  s = roundtrip(s);  // what the file held when the machine crashed
  kc::Now after{"6.1", "boot1", "t"};
  kc::reconcile(s, after);
  CHECK(s.steps[0].status == "failed");
  CHECK_THAT(s.steps[0].reason, Catch::Contains("never finished"));
  auto a = kc::next_action(s, after);
  CHECK(a.step == 1);  // B's step: the failed one is not retried
}

TEST_CASE("Ctrl-C: the cut step goes back to pending and runs again", "[campaign]") {
  kc::State s = two_kernels(2);
  kc::Now home{"6.1", "boot0", "t"};
  kc::mark_step_running(s, 0, home);
  kc::mark_step_interrupted(s, 0);
  CHECK(s.steps[0].status == "pending");
  CHECK(kc::next_action(s, home).step == 0);
}

TEST_CASE("kernels of one release: told apart by the boot record, never by release alone", "[campaign]") {
  kc::State s = two_kernels(1);
  s.kernels[1].release = "6.1";
  s.kernels[1].label = "patched";
  kc::Now home{"6.1", "boot0", "t"};
  CHECK(kc::current_kernel(s, home) == -1);  // ambiguous: A is kexec'd too
  CHECK(kc::next_action(s, home).kind == kc::ActionKind::boot);
  kc::mark_boot_requested(s, 0, home);
  kc::Now b{"6.1", "boot1", "t"};
  kc::reconcile(s, b);
  CHECK(kc::current_kernel(s, b) == 0);
}

// The whole campaign A B B A, the machine crashing (or losing power) once at
// every point where the state file can be: after each save, the state is
// reloaded from its JSON as the next boot would see it. Every step ends done
// or failed, none runs twice, and the campaign always finishes.
TEST_CASE("resume after a crash at every step: each step at most once, the campaign finishes", "[campaign]") {
  for (int crash_at = 0; crash_at < 40; ++crash_at) {
    CAPTURE(crash_at);
    kc::State s = two_kernels(2);
    int saves = 0, boot_no = 0;
    std::string release = "6.1", boot_id = "boot0";
    std::map<int, int> runs;  // step -> times run to completion
    bool crashed = false, finished = false;
    auto save = [&] {
      s = roundtrip(s);
      if (!crashed && saves++ == crash_at) {
        crashed = true;  // the machine resets: back in its default kernel
        release = "6.1";
        boot_id = "boot" + std::to_string(++boot_no);
        return true;
      }
      return false;
    };
    for (int guard = 0; guard < 100 && !finished; ++guard) {
      kc::Now now{release, boot_id, "t"};
      kc::reconcile(s, now);
      if (save()) continue;
      bool rebooted = false;
      while (!rebooted) {
        now = kc::Now{release, boot_id, "t"};
        auto a = kc::next_action(s, now);
        if (a.kind == kc::ActionKind::finish) {
          kc::mark_finished(s, "finished", now);
          save();
          finished = true;
          break;
        }
        if (a.kind == kc::ActionKind::boot) {
          kc::mark_boot_requested(s, a.kernel, now);
          if (save()) break;
          release = s.kernels[std::size_t(a.kernel)].release;
          boot_id = "boot" + std::to_string(++boot_no);
          rebooted = true;
          break;
        }
        kc::mark_step_running(s, a.step, now);
        if (save()) break;
        kc::mark_step_ended(s, a.step, 0, "/r/x", "", now);
        ++runs[a.step];
        if (save()) break;
      }
    }
    REQUIRE(finished);
    CHECK(s.status == "finished");
    for (const auto& p : s.steps) CHECK((p.status == "done" || p.status == "failed"));
    for (const auto& [step, n] : runs) CHECK(n == 1);
    int failed = 0;
    for (const auto& p : s.steps) failed += p.status == "failed";
    CHECK(failed <= 2);  // a crash costs at most the step it hit (or a kernel's boot: its two steps)
  }
}

TEST_CASE("refusals: another campaign, a missing image, not root, no kexec, lockdown", "[campaign]") {
  kc::State s = two_kernels(2);
  const std::map<std::string, std::string> ok = {{"/boot/vmlinuz-6.1", ""}, {"/boot/vmlinuz-6.12", ""},
                                                 {"/proc/sys/kernel/kexec_load_disabled", "0\n"},
                                                 {"/sys/kernel/security/lockdown", "[none] integrity confidentiality\n"}};
  CHECK(kc::start_refusal(fake(0, ok, 0), s, "") == "");
  CHECK_THAT(kc::start_refusal(fake(0, ok, 0), s, "/r/campaign-x/campaign.json"), Catch::Contains("already running"));
  auto missing = ok;
  missing.erase("/boot/vmlinuz-6.12");
  CHECK_THAT(kc::start_refusal(fake(0, missing, 0), s, ""), Catch::Contains("no such image: /boot/vmlinuz-6.12"));
  CHECK_THAT(kc::start_refusal(fake(1000, ok, 0), s, ""), Catch::Contains("needs root"));
  CHECK_THAT(kc::start_refusal(fake(0, ok, ENOSYS), s, ""), Catch::Contains("CONFIG_KEXEC_FILE"));
  CHECK_THAT(kc::start_refusal(fake(0, ok, EPERM), s, ""), Catch::Contains("not permitted"));
  auto locked = ok;
  locked["/sys/kernel/security/lockdown"] = "none [integrity] confidentiality\n";
  CHECK_THAT(kc::start_refusal(fake(0, locked, 0), s, ""), Catch::Contains("locked down"));
  auto disabled = ok;
  disabled["/proc/sys/kernel/kexec_load_disabled"] = "1\n";
  CHECK_THAT(kc::start_refusal(fake(0, disabled, 0), s, ""), Catch::Contains("kexec_load_disabled"));
  s.mode = "vm";  // in guests: no root, no kexec, kernels are vm-run's to find
  CHECK(kc::start_refusal(fake(1000, {}, ENOSYS), s, "") == "");
}

TEST_CASE("sha256: the digest sha256sum prints", "[campaign]") {
  using kbench::driver::sha256_hex;
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // two blocks, and a length that puts the padding across a block boundary
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1000000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("image_change: a kexec of an image or initrd that changed since the start is refused", "[campaign]") {
  kc::Kernel k;
  k.image = "/boot/vmlinuz-6.12";
  k.initrd = "/boot/initrd.img-6.12";
  k.sha256 = "aaaaaaaaaaaaaaaa";
  k.initrd_sha256 = "bbbbbbbbbbbbbbbb";
  CHECK(kc::image_change(k, "aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb") == "");
  CHECK_THAT(kc::image_change(k, "cccccccccccccccc", "bbbbbbbbbbbbbbbb"), Catch::Contains("image /boot/vmlinuz-6.12 changed"));
  CHECK_THAT(kc::image_change(k, "aaaaaaaaaaaaaaaa", "dddddddddddddddd"), Catch::Contains("initrd /boot/initrd.img-6.12 changed"));
  CHECK_THAT(kc::image_change(k, "", "bbbbbbbbbbbbbbbb"), Catch::Contains("gone or unreadable"));
  k.initrd.clear();  // no initrd: its digest is not looked at
  CHECK(kc::image_change(k, "aaaaaaaaaaaaaaaa", "") == "");
}
