// machine.hpp — what kbench-campaign does to the machine: read it (through
// a fake root in the tests), load a kernel with kexec_file_load, reboot.
#pragma once

#include <string>

#include "driver/campaign.hpp"

namespace kbench::campaign {

// The checks' view of this machine (KBENCH_CAMPAIGN_FAKE_ROOT: a fake one).
Probe machine_probe();
// This boot: release, boot id, command line, /proc/version, the time.
Now machine_now();

bool systemd_runs();
bool openrc_runs();

// Loads the kernel for the next boot with `cmdline`; "" or why not.
std::string kexec_load(const Kernel& k, const std::string& cmdline);
void kexec_unload();

// Reboots: kexec into the image loaded, or home (through the firmware into
// the default kernel). With systemd, a clean shutdown (systemctl --no-block;
// this process then ends at its SIGTERM, so that nothing waits for it);
// else, and when a shutdown has not happened after a while (180 s under
// systemd; 20 s under another init, which may not act on it while its rc,
// running the hook, has not ended: busybox's does not), the
// shutdown's last steps done here: every process ended, every file system
// synced and remounted read-only, then reboot(2). Never returns (the fake
// machine of the tests: says what it would do and exits 0).
[[noreturn]] void reboot_now(bool kexec);

}  // namespace kbench::campaign
