// SPDX-License-Identifier: Apache-2.0
#include "progress.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>

#include "numbers.hpp"

namespace dpselect::cli {
namespace {

using Clock = std::chrono::steady_clock;

// A terminal line appears only once a run has lasted this long (short runs never flicker), and
// is redrawn this often.
constexpr auto terminal_delay = std::chrono::seconds(1);
constexpr auto terminal_interval = std::chrono::milliseconds(250);
// Plain lines (--progress without a terminal) go to logs: one every 10 s at most.
constexpr auto plain_line_interval = std::chrono::seconds(10);

}  // namespace

std::string format_duration(double seconds) {
  char text[32];
  if (seconds < 90) {
    std::snprintf(text, sizeof text, "%.0f s", std::ceil(seconds));
  } else if (seconds < 90 * 60) {
    std::snprintf(text, sizeof text, "%.0f min", std::ceil(seconds / 60));
  } else {
    std::snprintf(text, sizeof text, "%.1f h", seconds / 3600);
  }
  return text;
}

Progress::Progress(std::string what, std::uint64_t total, std::string unit, bool forced,
                   bool long_enough)
    : what_(std::move(what)), total_(total), unit_(std::move(unit)), mode_(Mode::off),
      start_(Clock::now()) {
  const bool terminal = isatty(STDERR_FILENO) != 0;
  if (terminal && (forced || long_enough)) {
    mode_ = Mode::terminal;
  } else if (forced) {
    mode_ = Mode::plain_lines;
  }
  // The first plain line is printed here, so that it says 0% however soon the work ends.
  if (mode_ == Mode::plain_lines) std::fprintf(stderr, "%s\n", line().c_str());
  if (mode_ != Mode::off) drawer_ = std::thread([this] { draw_loop(); });
}

Progress::~Progress() {
  if (mode_ == Mode::off) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_requested_.notify_all();
  drawer_.join();
  if (mode_ == Mode::terminal && drawn_width_ > 0) {
    std::fprintf(stderr, "\r%*s\r", static_cast<int>(drawn_width_), "");
  } else if (mode_ == Mode::plain_lines && done_.load() >= total_) {
    std::fprintf(stderr, "%s\n", line().c_str());
  }
  std::fflush(stderr);
}

void Progress::update(std::uint64_t done) { done_.store(done < total_ ? done : total_); }

std::string Progress::line() const {
  const std::uint64_t done = done_.load();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  std::string text = "dpselect: " + what_ + ": ";
  const double fraction = total_ == 0 ? 1.0 : static_cast<double>(done) / static_cast<double>(total_);
  char percent[16];
  std::snprintf(percent, sizeof percent, "%.0f%%", std::floor(100 * fraction));
  text += std::string(percent) + " (" + format_number(done) + " of " + format_number(total_) +
          (unit_.empty() ? "" : " " + unit_) + ")";
  if (done >= total_) return text;
  if (done == 0) return text + ", estimating the time left";
  return text + ", about " + format_duration(elapsed * (1 - fraction) / fraction) + " left";
}

void Progress::draw_loop() {
  std::unique_lock lock(mutex_);
  if (mode_ == Mode::plain_lines) {
    while (!stop_requested_.wait_for(lock, plain_line_interval, [this] { return stopping_; })) {
      std::fprintf(stderr, "%s\n", line().c_str());
    }
    return;
  }
  if (stop_requested_.wait_for(lock, terminal_delay, [this] { return stopping_; })) return;
  do {
    const std::string text = line();
    // Pad over the rest of a longer previous line.
    const int pad = drawn_width_ > text.size() ? static_cast<int>(drawn_width_ - text.size()) : 0;
    std::fprintf(stderr, "\r%s%*s", text.c_str(), pad, "");
    std::fflush(stderr);
    drawn_width_ = text.size() + static_cast<std::size_t>(pad);
  } while (!stop_requested_.wait_for(lock, terminal_interval, [this] { return stopping_; }));
}

}  // namespace dpselect::cli
