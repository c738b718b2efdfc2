// compress.hpp — a finished run's JSON Lines files kept gzip-compressed.
//
// samples.jsonl and runs.jsonl grow by one write per invocation while the run
// goes (readable at every moment, see rundir.hpp) and are compressed once it
// has ended, complete or interrupted, to about a tenth of their size.
// The system's gzip (Debian's gzip package is essential; busybox has one in
// the guests) compresses FILE into FILE.gz.tmp.<pid>, which is fsynced and
// renamed to FILE.gz; only then is FILE removed. Whenever the driver is
// killed or the machine stops, FILE or FILE.gz is complete: readers take
// FILE when it exists (after a crash between the rename and the removal both
// exist, alike), else FILE.gz. --resume makes FILE again the same way before
// it appends. gzip runs in its own process group, so a Ctrl-C at the end of a
// run does not cut it short; without gzip, or when it fails, FILE stays as it
// is and the run is just larger.
#pragma once

#include <string>

namespace kbench::driver {

// FILE -> FILE.gz as above. False (FILE untouched, no temporary left) with
// the reason in *why when gzip is missing or fails.
bool compress_file(const std::string& path, std::string* why);

// FILE.gz -> FILE, the same way round, for --resume: FILE when it exists
// already (FILE.gz then goes: FILE is the one appended to), else FILE.gz
// decompressed. Also removes temporaries a killed driver left. Throws
// std::runtime_error when FILE.gz cannot be decompressed.
void restore_file(const std::string& path);

}  // namespace kbench::driver
