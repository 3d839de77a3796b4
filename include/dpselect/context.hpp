// SPDX-License-Identifier: Apache-2.0
/// @file
/// Keys, releases and their reports.
///
/// A Context owns one secret key (random_key.hpp: ChaCha20 by default, Philox by explicit choice)
/// and hands out stream ids. Every release takes a fresh
/// stream id when it begins, so no two releases of a context ever share noise; a Release in
/// turn refuses to evaluate any candidate index twice. Together these make noise reuse
/// impossible through this API (the one deliberate exception, sharing a key across processes,
/// is Context::with_shared_key and its contract).
///
/// A context can also charge a PrivacyAccountant (accounting.hpp) for every release begun from
/// it: Context::charge_to. Since every mechanism draws its stream from a context, that is the one
/// place where every release passes before its first noise.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "dpselect/accounting.hpp"
#include "dpselect/random_key.hpp"
#include "dpselect/shard_result.hpp"
#include "dpselect/types.hpp"

struct CUstream_st;  ///< cudaStream_t without including CUDA headers

namespace dpselect {

using cuda_stream_t = CUstream_st*;

/// Utilities that live in GPU memory. `data` must be a device (or managed) pointer.
template <class T>
struct DeviceSpan {
  T* data = nullptr;
  std::uint64_t size = 0;
};

/// A half-open range [begin, end) of global candidate indices.
struct IndexRange {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::uint64_t size() const { return end - begin; }
};

struct SelectionReport {
  Mechanism mechanism = Mechanism::exponential;
  /// The privacy loss of this release under exact arithmetic (add slack.epsilon for the float
  /// implementation).
  double epsilon_spent = 0.0;
  double sensitivity = 0.0;
  bool monotone = false;
  /// Scale of the noise in units of the utility: 2*Delta/eps, or Delta/eps when monotone.
  double noise_scale = 0.0;
  ExecutedOn executed_on = ExecutedOn::none;
  /// Set only when Backend::Auto ran on the CPU although an NVIDIA GPU is present: why this build
  /// cannot use it and how to fix it (gpu_unusable_reason() in select.hpp; lives as long as the
  /// process). Hardware, not data: public.
  std::string_view cpu_fallback_reason;
  std::uint64_t candidates = 0;
  FloatingPointSlack slack;
  /// The stream id this release drew from its context, and the generator of its noise.
  std::uint64_t stream = 0;
  Generator generator = Generator::chacha20;
};

struct Selection {
  std::uint64_t index = 0;
  SelectionReport report;
};

class Release;
namespace detail {
struct ContextAccess;
}  // namespace detail

class Context {
 public:
  /// A ChaCha20 context keyed with 256 bits from the operating system's CSPRNG (getrandom). Use
  /// this for real data.
  Context();
  /// The same with a choice of generator: Generator::philox is faster but not cryptographically
  /// secure (random_key.hpp); its 64-bit key also comes from the OS.
  static Context from_os_entropy(Generator generator = Generator::chacha20);
  /// A reproducible context for tests and experiments (key: RandomKey::from_seed). Its noise is
  /// predictable by anyone who knows the seed: never use it for a real release.
  static Context with_fixed_seed(std::uint64_t seed, Generator generator = Generator::chacha20);
  /// For one release sharded across processes: every rank builds its context from the same
  /// secret key (distributed over a secure channel) and the same first stream, begins the same
  /// sequence of releases, and evaluates disjoint sub-ranges. The caller is responsible for
  /// never evaluating one candidate twice across ranks.
  /// Throws InvalidArgument for an all-zero key (a default-constructed RandomKey, ChaChaKey or
  /// PhiloxKey: predictable by anyone).
  static Context with_shared_key(RandomKey key, std::uint64_t first_stream);

  /// Moving transfers the key and the stream counter; the moved-from context is spent (its
  /// begin_release throws UsageError), so the two can never hand out the same stream.
  Context(Context&& other) noexcept;
  Context& operator=(Context&& other) noexcept;
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  ~Context();

  /// Validates `params` (throws InvalidArgument before drawing a stream), then draws a fresh
  /// stream id. Thread-safe. Throws UsageError on a moved-from context.
  Release begin_release(const SelectionParams& params);

  bool is_fixed_seed() const;
  /// The generator of every release of this context. Throws UsageError on a moved-from context.
  Generator generator() const;

  /// From now on, every release begun from this context is charged to `accountant` (nullptr:
  /// none) after its parameters are validated and before it draws its stream, so an over-budget
  /// release throws BudgetExceeded before any noise is drawn and nothing is released or recorded.
  /// What each entry point charges:
  ///   begin_release, select, the functor selects, pricing: one release of
  ///     release_kind(params.mechanism) at params.epsilon;
  ///   select_top_k: k exponential-mechanism picks at the per-pick epsilon;
  ///   select_rows: one release per row, all rows together before the first row's stream (charge
  ///     rows to one accountant only when they are about the same data);
  ///   SparseVector and sparse_vector_batch: one pure release at epsilon (delta = 0) or one
  ///     approximate release at (epsilon, delta).
  /// The accountant records the exact-arithmetic guarantees; each report's floating-point slack
  /// comes on top. A release that fails after its charge (a NaN utility found during the pass)
  /// stays charged: whether it failed depends on the data. One accountant may serve several
  /// contexts and threads. With with_shared_key, each rank charges its context's accountant once
  /// per release, so ranks sharing one accountant charge it once per rank; a rank refused with
  /// BudgetExceeded draws no stream and falls out of step with the others (its later shards fail
  /// the merge checks).
  /// Thread-safe; throws UsageError on a moved-from context.
  void charge_to(std::shared_ptr<PrivacyAccountant> accountant);
  std::shared_ptr<PrivacyAccountant> accountant() const;

 private:
  friend struct detail::ContextAccess;
  struct State;
  Context(RandomKey key, std::uint64_t first_stream, bool fixed_seed, bool shared_key);
  /// begin_release after the caller has charged the whole release (`charge` false) or not.
  Release start_release(const SelectionParams& params, bool charge);
  State& state() const;
  std::unique_ptr<State> state_;
};

namespace detail {
struct ReleaseAccess;
struct ReleaseState;
}  // namespace detail

/// One private release in progress: evaluate shards of the candidate range (each index at most
/// once, on any backend), merge their ShardResults with dpselect::merge, then finish(). A range
/// stays claimed even when its evaluation throws (fail closed: begin a new release). Every method
/// of a moved-from release throws UsageError.
class Release {
 public:
  Release(Release&&) noexcept;
  Release& operator=(Release&&) noexcept;
  ~Release();

  const SelectionParams& params() const;
  std::uint64_t stream() const;

  /// Utilities in host memory for candidates [first_index, first_index + size).
  ShardResult evaluate(std::span<const float> utilities, std::uint64_t first_index = 0);
  ShardResult evaluate(std::span<const double> utilities, std::uint64_t first_index = 0);
  /// Utilities in device memory. Work is ordered on `stream`; the call synchronizes it.
  ShardResult evaluate(DeviceSpan<const float> utilities, std::uint64_t first_index,
                       cuda_stream_t stream);
  ShardResult evaluate(DeviceSpan<const double> utilities, std::uint64_t first_index,
                       cuda_stream_t stream);

  /// Turns the merge of all shards into the released index and its report. Throws
  /// InvalidArgument if a utility was NaN, +inf or beyond utility_bound (naming the index and
  /// value), if every candidate was excluded (-inf), or if the floating-point slack would reach
  /// epsilon; UsageError if called twice, or if `merged` comes from another release or does not
  /// merge each of this release's shards exactly once (for a with_shared_key context: covers
  /// fewer candidates than this process evaluated). Nothing is released when it throws, and the
  /// release is spent either way.
  Selection finish(const ShardResult& merged);

 private:
  friend class Context;
  friend struct detail::ReleaseAccess;
  explicit Release(std::unique_ptr<detail::ReleaseState> state);
  std::unique_ptr<detail::ReleaseState> state_;
};

}  // namespace dpselect
