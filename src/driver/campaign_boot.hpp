// campaign_boot.hpp — what a campaign's test boot gets and needs, as pure
// functions of what the machine shows (issue 59): the options that bring a
// machine home by itself (panic=, oops=panic, softlockup_panic=, a serial
// console), where each distribution keeps an installed kernel's image and
// initrd, and what an errno of kexec_file_load means. The machine is read
// by src/campaign/ and these are unit-tested on made-up inputs
// (tests/harness/unit/test_campaign.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kbench::campaign {

// What every test boot carries besides the current command line.
struct BootSafety {
  int panic_s = 10;           // panic=: reboot this long after a panic (home: the firmware's default kernel)
  std::string serial;         // "ttyS0": a console on it too ("" none: there is none, or the line names one)
  int watchdog_open_s = 0;    // > 0: the hardware watchdog is kept across the kexec: watchdog.stop_on_reboot=0
                              // and watchdog.open_timeout= this (a boot whose user space never takes it over resets)
};

// "panic=10 oops=panic softlockup_panic=1 [console=tty0 console=ttyS0,115200n8]
// [watchdog.stop_on_reboot=0 watchdog.open_timeout=N]": an oops or a soft
// lockup panics, and a panic reboots into the default kernel instead of
// leaving the machine stopped for someone with the BMC.
std::string safety_args(const BootSafety& b);

// The command line a kexec'd kernel gets: the current one without the boot
// loader's BOOT_IMAGE= and initrd= words (the campaign passes its own
// initrd), without any word the safety options set or an earlier marker,
// then `safety`, then the explicit extra options (which thus win).
std::string kexec_cmdline(const std::string& proc_cmdline, const std::string& safety, const std::string& append);

// The first serial port with a UART behind it in /proc/tty/driver/serial
// ("0: uart:16550A port:000003F8 ..."): "ttyS0"; "" for none.
std::string serial_console(const std::optional<std::string>& proc_tty_driver_serial);

// Whether a command line names a console already (console=...).
bool has_console(const std::string& cmdline);

// Where an installed kernel of release R is: /boot/vmlinuz-R (Debian,
// Fedora, SUSE), then the systemd-boot layout ($BOOT/MACHINE-ID/R/linux,
// $BOOT being /boot, /efi or /boot/efi).
std::vector<std::string> image_candidates(const std::string& release, const std::string& machine_id);

// Where that kernel's initrd would be, in order: beside the image (its
// distribution's names: initrd.img-R Debian and Ubuntu, initramfs-R.img
// Fedora and RHEL, initrd-R SUSE; "initrd" beside a systemd-boot "linux"),
// then the same names in /boot (an initrd made for a kernel built elsewhere).
std::vector<std::string> initrd_candidates(const std::string& image, const std::string& release);

// A watchdog the machine shows (/sys/class/watchdog/watchdog0), or the
// module named by --watchdog for one not loaded yet.
struct WatchdogSeen {
  std::string device;    // /dev/watchdog0 ("" when no driver is loaded)
  std::string identity;  // "i6300ESB timer", "iTCO_wdt", "Software Watchdog"
  std::string module;    // its driver's module ("" when built in or unknown)
  int max_timeout = 0;   // its longest timeout in seconds (0: not said)
};

// "" when the watchdog can bring home a boot that hangs before its hook,
// with a timeout of `margin_s`; else why not. softdog lives in the kernel
// and dies at the kexec; one whose longest timeout is shorter than the
// margin would reset boots that are only slow.
std::string watchdog_unfit(const WatchdogSeen& w, int margin_s);

// ---- a boot settled: what a step waits for -------------------------------

// The timer units of `systemctl list-units --type=timer --state=active
// --plain --no-legend` (apt-daily.timer, man-db.timer, ...): stopped for
// the boot, so that nothing they start runs beside a step.
std::vector<std::string> timer_units(const std::string& list_units);

// The clock daemon among the process names of /proc/*/comm (chronyd, ntpd,
// systemd-timesyncd, ...), "" for none: then nothing will slew the clock.
std::string time_daemon(const std::vector<std::string>& comms);

// Whether adjtimex(2) says the clock is synchronised and not being slewed
// hard: not TIME_ERROR, STA_UNSYNC clear, and its tick within 500 ppm of
// nominal (chrony slews by up to a tenth through the tick after a boot).
bool clock_settled(int adjtimex_state, long status, long tick, long user_hz);

// Whether a kernel has the module MODULE, by its modules.dep and
// modules.builtin ("kernel/drivers/watchdog/i6300esb.ko.xz: ..."); - and _
// are one. A kernel without its driver cannot take the watchdog, which
// would then reset its boot in the middle of a step.
bool modules_have(const std::string& modules_dep, const std::string& modules_builtin, const std::string& module);

// "EPERM", "ENOEXEC", ... (the number for one not known).
std::string errno_name(int e);

// What kexec_file_load's errno `e` means for a trial load of an image, given
// the lockdown state (/sys/kernel/security/lockdown: "[none] integrity ...").
std::string load_refusal(int e, const std::string& lockdown);

}  // namespace kbench::campaign
