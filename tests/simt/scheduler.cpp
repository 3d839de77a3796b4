// SPDX-License-Identifier: Apache-2.0
// The SIMT scheduler (simt/scheduler.hpp): blocks in a seeded order, threads as fibers.
#include "simt/scheduler.hpp"

#include <boost/context/fiber.hpp>
#include <boost/context/preallocated.hpp>
#include <boost/context/stack_context.hpp>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

// Under AddressSanitizer each switch between the scheduler's stack and a thread's is announced
// (__sanitizer_start_switch_fiber / __sanitizer_finish_switch_fiber), so that ASan checks device
// code against the stack it really runs on and reports its out-of-bounds accesses with their line.
#include "simt/address_sanitizer.hpp"
#if defined(SIMT_ADDRESS_SANITIZER)
#include <sanitizer/common_interface_defs.h>
#endif

namespace simt {

namespace {

namespace context = boost::context;

constexpr unsigned int kWarpLanes = 32;
// Each thread's stack. Device code keeps small frames; AddressSanitizer's redzones grow them.
constexpr std::size_t kStackBytes = std::size_t{256} << 10;

enum class ThreadState : std::uint8_t { ready, at_block_barrier, at_warp_collective, done };

struct Thread {
  context::fiber fiber;     // the thread's own context, while it is suspended
  context::fiber scheduler;  // the scheduler's context, while the thread runs
  ThreadState state = ThreadState::ready;
  unsigned int linear = 0;  // x + y * bx + z * bx * by: warps are 32 consecutive threads
  uint3_value index{};
  // The pending synchronisation.
  CollectiveKind kind = CollectiveKind::sync;
  unsigned int mask = 0;
  std::uint64_t value = 0;
  unsigned int source = 0;
  int predicate = 0;
  const char* what = "";
  std::uint64_t result = 0;
  // A shuffle of more than 8 bytes (shuffle_bytes): the lane's value, where its result goes, and
  // the size of both.
  const void* bytes = nullptr;
  void* out = nullptr;
  std::size_t byte_count = 0;
  // The thread's stack, and the scheduler's as ASan last saw it (SIMT_ADDRESS_SANITIZER).
  const void* stack_bottom = nullptr;
  std::size_t stack_size = 0;
  const void* scheduler_bottom = nullptr;
  std::size_t scheduler_size = 0;
  void* fake_stack = nullptr;
};

// The switches ASan is told of: from the scheduler to a thread and back, from a thread to the
// scheduler and back, and a thread's last switch, after which its stack is gone.
#if defined(SIMT_ADDRESS_SANITIZER)
void entering_thread(void** scheduler_fake_stack, const Thread& t) {
  __sanitizer_start_switch_fiber(scheduler_fake_stack, t.stack_bottom, t.stack_size);
}
void back_in_scheduler(void* scheduler_fake_stack) {
  __sanitizer_finish_switch_fiber(scheduler_fake_stack, nullptr, nullptr);
}
void leaving_thread(Thread& t, bool last) {
  __sanitizer_start_switch_fiber(last ? nullptr : &t.fake_stack, t.scheduler_bottom, t.scheduler_size);
}
void back_in_thread(Thread& t) {
  __sanitizer_finish_switch_fiber(t.fake_stack, &t.scheduler_bottom, &t.scheduler_size);
}
#else
void entering_thread(void**, const Thread&) {}
void back_in_scheduler(void*) {}
void leaving_thread(Thread&, bool) {}
void back_in_thread(Thread&) {}
#endif

// A stack handed to Boost.Context without allocating: the launch owns one per thread of a block
// and reuses them block after block.
struct BorrowedStack {
  void* top;
  std::size_t size;
  context::stack_context allocate() {
    context::stack_context stack;
    stack.sp = top;
    stack.size = size;
    return stack;
  }
  void deallocate(context::stack_context&) noexcept {}
};

struct Block;

struct Running {
  Block* block = nullptr;
  Thread* thread = nullptr;
};
thread_local Running running;
thread_local Position current_position;
std::atomic<std::uint64_t> launch_counter{0};

struct Block {
  const char* kernel = "";
  Position position;
  std::vector<Thread> threads;
  unsigned char* dynamic_shared = nullptr;
  std::exception_ptr error;

  std::string where() const {
    return std::string("kernel ") + kernel + ", block (" + std::to_string(position.block_index.x) + ", " +
           std::to_string(position.block_index.y) + ", " + std::to_string(position.block_index.z) + ")";
  }

  void resume(Thread& thread) {
    current_position = position;
    current_position.thread_index = thread.index;
    running = Running{this, &thread};
    void* scheduler_fake_stack = nullptr;
    entering_thread(&scheduler_fake_stack, thread);
    thread.fiber = std::move(thread.fiber).resume();
    back_in_scheduler(scheduler_fake_stack);
    running = Running{};
  }

  // Completes the block barrier if every thread that has not ended waits at it.
  bool release_block_barrier() {
    int any = 0;
    bool waiting = false;
    for (const Thread& t : threads) {
      if (t.state == ThreadState::done) continue;
      if (t.state != ThreadState::at_block_barrier) return false;
      waiting = true;
      any |= t.predicate != 0 ? 1 : 0;
    }
    if (!waiting) return false;
    for (Thread& t : threads) {
      if (t.state == ThreadState::at_block_barrier) {
        t.result = static_cast<std::uint64_t>(any);
        t.state = ThreadState::ready;
      }
    }
    return true;
  }

  // Completes the collectives of warps [first_warp, end_warp) (all of them by default) whose named
  // lanes have all arrived; returns whether any did.
  bool release_warp_collectives(unsigned int first_warp = 0, unsigned int end_warp = ~0u) {
    bool released = false;
    const unsigned int warps = std::min(end_warp, (static_cast<unsigned int>(threads.size()) + kWarpLanes - 1) / kWarpLanes);
    for (unsigned int warp = first_warp; warp < warps; ++warp) {
      Thread* lanes = threads.data() + warp * kWarpLanes;
      const unsigned int lane_count =
          std::min<unsigned int>(kWarpLanes, static_cast<unsigned int>(threads.size()) - warp * kWarpLanes);
      for (unsigned int lane = 0; lane < lane_count; ++lane) {
        Thread& first = lanes[lane];
        if (first.state != ThreadState::at_warp_collective) continue;
        const unsigned int mask = first.mask;
        bool complete = true;
        for (unsigned int other = 0; other < kWarpLanes && complete; ++other) {
          if (((mask >> other) & 1u) == 0) continue;
          if (other >= lane_count) {
            fail(where() + ": " + first.what + " in lane " + std::to_string(lane) + " names lane " +
                 std::to_string(other) + " of warp " + std::to_string(warp) + ", which does not exist");
          }
          const Thread& t = lanes[other];
          if (t.state == ThreadState::done) {
            fail(where() + ": " + first.what + " in lane " + std::to_string(lane) + " of warp " +
                 std::to_string(warp) + " names lane " + std::to_string(other) + " (mask 0x" + hex(mask) +
                 "), which has ended without arriving");
          }
          if (t.state != ThreadState::at_warp_collective) complete = false;
        }
        if (!complete) continue;
        for (unsigned int other = 0; other < kWarpLanes; ++other) {
          if (((mask >> other) & 1u) == 0) continue;
          const Thread& t = lanes[other];
          if (t.mask != mask || t.kind != first.kind || t.byte_count != first.byte_count) {
            fail(where() + ": warp " + std::to_string(warp) + " lane " + std::to_string(lane) + " is at " +
                 first.what + " (mask 0x" + hex(mask) + ") while lane " + std::to_string(other) + " is at " +
                 t.what + " (mask 0x" + hex(t.mask) + ")");
          }
        }
        std::uint64_t ballot = 0;
        for (unsigned int other = 0; other < kWarpLanes; ++other) {
          if (((mask >> other) & 1u) != 0 && lanes[other].value != 0) ballot |= std::uint64_t{1} << other;
        }
        for (unsigned int other = 0; other < kWarpLanes; ++other) {
          if (((mask >> other) & 1u) == 0) continue;
          Thread& t = lanes[other];
          unsigned int from = other;
          const bool shuffle = t.kind == CollectiveKind::shuffle || t.kind == CollectiveKind::shuffle_bytes;
          if (shuffle) from = t.source % kWarpLanes;
          if (t.kind == CollectiveKind::shuffle_xor) from = (other ^ t.source) % kWarpLanes;
          if ((shuffle || t.kind == CollectiveKind::shuffle_xor) &&
              ((mask >> from) & 1u) == 0) {
            fail(where() + ": " + t.what + " in lane " + std::to_string(other) + " of warp " +
                 std::to_string(warp) + " reads lane " + std::to_string(from) + ", outside its mask 0x" +
                 hex(mask));
          }
          t.result = t.kind == CollectiveKind::ballot ? ballot : lanes[from].value;
          // Every lane of the collective is suspended here, so each reads the others' values as
          // they were posted; each result goes to a buffer of its own lane.
          if (t.kind == CollectiveKind::shuffle_bytes) std::memcpy(t.out, lanes[from].bytes, t.byte_count);
        }
        for (unsigned int other = 0; other < kWarpLanes; ++other) {
          if (((mask >> other) & 1u) != 0) lanes[other].state = ThreadState::ready;
        }
        released = true;
      }
    }
    return released;
  }

  [[noreturn]] void deadlock() {
    std::string text = where() + ": no thread can go on (a barrier or warp collective never completes):";
    int listed = 0;
    for (const Thread& t : threads) {
      if (t.state == ThreadState::done || listed >= 8) continue;
      ++listed;
      text += " thread " + std::to_string(t.linear) +
              (t.state == ThreadState::at_block_barrier ? std::string(" at ") + t.what
                                                        : std::string(" at ") + t.what + " (mask 0x" + hex(t.mask) +
                                                              ")") +
              ";";
    }
    fail(text);
  }

  static std::string hex(unsigned int value) {
    char text[16];
    std::snprintf(text, sizeof text, "%08X", value);
    return text;
  }
};

// The thread's entry: runs the kernel body, then ends.
struct ThreadEntry {
  Block* block;
  Thread* thread;
  const std::function<void()>* body;
  context::fiber operator()(context::fiber&& scheduler) {
    back_in_thread(*thread);
    thread->scheduler = std::move(scheduler);
    try {
      (*body)();
    } catch (const context::detail::forced_unwind&) {
      throw;
    } catch (...) {
      if (!block->error) block->error = std::current_exception();
    }
    thread->state = ThreadState::done;
    leaving_thread(*thread, true);
    return std::move(thread->scheduler);
  }
};

// Suspends the running thread until the scheduler resumes it.
void suspend(Thread& thread) {
  leaving_thread(thread, false);
  thread.scheduler = std::move(thread.scheduler).resume();
  back_in_thread(thread);
}

Running require_running(const char* what) {
  if (running.thread == nullptr) fail(std::string(what) + " called outside a kernel");
  return running;
}

}  // namespace

Position& position() { return current_position; }

std::uint64_t schedule_seed() {
  static const std::uint64_t seed = [] {
    const char* text = std::getenv("SIMT_SEED");
    return text != nullptr ? std::strtoull(text, nullptr, 10) : std::uint64_t{1};
  }();
  return seed;
}

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "simt: %s\n", message.c_str());
  std::fflush(stderr);
  std::abort();
}

unsigned char* dynamic_shared_bytes() { return require_running("dynamic shared memory").block->dynamic_shared; }

int block_barrier(int predicate, const char* what) {
  const Running now = require_running(what);
  now.thread->state = ThreadState::at_block_barrier;
  now.thread->predicate = predicate;
  now.thread->what = what;
  suspend(*now.thread);
  return static_cast<int>(now.thread->result);
}

std::uint64_t warp_collective(CollectiveKind kind, unsigned int mask, std::uint64_t value, unsigned int source,
                              const char* what) {
  const Running now = require_running(what);
  const unsigned int lane = now.thread->linear % kWarpLanes;
  if (((mask >> lane) & 1u) == 0) {
    fail(now.block->where() + ": " + what + " in lane " + std::to_string(lane) + " of warp " +
         std::to_string(now.thread->linear / kWarpLanes) + " with a mask (0x" + Block::hex(mask) +
         ") that leaves the lane out");
  }
  Thread& thread = *now.thread;
  thread.state = ThreadState::at_warp_collective;
  thread.kind = kind;
  thread.mask = mask;
  thread.value = value;
  thread.source = source;
  thread.what = what;
  thread.byte_count = 0;
  suspend(thread);
  return thread.result;
}

void warp_shuffle_bytes(unsigned int mask, const void* value, void* out, std::size_t bytes, unsigned int source,
                        const char* what) {
  const Running now = require_running(what);
  Thread& thread = *now.thread;
  const unsigned int lane = thread.linear % kWarpLanes;
  if (((mask >> lane) & 1u) == 0) {
    fail(now.block->where() + ": " + what + " in lane " + std::to_string(lane) + " of warp " +
         std::to_string(thread.linear / kWarpLanes) + " with a mask (0x" + Block::hex(mask) +
         ") that leaves the lane out");
  }
  thread.state = ThreadState::at_warp_collective;
  thread.kind = CollectiveKind::shuffle_bytes;
  thread.mask = mask;
  thread.value = 0;
  thread.source = source;
  thread.what = what;
  thread.bytes = value;
  thread.out = out;
  thread.byte_count = bytes;
  suspend(thread);
}

void launch(const char* kernel_name, dim3_value grid, dim3_value block_dim, std::size_t dynamic_shared_bytes,
            const std::function<void()>& block_body) {
  if (running.thread != nullptr) fail(std::string("kernel ") + kernel_name + " launched from device code");
  const std::uint64_t threads_per_block = std::uint64_t{block_dim.x} * block_dim.y * block_dim.z;
  const std::uint64_t blocks = std::uint64_t{grid.x} * grid.y * grid.z;
  if (threads_per_block == 0 || threads_per_block > 1024 || blocks == 0) {
    fail(std::string("kernel ") + kernel_name + " launched with " + std::to_string(blocks) + " blocks of " +
         std::to_string(threads_per_block) + " threads");
  }
  // The order of the blocks: forward, reverse or shuffled, drawn from the seed and the launch's
  // number, so that one seed gives one schedule for the whole run.
  std::mt19937_64 random(schedule_seed() * 0x9E3779B97F4A7C15ull + launch_counter.fetch_add(1));
  std::vector<std::uint64_t> order(blocks);
  std::iota(order.begin(), order.end(), 0);
  switch (random() % 3) {
    case 0: break;
    case 1: std::reverse(order.begin(), order.end()); break;
    default: std::shuffle(order.begin(), order.end(), random);
  }
  // The threads' stacks, kept from launch to launch (allocated, never filled: a fiber touches the
  // few pages it uses).
  static thread_local std::unique_ptr<unsigned char[]> stacks;
  static thread_local std::uint64_t stack_threads = 0;
  if (stack_threads < threads_per_block) {
    stacks.reset(new unsigned char[threads_per_block * kStackBytes]);
    stack_threads = threads_per_block;
  }
  std::vector<unsigned char> shared(dynamic_shared_bytes + 16);
  auto* aligned_shared = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(shared.data()) + 15) &
                                                          ~std::uintptr_t{15});
  for (const std::uint64_t b : order) {
    Block block;
    block.kernel = kernel_name;
    block.position.block_index = {static_cast<unsigned int>(b % grid.x),
                                  static_cast<unsigned int>(b / grid.x % grid.y),
                                  static_cast<unsigned int>(b / (std::uint64_t{grid.x} * grid.y))};
    block.position.block_dim = block_dim;
    block.position.grid_dim = grid;
    block.dynamic_shared = aligned_shared;
    std::memset(aligned_shared, 0xCD, dynamic_shared_bytes);
    block.threads.resize(threads_per_block);
    for (unsigned int t = 0; t < threads_per_block; ++t) {
      Thread& thread = block.threads[t];
      thread.linear = t;
      thread.index = {t % block_dim.x, t / block_dim.x % block_dim.y, t / (block_dim.x * block_dim.y)};
      unsigned char* top = stacks.get() + (std::size_t{t} + 1) * kStackBytes;
      thread.stack_bottom = top - kStackBytes;
      thread.stack_size = kStackBytes;
      thread.fiber = context::fiber(std::allocator_arg, BorrowedStack{top, kStackBytes},
                                    ThreadEntry{&block, &thread, &block_body});
    }
    // One thread at a time, drawn from those that can run, runs to its next synchronisation point.
    // A warp collective completes as soon as its last lane arrives, so a warp may go on past it
    // while other warps of the block have not run at all, as warps do on a device. Each block
    // draws one of two policies: the next thread from a random warp every time, or the lanes of
    // one warp (in random order) for as long as any can run, so that one warp runs ahead of the
    // others up to the next block barrier (where a missing barrier between warps shows).
    const unsigned int warps = static_cast<unsigned int>((threads_per_block + kWarpLanes - 1) / kWarpLanes);
    std::vector<std::vector<unsigned int>> runnable(warps);
    std::uint32_t warps_with_runnable = 0;  // bit w: runnable[w] is not empty (at most 32 warps)
    for (unsigned int t = 0; t < threads_per_block; ++t) {
      runnable[t / kWarpLanes].push_back(t);
      warps_with_runnable |= 1u << (t / kWarpLanes);
    }
    const bool warp_runs_ahead = random() % 2 == 0;
    unsigned int current_warp = warps;  // none yet
    for (;;) {
      if (current_warp == warps || !warp_runs_ahead || runnable[current_warp].empty()) {
        current_warp = warps;
        if (warps_with_runnable != 0) {
          std::uint32_t bits = warps_with_runnable;
          for (auto skip = random() % static_cast<unsigned int>(std::popcount(bits)); skip > 0; --skip) {
            bits &= bits - 1;
          }
          current_warp = static_cast<unsigned int>(std::countr_zero(bits));
        }
      }
      if (current_warp != warps) {
        std::vector<unsigned int>& lanes = runnable[current_warp];
        const std::size_t pick = random() % lanes.size();
        const unsigned int t = lanes[pick];
        lanes[pick] = lanes.back();
        lanes.pop_back();
        if (lanes.empty()) warps_with_runnable &= ~(1u << current_warp);
        Thread& thread = block.threads[t];
        block.resume(thread);
        if (block.error) std::rethrow_exception(block.error);
        if (thread.state == ThreadState::at_warp_collective) {
          const unsigned int first = current_warp * kWarpLanes;
          const unsigned int end = std::min<unsigned int>(first + kWarpLanes, static_cast<unsigned int>(threads_per_block));
          // The release (and its checks) once the last lane of the mask has arrived; it releases
          // the lanes of the mask (any other collective of the warp was released when complete).
          bool mask_still_running = false;  // a lane of the mask that can still arrive
          for (std::uint32_t bits = thread.mask; bits != 0 && !mask_still_running; bits &= bits - 1) {
            const unsigned int lane = first + static_cast<unsigned int>(std::countr_zero(bits));
            mask_still_running = lane < end && block.threads[lane].state == ThreadState::ready;
          }
          if (!mask_still_running && block.release_warp_collectives(current_warp, current_warp + 1)) {
            for (std::uint32_t bits = thread.mask; bits != 0; bits &= bits - 1) {
              const unsigned int lane = first + static_cast<unsigned int>(std::countr_zero(bits));
              if (lane < end && block.threads[lane].state == ThreadState::ready) lanes.push_back(lane);
            }
            if (!lanes.empty()) warps_with_runnable |= 1u << current_warp;
          }
        }
        continue;
      }
      if (block.release_block_barrier() || block.release_warp_collectives()) {
        for (unsigned int t = 0; t < threads_per_block; ++t) {
          if (block.threads[t].state == ThreadState::ready) {
            runnable[t / kWarpLanes].push_back(t);
            warps_with_runnable |= 1u << (t / kWarpLanes);
          }
        }
        current_warp = warps;
        continue;
      }
      if (std::all_of(block.threads.begin(), block.threads.end(),
                      [](const Thread& t) { return t.state == ThreadState::done; })) {
        break;
      }
      block.deadlock();
    }
  }
}

}  // namespace simt
