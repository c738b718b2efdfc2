// settle.hpp — a step starts when its boot is over and the machine quiet
// (issue 59): under systemd, `systemctl is-system-running --wait` and the
// timers (apt's and the others) stopped for this boot and what they started
// ended; under an init script, the hook is rc's last script already. Then
// the clock: chrony slews it by up to about 8% for seconds after a boot,
// which every timing would carry. Logins are kept off with /run/nologin.
#pragma once

#include <string>

#include "driver/campaign.hpp"

namespace kbench::campaign {

// Waits (each wait bounded, the watchdog pinged) and says what it found,
// for the step's record.
std::string settle(const State& s);

// /run/nologin with a message for the campaign's boots; removed at the end.
void keep_logins_off(const State& s);
void let_logins_in();

}  // namespace kbench::campaign
