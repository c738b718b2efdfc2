// watchdog.hpp — the hardware watchdog, armed across each kexec (issue 59).
//
// A boot that never reaches the hook (an initramfs shell, emergency.target,
// a passphrase prompt, a hang) is reset into the default kernel by the
// watchdog, and that boot records the failure. The watchdog keeps counting
// across a kexec only where the kernel that kexecs does not stop it: the
// watchdog core stops the drivers marked stop-on-reboot at the reboot
// notifiers, unless its stop_on_reboot parameter is 0. Every test boot
// gets watchdog.stop_on_reboot=0 on its command line; the default kernel
// has its watchdog modules reloaded with it, where nothing holds the device.
// While the hook runs it pings the watchdog; before each reboot it sets the
// boot's margin; at the end it disarms it (the magic close).
#pragma once

#include <string>

#include "driver/campaign.hpp"
#include "driver/campaign_boot.hpp"

namespace kbench::campaign {

// What this machine shows: /sys/class/watchdog/watchdog0, else `module`
// (--watchdog MODULE: a driver not loaded yet).
WatchdogSeen watchdog_seen(const std::string& module);

// Takes the campaign's watchdog in this boot: its driver loaded when its
// device is missing, the core made not to stop it at a kexec where it can
// be, the device opened, its timeout set to s.watchdog_s. Returns what it
// did or could not do, for the log.
std::string watchdog_take(const State& s);
// A keepalive, when the watchdog is taken (cheap; called about once a second).
void watchdog_ping();
// Before a reboot: the margin of the next boot set, pinged, left running.
void watchdog_arm(int seconds);
// The magic close: the watchdog stops (the end, campaign-stop, the hook's
// failure), whether this process took it or not.
void watchdog_disarm();

}  // namespace kbench::campaign
