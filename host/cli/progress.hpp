// A "working..." line before and a "done" line after a long computation, on stderr and only
// when stderr is a terminal: scripts and pipes see nothing there but errors and warnings.
#pragma once

#include <cstdint>
#include <string>

namespace dpselect::cli {

class Progress {
 public:
  // Announces `what` when stderr is a terminal and `work_items` exceeds 10^7.
  Progress(std::string what, std::uint64_t work_items);
  // Reports that `what` finished after `seconds`.
  void done(double seconds);

 private:
  std::string what_;
  bool shown_;
};

}  // namespace dpselect::cli
