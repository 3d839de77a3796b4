// SPDX-License-Identifier: Apache-2.0
// Progress of a long computation on stderr: the fraction done and an estimate of the time left.
//
// On a terminal it is one line redrawn in place (\r) from one second after the start, and
// cleared at the end, so a finished command leaves nothing behind but its results. When stderr
// is not a terminal (a pipe, a log file, a test) nothing is printed unless the user asked with
// --progress; then it prints plain lines: one at the start, one at most every 10 seconds, and one
// at the end.
//
// Privacy: the time left is an estimate from the elapsed time of a private run. On the operator's
// own terminal that is transient and acceptable (the operator could time the run anyway); it is
// never part of the default output, and a finished run prints no timing ("done in X s" is gone).
// --progress writes it to wherever stderr goes: such a log is not for publication.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace dpselect::cli {

// "45 s", "12 min", "3.5 h" (rounded up below 90 min): precise enough for an estimate.
std::string format_duration(double seconds);

class Progress {
 public:
  // Progress of `what` over `total` units named `unit` ("releases"). Shown when `forced`
  // (--progress) or when stderr is a terminal and `long_enough` (the caller's judgement, from
  // public sizes only, that the work can take more than about 2 s); otherwise it does nothing.
  Progress(std::string what, std::uint64_t total, std::string unit, bool forced, bool long_enough);
  // Clears the line (terminal), or prints the last line when all units were done (plain lines).
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `done` of the total units are finished. Cheap and thread-safe: the drawing happens on a
  // separate thread at a limited rate.
  void update(std::uint64_t done);

  bool shown() const { return mode_ != Mode::off; }

 private:
  enum class Mode { off, terminal, plain_lines };
  void draw_loop();
  std::string line() const;

  std::string what_;
  std::uint64_t total_;
  std::string unit_;
  Mode mode_;
  std::chrono::steady_clock::time_point start_;
  std::atomic<std::uint64_t> done_{0};
  std::size_t drawn_width_ = 0;  // characters of the line on the terminal now
  std::mutex mutex_;
  std::condition_variable stop_requested_;
  bool stopping_ = false;
  std::thread drawer_;
};

}  // namespace dpselect::cli
