// test_campaign.cpp — a campaign's pure part (src/driver/campaign.cpp): the
// balanced plan, the state file's round trip, every transition, a crash at
// every point of a whole campaign, and each refusal (with a fake machine:
// no root, no kexec, no reboot needed).
#include <catch2/catch.hpp>
#include <algorithm>
#include <cerrno>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "driver/campaign.hpp"
#include "driver/campaign_boot.hpp"
#include "driver/campaign_hook.hpp"
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

kc::Probe fake(unsigned euid, std::map<std::string, std::string> files, int kexec_errno, int load_errno = 0) {
  kc::Probe p;
  p.euid = [euid] { return euid; };
  p.read_file = [files](const std::string& f) -> std::optional<std::string> {
    auto it = files.find(f);
    if (it == files.end()) return std::nullopt;
    return it->second;
  };
  p.is_file = [files](const std::string& f) { return files.count(f) > 0; };
  p.is_dir = [files](const std::string& d) {
    for (const auto& f : files)
      if (f.first.rfind(d + "/", 0) == 0) return true;
    return false;
  };
  p.kexec_probe = [kexec_errno] { return kexec_errno; };
  p.trial_load = [load_errno](const kc::Kernel& k) { return k.label == "unsigned" ? load_errno : 0; };
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
  CHECK(kc::image_version_from_bytes(head) == std::optional<std::string>(v));  // the whole string: the build too
  CHECK_FALSE(kc::image_release_from_bytes(std::string(0x1000, 'x')));
  CHECK_FALSE(kc::image_release_from_bytes("short"));
}

TEST_CASE("kexec_cmdline: the current line without BOOT_IMAGE=, initrd= and what the safety sets, then safety, then extras", "[campaign]") {
  const std::string safety = kc::safety_args(kc::BootSafety{});
  CHECK(safety == "panic=10 oops=panic softlockup_panic=1");
  CHECK(kc::kexec_cmdline("BOOT_IMAGE=/vmlinuz-6.1 root=UUID=ab ro initrd=/x quiet\n", safety, "mitigations=off") ==
        "root=UUID=ab ro quiet panic=10 oops=panic softlockup_panic=1 mitigations=off");
  // the machine's own panic=0 and an earlier campaign's marker do not survive; console= does
  CHECK(kc::kexec_cmdline("console=ttyS0 root=/dev/vda panic=0 kbench.campaign=old:1:1", safety, "") ==
        "console=ttyS0 root=/dev/vda panic=10 oops=panic softlockup_panic=1");
  CHECK(kc::kexec_cmdline("root=/dev/vda", safety, "panic=30") ==
        "root=/dev/vda panic=10 oops=panic softlockup_panic=1 panic=30");  // KERNEL_ARGS last: it wins
}

TEST_CASE("safety_args: a serial console where there is a UART, the watchdog kept across the kexec", "[campaign]") {
  kc::BootSafety b;
  b.serial = "ttyS1";
  b.watchdog_open_s = 300;
  CHECK(kc::safety_args(b) ==
        "panic=10 oops=panic softlockup_panic=1 console=tty0 console=ttyS1,115200n8 "
        "watchdog.stop_on_reboot=0 watchdog.open_timeout=300");
  const std::string serial = "serinfo:1.0 driver revision:\n0: uart:unknown port:000003F8 irq:4\n"
                             "1: uart:16550A port:000002F8 irq:3 tx:0 rx:0\n";
  CHECK(kc::serial_console(serial) == "ttyS1");
  CHECK(kc::serial_console(std::string("serinfo:1.0 driver revision:\n0: uart:unknown port:000003F8 irq:4\n")) == "");
  CHECK(kc::serial_console(std::nullopt) == "");
  CHECK(kc::has_console("root=/dev/sda console=tty0"));
  CHECK_FALSE(kc::has_console("root=/dev/sda quiet"));
}

TEST_CASE("image and initrd names: Debian, Fedora/RHEL, SUSE, systemd-boot, a build tree", "[campaign]") {
  CHECK(kc::image_candidates("6.12.1", "abc") ==
        std::vector<std::string>{"/boot/vmlinuz-6.12.1", "/boot/abc/6.12.1/linux", "/efi/abc/6.12.1/linux",
                                 "/boot/efi/abc/6.12.1/linux"});
  CHECK(kc::image_candidates("6.12.1", "") == std::vector<std::string>{"/boot/vmlinuz-6.12.1"});
  const auto boot = kc::initrd_candidates("/boot/vmlinuz-6.12.1", "6.12.1");
  CHECK(boot == std::vector<std::string>{"/boot/initrd.img-6.12.1", "/boot/initramfs-6.12.1.img", "/boot/initrd-6.12.1",
                                         "/boot/initrd-6.12.1.img", "/boot/initramfs-6.12.1"});
  const auto bls = kc::initrd_candidates("/efi/abc/6.12.1/linux", "6.12.1");
  CHECK(bls.front() == "/efi/abc/6.12.1/initrd");
  const auto tree = kc::initrd_candidates("/home/me/linux/arch/x86/boot/bzImage", "6.13.0-rc1");
  CHECK(tree.front() == "/home/me/linux/arch/x86/boot/initrd.img-6.13.0-rc1");
  CHECK(std::find(tree.begin(), tree.end(), "/boot/initrd.img-6.13.0-rc1") != tree.end());  // update-initramfs -c -k
  // a file named for another release than its header: both names are looked for
  const auto renamed = kc::initrd_candidates("/srv/vmlinuz-test", "6.1.0");
  CHECK(std::find(renamed.begin(), renamed.end(), "/srv/initrd.img-test") != renamed.end());
}

TEST_CASE("load_refusal: the errno named, and what it means", "[campaign]") {
  CHECK(kc::errno_name(EKEYREJECTED) == "EKEYREJECTED");
  CHECK(kc::errno_name(99999) == "errno 99999");
  const std::string locked = kc::load_refusal(EPERM, "none [integrity] confidentiality\n");
  CHECK_THAT(locked, Catch::StartsWith("EPERM ("));
  CHECK_THAT(locked, Catch::Contains("locked down (none [integrity] confidentiality)"));
  CHECK_THAT(locked, Catch::Contains("unsigned"));
  CHECK_THAT(kc::load_refusal(EPERM, "[none] integrity confidentiality"), Catch::Contains("CAP_SYS_BOOT"));
  CHECK_THAT(kc::load_refusal(ENOEXEC, ""), Catch::Contains("not an image this kernel can kexec"));
  CHECK_THAT(kc::load_refusal(EKEYREJECTED, ""), Catch::StartsWith("EKEYREJECTED"));
  CHECK_THAT(kc::load_refusal(ENODATA, ""), Catch::Contains("no usable signature"));
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
  s.pending_boot = kc::Boot{1, "6.12", "boot0", "now", "requested", 1, 1, "kbench.campaign=t:2:1"};
  s.boots.push_back(kc::Boot{0, "6.1", "boot0", "t0", "x", 0, 1, "kbench.campaign=t:1:1"});
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

// The boot the campaign asked for, as the machine comes up in it: its
// marker on the command line, the image's version in /proc/version.
kc::Now booted(const kc::State& s, const std::string& boot_id) {
  REQUIRE(s.pending_boot);
  const kc::Boot& b = *s.pending_boot;
  const auto& k = s.kernels.at(std::size_t(b.kernel));
  return kc::Now{k.release, boot_id, "t", "root=/dev/vda " + b.marker,
                 "Linux version " + k.release + " (b@h) (gcc 12) #1 SMP"};
}

// A boot that is not the one asked for: the default kernel's, no marker.
kc::Now home_boot(const std::string& boot_id) { return kc::Now{"6.1", boot_id, "t", "root=/dev/vda", "Linux version 6.1 (b@h) (gcc 12) #1 SMP"}; }

void run_ok(kc::State& s, int step, const kc::Now& now) {
  kc::mark_step_running(s, step, now);
  kc::mark_step_ended(s, step, 0, "/r/x/" + std::to_string(step), "", now);
}

TEST_CASE("next_action: every step on a fresh boot made for it, the first included", "[campaign]") {
  kc::State s = two_kernels(2);  // A B B A
  const kc::Now home = home_boot("boot0");
  kc::Now before = home;  // the boot each step's boot is asked from: the default one, then the last step's
  int boot_no = 0;
  for (int step = 0; step < 4; ++step) {
    CAPTURE(step);
    auto a = kc::next_action(s, before);
    REQUIRE(a.kind == kc::ActionKind::boot);  // even A on the default kernel's release, even B after B
    CHECK(a.step == step);
    kc::mark_boot_requested(s, step, kc::boot_marker(s, step, s.steps[std::size_t(step)].boots + 1), before);
    const kc::Now in = booted(s, "boot" + std::to_string(++boot_no));
    const auto f = kc::reconcile(s, in);
    REQUIRE(f.said.size() == 1);
    CHECK_THAT(f.said[0], Catch::Contains("booted"));
    CHECK(kc::booted_step(s, in) == step);
    a = kc::next_action(s, in);
    REQUIRE(a.kind == kc::ActionKind::run);
    CHECK(a.step == step);
    run_ok(s, step, in);
    before = in;
  }
  const auto a = kc::next_action(s, before);
  CHECK(a.kind == kc::ActionKind::finish);
  CHECK(a.go_home);  // a kexec'd boot of the default kernel's release is not the default boot
  CHECK(kc::step_counts(s) == "4 done, 0 failed, 0 not run");
  CHECK_FALSE(kc::next_action(s, home).go_home);
  // a boot with one of the campaign's markers whose record was lost: still one of its boots
  CHECK(kc::in_campaign_boot(s, kc::Now{"6.1", "boot9", "t", "x " + kc::boot_marker(s, 3, 1), ""}));
}

TEST_CASE("boot_marker: campaign, step and attempt; the kernel's line then the marker", "[campaign]") {
  kc::State s = two_kernels(1);
  s.id = "20260101T000000Z-x";
  CHECK(kc::boot_marker(s, 0, 1) == "kbench.campaign=20260101T000000Z-x:1:1");
  s.kernels[1].cmdline = "root=/dev/vda panic=10";
  CHECK(kc::boot_cmdline(s.kernels[1], "kbench.campaign=i:2:1") == "root=/dev/vda panic=10 kbench.campaign=i:2:1");
}

TEST_CASE("a boot without its marker is tried once more, then its kernel is failed; the others go on", "[campaign]") {
  kc::State s = two_kernels(2);
  kc::mark_boot_requested(s, 0, kc::boot_marker(s, 0, 1), home_boot("boot0"));
  kc::Now a1 = booted(s, "boot1");
  kc::reconcile(s, a1);
  run_ok(s, 0, a1);
  for (int attempt = 1; attempt <= 2; ++attempt) {
    CAPTURE(attempt);
    auto a = kc::next_action(s, attempt == 1 ? a1 : home_boot("back1"));
    REQUIRE(a.kind == kc::ActionKind::boot);
    CHECK(a.step == 1);
    kc::mark_boot_requested(s, 1, kc::boot_marker(s, 1, attempt), a1);
    CHECK(s.pending_boot->attempt == attempt);
    // it panicked (or the watchdog reset it): the default kernel, no marker
    const auto f = kc::reconcile(s, home_boot("back" + std::to_string(attempt)));
    CHECK(f.failed_step == 1);
    CHECK(f.failed_attempt == attempt);
    REQUIRE_FALSE(f.said.empty());
    CHECK_THAT(f.said[0], Catch::Contains("without the boot's marker"));
    CHECK(s.boots.back().kernel == -1);
    CHECK(s.kernels[1].status == (attempt == 1 ? "ok" : "failed"));
  }
  CHECK_THAT(s.kernels[1].reason, Catch::Contains("failed 2 times"));
  CHECK(s.steps[1].status == "failed");
  CHECK(s.steps[2].status == "failed");
  const kc::Now back = home_boot("back2");
  auto a = kc::next_action(s, back);
  REQUIRE(a.kind == kc::ActionKind::boot);  // A's second step, on a boot of its own
  CHECK(a.step == 3);
  kc::mark_boot_requested(s, 3, kc::boot_marker(s, 3, 1), back);
  const kc::Now a2 = booted(s, "boot9");
  kc::reconcile(s, a2);
  run_ok(s, 3, a2);
  a = kc::next_action(s, a2);
  CHECK(a.kind == kc::ActionKind::finish);
  CHECK(a.go_home);
  CHECK_FALSE(kc::next_action(s, back).go_home);  // the default kernel already
  // no reboot at all after the request: a failed attempt too
  kc::State t = two_kernels(2);
  kc::mark_boot_requested(t, 0, kc::boot_marker(t, 0, 1), home_boot("boot0"));
  const auto f = kc::reconcile(t, home_boot("boot0"));
  CHECK(f.failed_step == 0);
  CHECK_THAT(f.said[0], Catch::Contains("did not happen"));
}

TEST_CASE("two kernels of one release: the fallback boot is never taken for the labelled one", "[campaign]") {
  kc::State s = two_kernels(1);
  s.kernels[1].release = "6.1";
  s.kernels[1].label = "patched";
  s.kernels[1].version = "6.1 (me@box) #7 SMP Tue";
  kc::mark_boot_requested(s, 1, kc::boot_marker(s, 1, 1), home_boot("boot0"));
  // systemd fell back to a normal reboot: the default 6.1 came up, without the marker
  auto f = kc::reconcile(s, home_boot("boot1"));
  CHECK(f.failed_step == 1);
  CHECK(kc::booted_step(s, home_boot("boot1")) == -1);
  CHECK(kc::next_action(s, home_boot("boot1")).kind == kc::ActionKind::boot);
  // the marker there but another build of the release: not it either
  kc::mark_boot_requested(s, 1, kc::boot_marker(s, 1, 2), home_boot("boot1"));
  kc::Now other{"6.1", "boot2", "t", "root=/dev/vda " + kc::boot_marker(s, 1, 2),
                "Linux version 6.1 (debian@build) (gcc 12) #1 SMP Mon\n"};
  f = kc::reconcile(s, other);
  CHECK(f.failed_step == 1);
  CHECK_THAT(f.said[0], Catch::Contains("another build"));
  CHECK(s.kernels[1].status == "failed");
  CHECK(s.steps[1].status == "failed");
  CHECK(s.steps[0].status == "pending");
}

TEST_CASE("version_matches: release, builder and build, the compiler between them ignored", "[campaign]") {
  const std::string img = "6.12.117+deb12-cloud-amd64 (debian-kernel@lists.debian.org) #1 SMP PREEMPT_DYNAMIC Debian 6.12.117-1 (2026-11-14)";
  const std::string proc = "Linux version 6.12.117+deb12-cloud-amd64 (debian-kernel@lists.debian.org) (x86_64-linux-gnu-gcc-12 "
                           "(Debian 12.2.0-14+deb12u1) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP PREEMPT_DYNAMIC "
                           "Debian 6.12.117-1 (2026-11-14)\n";
  CHECK(kc::version_matches(img, proc));
  std::string rebuilt = proc;
  rebuilt.replace(rebuilt.find("#1 SMP"), 2, "#2");
  CHECK_FALSE(kc::version_matches(img, rebuilt));  // the same release, another build
  CHECK_FALSE(kc::version_matches(img, "Linux version 6.1.0-57-cloud-amd64 (debian-kernel@lists.debian.org) (gcc) #1 SMP"));
  std::string other_builder = proc;
  other_builder.replace(other_builder.find("debian-kernel@"), 14, "me@");
  CHECK_FALSE(kc::version_matches(img, other_builder));
  CHECK(kc::version_matches("6.1", "Linux version 6.1 (a@b) (gcc) #3 SMP"));  // a release alone: by release
  CHECK_FALSE(kc::version_matches("", proc));
}

TEST_CASE("a step cut by a crash runs once more on a new boot, then is failed", "[campaign]") {
  kc::State s = two_kernels(2);
  kc::mark_boot_requested(s, 0, kc::boot_marker(s, 0, 1), home_boot("boot0"));
  kc::Now in = booted(s, "boot1");
  kc::reconcile(s, in);
  kc::mark_step_running(s, 0, in);
  s = roundtrip(s);  // what the file held when the power went
  auto f = kc::reconcile(s, home_boot("boot2"));
  CHECK(s.steps[0].status == "pending");
  CHECK_THAT(s.steps[0].reason, Catch::Contains("runs again"));
  REQUIRE(f.said.size() == 1);
  auto a = kc::next_action(s, home_boot("boot2"));
  REQUIRE(a.kind == kc::ActionKind::boot);  // on a new boot, not the default kernel's
  CHECK(a.step == 0);
  kc::mark_boot_requested(s, 0, kc::boot_marker(s, 0, 2), home_boot("boot2"));
  in = booted(s, "boot3");
  kc::reconcile(s, in);
  CHECK(kc::next_action(s, in).kind == kc::ActionKind::run);
  kc::mark_step_running(s, 0, in);
  kc::reconcile(s, home_boot("boot4"));  // cut again
  CHECK(s.steps[0].status == "failed");
  CHECK_THAT(s.steps[0].reason, Catch::Contains("never finished (2 runs"));
  CHECK(kc::next_action(s, home_boot("boot4")).step == 1);  // B's step: the failed one is not run again
}

TEST_CASE("a step cut once and a boot failed once: two different retries, the kernel not failed", "[campaign]") {
  kc::State s = two_kernels(1);
  kc::mark_boot_requested(s, 0, kc::boot_marker(s, 0, 1), home_boot("boot0"));
  kc::Now in = booted(s, "boot1");
  kc::reconcile(s, in);
  kc::mark_step_running(s, 0, in);
  kc::reconcile(s, home_boot("boot2"));  // the power went during the step: it runs again
  kc::mark_boot_requested(s, 0, kc::boot_marker(s, 0, 2), home_boot("boot2"));
  kc::reconcile(s, home_boot("boot3"));  // that boot did not come: the first failed boot
  CHECK(s.kernels[0].status == "ok");
  CHECK(s.steps[0].boot_failures == 1);
  kc::mark_boot_requested(s, 0, kc::boot_marker(s, 0, 3), home_boot("boot3"));
  CHECK(s.pending_boot->marker == kc::boot_marker(s, 0, 3));  // every boot its own marker
  in = booted(s, "boot4");
  kc::reconcile(s, in);
  CHECK(kc::next_action(s, in).kind == kc::ActionKind::run);
}

TEST_CASE("Ctrl-C: the cut step goes back to pending and runs again, on a new boot", "[campaign]") {
  kc::State s = two_kernels(2);
  kc::mark_boot_requested(s, 0, kc::boot_marker(s, 0, 1), home_boot("boot0"));
  const kc::Now in = booted(s, "boot1");
  kc::reconcile(s, in);
  kc::mark_step_running(s, 0, in);
  kc::mark_step_interrupted(s, 0);
  CHECK(s.steps[0].status == "pending");
  auto a = kc::next_action(s, in);
  CHECK(a.step == 0);
  CHECK(a.kind == kc::ActionKind::boot);  // this boot has had a run of it already
  s.mode = "vm";                          // a guest per step: it runs again at once
  CHECK(kc::next_action(s, in).kind == kc::ActionKind::run);
}

// The whole campaign A B B A, the machine crashing (or losing power) once at
// every point where the state file can be: after each save, the state is
// reloaded from its JSON as the next boot would see it. With one retry of a
// boot and of a run, nothing fails: every step completes exactly once, each
// on a boot of its own, and the campaign always finishes.
TEST_CASE("resume after a crash at every step: each step once, on its own boot, the campaign finishes", "[campaign]") {
  for (int crash_at = 0; crash_at < 60; ++crash_at) {
    CAPTURE(crash_at);
    kc::State s = two_kernels(2);
    int saves = 0, boot_no = 0;
    kc::Now now = home_boot("boot0");
    std::map<int, int> runs;                 // step -> times run to completion
    std::map<int, std::string> ran_in;       // step -> the boot it completed in
    bool crashed = false, finished = false;
    auto save = [&] {
      s = roundtrip(s);
      if (!crashed && saves++ == crash_at) {
        crashed = true;  // the machine resets: back in its default kernel
        now = home_boot("boot" + std::to_string(++boot_no));
        return true;
      }
      return false;
    };
    for (int guard = 0; guard < 100 && !finished; ++guard) {
      kc::reconcile(s, now);
      if (save()) continue;
      for (;;) {
        auto a = kc::next_action(s, now);
        if (a.kind == kc::ActionKind::finish) {
          kc::mark_finished(s, "finished", now);
          save();
          finished = true;
          break;
        }
        if (a.kind == kc::ActionKind::boot) {
          kc::mark_boot_requested(s, a.step, kc::boot_marker(s, a.step, s.steps[std::size_t(a.step)].boots + 1), now);
          if (save()) break;
          now = booted(s, "boot" + std::to_string(++boot_no));
          break;
        }
        kc::mark_step_running(s, a.step, now);
        if (save()) break;
        kc::mark_step_ended(s, a.step, 0, "/r/x", "", now);
        ++runs[a.step];
        ran_in[a.step] = now.boot_id;
        if (save()) break;
      }
    }
    REQUIRE(finished);
    CHECK(s.status == "finished");
    for (const auto& p : s.steps) CHECK(p.status == "done");
    CHECK(runs.size() == 4);
    for (const auto& [step, n] : runs) CHECK(n == 1);
    std::set<std::string> boots;
    for (const auto& [step, b] : ran_in) boots.insert(b);
    CHECK(boots.size() == 4);  // each step on a boot of its own
    CHECK(boots.count("boot0") == 0);
  }
}

TEST_CASE("refusals: another campaign, a missing image or initrd, not root, no kexec, a trial load", "[campaign]") {
  kc::State s = two_kernels(2);
  for (auto& k : s.kernels) k.initrd = "/boot/initrd.img-" + k.release;
  const std::map<std::string, std::string> ok = {{"/boot/vmlinuz-6.1", ""}, {"/boot/vmlinuz-6.12", ""},
                                                 {"/boot/initrd.img-6.1", ""}, {"/boot/initrd.img-6.12", ""},
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
  auto disabled = ok;
  disabled["/proc/sys/kernel/kexec_load_disabled"] = "1\n";
  CHECK_THAT(kc::start_refusal(fake(0, disabled, 0), s, ""), Catch::Contains("kexec_load_disabled"));
  // lockdown alone refuses nothing: a signed image still loads; the trial load of each tells
  auto locked = ok;
  locked["/sys/kernel/security/lockdown"] = "none [integrity] confidentiality\n";
  CHECK(kc::start_refusal(fake(0, locked, 0, EPERM), s, "") == "");
  s.kernels[1].label = "unsigned";
  const std::string why = kc::start_refusal(fake(0, locked, 0, EPERM), s, "");
  CHECK_THAT(why, Catch::StartsWith("kernel B (/boot/vmlinuz-6.12, label unsigned): a trial kexec_file_load refused it, before any reboot: EPERM"));
  CHECK_THAT(why, Catch::Contains("locked down"));
  s.mode = "vm";  // in guests: no root, no kexec, kernels are vm-run's to find
  CHECK(kc::start_refusal(fake(1000, {}, ENOSYS), s, "") == "");
}

TEST_CASE("a kernel without an initrd is refused at plan time, unless initrd=none says so", "[campaign]") {
  kc::State s = two_kernels(1);
  s.kernels[0].initrd = "/boot/initrd.img-6.1";
  const std::map<std::string, std::string> files = {{"/boot/vmlinuz-6.1", ""}, {"/boot/vmlinuz-6.12", ""},
                                                    {"/boot/initrd.img-6.1", ""}, {"/lib/modules/6.1/modules.dep", ""}};
  const std::string why = kc::start_refusal(fake(0, files, 0), s, "");
  CHECK_THAT(why, Catch::StartsWith("kernel B (/boot/vmlinuz-6.12): no initrd found (looked for /boot/initrd.img-6.12, "
                                    "/boot/initramfs-6.12.img"));
  CHECK_THAT(why, Catch::Contains(",initrd=none"));
  s.kernels[1].no_initrd = true;
  CHECK(kc::start_refusal(fake(0, files, 0), s, "") == "");
  CHECK(kc::parse_kernel_spec("/x/bzImage,initrd=none").no_initrd);
  CHECK(roundtrip(s).kernels[1].no_initrd);
  // no modules installed for a release: a warning, not a refusal
  const auto w = kc::start_warnings(fake(0, files, 0), s);
  REQUIRE(w.size() == 1);
  CHECK_THAT(w[0], Catch::Contains("no /lib/modules/6.12"));
}

TEST_CASE("the hook's unit: a system copy of the program, the checkout's mounts waited for, home on failure", "[campaign]") {
  const std::string unit = kc::hook_unit("ID", kc::kHookExe, "/home/me/my tree/results/campaign-ID/campaign.json",
                                         {"/home/me/my tree/results/campaign-ID", "/home/me/my tree/build/bin"});
  CHECK_THAT(unit, Catch::Contains("# state: /home/me/my tree/results/campaign-ID/campaign.json\n"));
  CHECK_THAT(unit, Catch::Contains("\nRequiresMountsFor=\"/home/me/my tree/results/campaign-ID\" \"/home/me/my tree/build/bin\"\n"));
  CHECK_THAT(unit, Catch::Contains("\nOnFailure=kbench-campaign-home.service\n"));
  CHECK_THAT(unit, Catch::Contains("\nExecStart=\"/usr/local/sbin/kbench-campaign-hook\" resume \"/home/me/my tree/results/campaign-ID/campaign.json\"\n"));
  CHECK_THAT(unit, Catch::Contains("\nType=simple\n"));
  CHECK_THAT(unit, Catch::Contains("\nWantedBy=multi-user.target\n"));
  CHECK(kc::hook_state_path(unit) == "/home/me/my tree/results/campaign-ID/campaign.json");
  const std::string home = kc::home_unit("ID", kc::kHookExe, "/r/c.json");
  CHECK_THAT(home, Catch::Contains("ExecStart=\"/usr/local/sbin/kbench-campaign-hook\" home \"/r/c.json\""));
  // what systemd would read otherwise: a specifier, a variable, an escape
  CHECK(kc::systemd_quote("/a%b/$HOME/\"q\"\\", true) == "\"/a%%b/$$HOME/\\\"q\\\"\\\\\"");
  CHECK(kc::systemd_quote("/a%b/$x", false) == "\"/a%%b/$x\"");
}

TEST_CASE("the init script: resume, else home; its words quoted for sh", "[campaign]") {
  const std::string script = kc::init_script("ID", kc::kHookExe, "/srv/it's/campaign.json");
  CHECK_THAT(script, Catch::StartsWith("#!/bin/sh\n"));
  CHECK_THAT(script, Catch::Contains("case \"$1\" in stop) exit 0 ;; esac\n"));
  CHECK_THAT(script, Catch::Contains("'/usr/local/sbin/kbench-campaign-hook' resume '/srv/it'\\''s/campaign.json' || "
                                     "'/usr/local/sbin/kbench-campaign-hook' home '/srv/it'\\''s/campaign.json'\n"));
  CHECK(kc::hook_state_path(script) == "/srv/it's/campaign.json");
  CHECK(kc::hook_state_path("#!/bin/sh\n") == "");
  // removed links first, the program last; every one recorded before any is written
  CHECK(kc::hook_files("systemd", true) == std::vector<std::string>{kc::kHookUnitLink, kc::kHookUnit, kc::kHomeUnit, kc::kHookExe});
  CHECK(kc::hook_files("initd", true) == std::vector<std::string>{kc::kRcLink, kc::kInitScript, kc::kHookExe});
  CHECK(kc::hook_files("initd", false) == std::vector<std::string>{kc::kInitScript, kc::kHookExe});
}

TEST_CASE("default_deadline_s: three budgets and a quarter of an hour, else two hours", "[campaign]") {
  CHECK(kc::default_deadline_s({"--quick"}) == 7200);
  CHECK(kc::default_deadline_s({"--budget", "300"}) == 1800);
  CHECK(kc::default_deadline_s({"--budget=100", "--quick"}) == 1200);
  CHECK(kc::default_deadline_s({"--budget", "x"}) == 7200);
}

TEST_CASE("eta_text: the time per step so far times the steps left", "[campaign]") {
  kc::State s = two_kernels(2);
  s.created = "2026-01-01T00:00:00Z";
  CHECK(kc::iso_epoch("1970-01-02T00:00:01Z") == 86401);
  CHECK(kc::iso_epoch("2026-01-01T00:00:00Z") == 1767225600);
  CHECK(kc::iso_epoch("yesterday") == -1);
  const long t0 = kc::iso_epoch(s.created);
  CHECK_THAT(kc::eta_text(s, t0 + 60), Catch::Contains("known when the first step has ended (4 steps left)"));
  s.steps[0].status = "done";
  s.steps[1].status = "failed";
  CHECK(kc::eta_text(s, t0 + 1200) == "ETA: about 20 min (2 steps left at 10 min a step so far, boots included)");
  s.steps[2].status = s.steps[3].status = "done";
  CHECK_THAT(kc::eta_text(s, t0 + 1200), Catch::StartsWith("ETA: the end"));
}

TEST_CASE("watchdog_unfit: a hardware watchdog whose timeout covers a boot, never softdog", "[campaign]") {
  kc::WatchdogSeen w{"/dev/watchdog0", "i6300ESB timer", "i6300esb", 2046};
  CHECK(kc::watchdog_unfit(w, 300) == "");
  CHECK_THAT(kc::watchdog_unfit(kc::WatchdogSeen{}, 300), Catch::Contains("no hardware watchdog"));
  CHECK(kc::watchdog_unfit(kc::WatchdogSeen{"", "", "i6300esb", 0}, 300) == "");  // a module to load at each boot
  CHECK_THAT(kc::watchdog_unfit(kc::WatchdogSeen{"/dev/watchdog0", "Software Watchdog", "softdog", 65535}, 300),
             Catch::Contains("dies at the kexec"));
  w.max_timeout = 120;
  CHECK_THAT(kc::watchdog_unfit(w, 300), Catch::Contains("longest timeout, 120 s"));
}

TEST_CASE("settling: the timers stopped, the clock daemon found, the clock's slew over", "[campaign]") {
  const std::string units = "apt-daily.timer         loaded active waiting Daily apt download activities\n"
                            "\xe2\x97\x8f logrotate.timer loaded active waiting Daily rotation of log files\n"
                            "man-db.timer            loaded active waiting Daily man-db regeneration\n\n";
  CHECK(kc::timer_units(units) == std::vector<std::string>{"apt-daily.timer", "logrotate.timer", "man-db.timer"});
  CHECK(kc::timer_units("").empty());
  CHECK(kc::time_daemon({"bash", "chronyd", "sshd"}) == "chronyd");
  CHECK(kc::time_daemon({"systemd-timesyn"}) == "systemd-timesyn");  // /proc/PID/comm keeps 15 characters
  CHECK(kc::time_daemon({"bash", "kbench-run"}) == "");
  CHECK(kc::clock_settled(0, 0x2001, 10000, 100));
  CHECK_FALSE(kc::clock_settled(5, 0x2001, 10000, 100));    // TIME_ERROR
  CHECK_FALSE(kc::clock_settled(0, 0x0040, 10000, 100));    // STA_UNSYNC
  CHECK_FALSE(kc::clock_settled(0, 0x2001, 10800, 100));    // chrony slewing by 8 % through the tick
  CHECK(kc::clock_settled(0, 0x2001, 10004, 100));          // 400 ppm: a clock's own error
}

TEST_CASE("modules_have: a kernel's driver for the watchdog, a module or built in", "[campaign]") {
  const std::string dep = "kernel/drivers/watchdog/i6300esb.ko.xz: kernel/drivers/watchdog/watchdog.ko.xz\n"
                          "kernel/drivers/watchdog/watchdog.ko.xz:\n";
  CHECK(kc::modules_have(dep, "", "i6300esb"));
  CHECK_FALSE(kc::modules_have(dep, "", "iTCO_wdt"));
  CHECK(kc::modules_have("", "kernel/drivers/watchdog/iTCO_wdt.ko\n", "iTCO-wdt"));
  CHECK_FALSE(kc::modules_have("", "", "i6300esb"));  // 6.1's cloud kernel: none
}
