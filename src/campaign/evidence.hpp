// evidence.hpp — what the previous boot left when it failed (issue 59): its
// kernel log (the journal of the previous boot, where it is kept) and the
// pstore records (a panic's log saved by EFI, ramoops, ERST), copied into
// the campaign's directory so that a failed kernel can be looked into
// after the machine came home.
#pragma once

#include <string>

#include "driver/campaign.hpp"

namespace kbench::campaign {

// Copies them to DIR/evidence/NAME/; returns what was kept ("" nothing).
std::string keep_evidence(const State& s, const std::string& name);

}  // namespace kbench::campaign
