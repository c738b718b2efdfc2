// perf_script.hpp — the compact profile of one case, from `perf script` text.
//
// `kbench-run --profile` records each case once more under `perf record -g`
// and reads the recording back with
//   perf script -F event,period,ip,sym,dso
// which prints, per sample, a header line (period, event) and one line per
// frame of its call chain ("\tADDR SYMBOL (DSO)", the sampled function
// first). The whole recording (megabytes) is reduced here to what a reader
// of a comparison needs: the share of samples per function, kernel and user
// apart, and the commonest callers of the busiest functions. Parsing is a
// pure function of the text so that it can be checked on recorded output.
#pragma once

#include <string_view>

#include "driver/json_value.hpp"

namespace kbench::driver {

// How many functions per side (kernel, user) the profile lists, at least:
// the busiest by self share, plus the busiest by inclusive share.
constexpr int kProfileTopSymbols = 30;
// Callers are summarised for this many of the busiest functions per side.
constexpr int kProfileChainSymbols = 8;

// The profile object of profiles.jsonl (src/REFERENCE.md, Run directories):
// event, samples, kernel_samples, user_samples, kernel_share,
// kernel_symbols, user_symbols, kernel_other_share, user_other_share,
// chains. Shares are of the period-weighted total (for cpu-clock every
// sample has the same period: a share of samples). Text that holds no
// sample gives samples 0 and empty lists.
JsonValue summarize_perf_script(std::string_view text);

}  // namespace kbench::driver
