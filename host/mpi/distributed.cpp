// SPDX-License-Identifier: Apache-2.0
// dpselect::mpi: one release sharded over the ranks of an MPI communicator (include/dpselect/mpi.hpp).
#include "dpselect/mpi.hpp"
#include "mpi/collective.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "dpselect/chacha20.hpp"
#include "dpselect/top_k.hpp"
#include "dpselect/detail/release_access.hpp"
#include "selection/cpu_backend.hpp"
#include "device/gpu.hpp"
#include "random/ranked_lists.hpp"
#include "top_k/top_k_steps.hpp"
#include "validation/validation.hpp"
#include "random/os_entropy.hpp"

namespace dpselect::mpi {

static_assert(std::is_trivially_copyable_v<ShardResult>, "ShardResult travels as raw bytes");
static_assert(std::is_trivially_copyable_v<RandomKey>, "RandomKey travels as raw bytes");

namespace {

// The user-defined reduction: dpselect::merge, element by element. merge is associative and
// commutative and does no arithmetic that rounds, so every reduction order gives the same bits.
void merge_op(void* in, void* inout, int* len, MPI_Datatype*) {
  for (int i = 0; i < *len; ++i) {
    ShardResult a;
    ShardResult b;
    std::memcpy(&a, static_cast<const char*>(in) + i * sizeof(ShardResult), sizeof a);
    std::memcpy(&b, static_cast<const char*>(inout) + i * sizeof(ShardResult), sizeof b);
    const ShardResult merged = merge(a, b);
    std::memcpy(static_cast<char*>(inout) + i * sizeof(ShardResult), &merged, sizeof merged);
  }
}


// The parameters every rank must share, in a form that compares bit for bit.
struct ParamsImage {
  double epsilon;
  double sensitivity;
  double utility_bound;
  double utility_reference;
  std::int32_t mechanism;
  std::int32_t monotone;
  std::int32_t backend;
  std::int32_t reference_given;
};

ParamsImage image_of(const SelectionParams& p) {
  ParamsImage image{};
  image.epsilon = p.epsilon;
  image.sensitivity = p.sensitivity;
  image.utility_bound = p.utility_bound;
  image.mechanism = static_cast<std::int32_t>(p.mechanism);
  image.monotone = p.monotone ? 1 : 0;
  image.backend = static_cast<std::int32_t>(p.backend);
  image.reference_given = p.utility_reference.has_value() ? 1 : 0;
  image.utility_reference = p.utility_reference.value_or(0.0);
  return image;
}

// One rank's shard and what it found, as it travels in the allgather.
struct ShardClaim {
  std::uint64_t begin;
  std::uint64_t end;
  std::int32_t error;
  std::int32_t rank;
};

RandomKey key_from_os_entropy(Generator generator) {
  if (generator == Generator::philox) {
    PhiloxKey key;
    dpselect::detail::fill_from_os_entropy(&key, sizeof key);
    return key;
  }
  std::uint8_t bytes[32];
  dpselect::detail::fill_from_os_entropy(bytes, sizeof bytes);
  return ChaChaKey::from_bytes(bytes);
}


}  // namespace


namespace {

RandomKey broadcast_key(MPI_Comm comm, RandomKey key) {
  MPI_Bcast(&key, static_cast<int>(sizeof key), MPI_BYTE, 0, comm);
  return key;
}

}  // namespace

DistributedContext::DistributedContext(MPI_Comm comm, RandomKey key, bool fixed_seed) {
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(comm, &dup);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(dup, &rank);
  MPI_Comm_size(dup, &size);
  // Only rank 0's key counts; the others' are overwritten by the broadcast.
  const RandomKey shared = broadcast_key(dup, key);
  state_ = std::make_unique<State>(dup, rank, size, Context::with_shared_key(shared, 0), fixed_seed);
  // One ShardResult is one element of a contiguous type, so no MPI implementation can split it
  // between the calls of the reduction operator.
  MPI_Type_contiguous(static_cast<int>(sizeof(ShardResult)), MPI_BYTE, &state_->shard_type);
  MPI_Type_commit(&state_->shard_type);
  MPI_Op_create(&merge_op, /*commute=*/1, &state_->merge);
}

DistributedContext::DistributedContext(MPI_Comm comm, Generator generator)
    : DistributedContext(comm, [&] {
        int rank = 0;
        MPI_Comm_rank(comm, &rank);
        // Only rank 0 draws; the others send nothing but must still pass a non-zero placeholder.
        return rank == 0 ? key_from_os_entropy(generator) : RandomKey::from_seed(1, generator);
      }(), false) {}

DistributedContext DistributedContext::with_fixed_seed(MPI_Comm comm, std::uint64_t seed, Generator generator) {
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, comm);
  return DistributedContext(comm, RandomKey::from_seed(seed, generator), true);
}

DistributedContext::DistributedContext(DistributedContext&&) noexcept = default;
DistributedContext& DistributedContext::operator=(DistributedContext&&) noexcept = default;

DistributedContext::~DistributedContext() = default;

DistributedContext::State& DistributedContext::state() const {
  if (state_ == nullptr) {
    throw UsageError("dpselect: this distributed context was moved from; use the context it was moved to");
  }
  return *state_;
}

int DistributedContext::rank() const { return state().rank; }
int DistributedContext::size() const { return state().size; }
MPI_Comm DistributedContext::communicator() const { return state().comm; }
Generator DistributedContext::generator() const { return state().local.generator(); }
bool DistributedContext::is_fixed_seed() const { return state().fixed_seed; }

void DistributedContext::charge_to(std::shared_ptr<PrivacyAccountant> accountant) {
  State& s = state();
  if (s.rank != 0) return;
  const std::lock_guard lock(s.accountant_mutex);
  s.accountant = std::move(accountant);
}

std::shared_ptr<PrivacyAccountant> DistributedContext::accountant() const {
  const State& s = state();
  const std::lock_guard lock(s.accountant_mutex);
  return s.accountant;
}

namespace detail {

[[noreturn]] void throw_error(std::int32_t kind, const std::string& message) {
  switch (kind) {
    case invalid_argument: throw InvalidArgument(message);
    case backend_unavailable: throw BackendUnavailable(message);
    case usage_error: throw UsageError(message);
    case budget_exceeded: throw BudgetExceeded(message);
    default: throw std::runtime_error(message);
  }
}

std::string range_text(std::uint64_t begin, std::uint64_t end) {
  // Appended piece by piece: GCC 12 warns (-Wrestrict, falsely) on "[" + std::to_string(...).
  std::string text = "[";
  text += std::to_string(begin);
  text += ", ";
  text += std::to_string(end);
  text += ")";
  return text;
}


std::string broadcast_message(MPI_Comm comm, int root, int rank, const std::string& message) {
  std::uint64_t length = rank == root ? message.size() : 0;
  MPI_Bcast(&length, 1, MPI_UINT64_T, root, comm);
  std::string out = rank == root ? message : std::string(length, '\0');
  if (length != 0) MPI_Bcast(out.data(), static_cast<int>(length), MPI_CHAR, root, comm);
  return out;
}

AgreedShards agree_and_charge(DistributedContext& context, const SelectionParams* params, IndexRange shard,
                              Finding local, const ChargeRule& rule, const ShardRules& rules) {
  DistributedContext::State& s = Access::state(context);
  // 1. Rank 0's params, to check that every rank passed the same.
  ParamsImage root_params = params != nullptr ? image_of(*params) : ParamsImage{};
  if (params != nullptr) MPI_Bcast(&root_params, static_cast<int>(sizeof root_params), MPI_BYTE, 0, s.comm);

  // 2. This rank's own checks.
  std::string message = std::move(local.message);
  std::int32_t error = local.kind;
  if (error == none) {
    error = catch_error(
        [&] {
          if (params != nullptr) {
            dpselect::detail::validate_release_params(*params);
            const ParamsImage mine = image_of(*params);
            if (std::memcmp(&mine, &root_params, sizeof mine) != 0) {
              throw InvalidArgument("dpselect: params must be the same on every rank (rank " +
                                    std::to_string(s.rank) + "'s differ from rank 0's)");
            }
            dpselect::detail::resolve_backend(params->backend);
          }
          if (shard.begin > shard.end) {
            throw InvalidArgument("dpselect: rank " + std::to_string(s.rank) +
                                  "'s shard must have begin <= end (got " + range_text(shard.begin, shard.end) + ")");
          }
          if (shard.end > dpselect::detail::kIndexLimit) {
            throw InvalidArgument("dpselect: rank " + std::to_string(s.rank) + "'s shard must end at or below 2^63 (got " +
                                  range_text(shard.begin, shard.end) + ")");
          }
        },
        message);
  }

  // 3. Every rank learns every shard and every finding; the lowest failing rank's message wins.
  const ShardClaim claim{shard.begin, shard.end, error, s.rank};
  std::vector<ShardClaim> claims(static_cast<std::size_t>(s.size));
  MPI_Allgather(&claim, static_cast<int>(sizeof claim), MPI_BYTE, claims.data(), static_cast<int>(sizeof claim), MPI_BYTE, s.comm);
  for (const ShardClaim& c : claims) {
    if (c.error != none) throw_error(c.error, broadcast_message(s.comm, c.rank, s.rank, message));
  }

  // 4. The shards must tile one contiguous range exactly once: the same check on every rank.
  std::vector<ShardClaim> nonempty;
  for (const ShardClaim& c : claims) {
    if (c.end > c.begin) nonempty.push_back(c);
  }
  const char* unit = rules.unit;
  if (nonempty.empty()) {
    throw InvalidArgument(std::string("dpselect: the shards must hold at least one of the ") + unit +
                          " (got every rank's shard empty)");
  }
  std::sort(nonempty.begin(), nonempty.end(), [](const ShardClaim& a, const ShardClaim& b) {
    return a.begin < b.begin || (a.begin == b.begin && a.rank < b.rank);
  });
  AgreedShards agreed;
  agreed.begin = nonempty.front().begin;
  for (std::size_t i = 0; i < nonempty.size(); ++i) {
    const ShardClaim& c = nonempty[i];
    if (i > 0) {
      const ShardClaim& previous = nonempty[i - 1];
      if (c.begin < previous.end) {
        throw InvalidArgument("dpselect: the shards of rank " + std::to_string(previous.rank) + " " +
                              range_text(previous.begin, previous.end) + " and rank " + std::to_string(c.rank) + " " +
                              range_text(c.begin, c.end) +
                              " overlap; evaluating one twice would reuse its noise");
      }
      if (c.begin > previous.end) {
        throw InvalidArgument(std::string("dpselect: the shards must tile one contiguous range (got ") + unit + " " +
                              range_text(previous.end, c.begin) + " on no rank)");
      }
    }
    agreed.total += c.end - c.begin;
    agreed.coverage += dpselect::detail::coverage_fingerprint(IndexRange{c.begin, c.end});
  }
  if (rules.whole != nullptr && (agreed.begin != rules.whole->begin || agreed.total != rules.whole->size())) {
    throw InvalidArgument(std::string("dpselect: the shards must tile ") + unit + " " +
                          range_text(rules.whole->begin, rules.whole->end) + " (got " +
                          range_text(agreed.begin, agreed.begin + agreed.total) + ")");
  }
  if (rules.from_zero && agreed.begin != 0) {
    throw InvalidArgument(std::string("dpselect: the shards must tile the ") + unit + " from position 0 (got " +
                          range_text(agreed.begin, agreed.begin + agreed.total) + ")");
  }
  if (agreed.total > rules.max_total) {
    throw InvalidArgument(std::string("dpselect: the shards must hold at most ") + std::to_string(rules.max_total) +
                          " " + unit + " together (got " + std::to_string(agreed.total) + ")");
  }
  if (rules.top_k != nullptr && (*rules.top_k == 0 || *rules.top_k > agreed.total)) {
    throw InvalidArgument("dpselect: k must be between 1 and the number of candidates, " + std::to_string(agreed.total) +
                          " (got " + std::to_string(*rules.top_k) + ")");
  }

  // 5. Rank 0 charges the job's ledger; its decision reaches every rank before any stream.
  std::int32_t charged = none;
  std::string refusal;
  if (s.rank == 0) {
    if (const std::shared_ptr<PrivacyAccountant> ledger = context.accountant()) {
      PrivacyCharge charge = rule.charge;
      if (rule.one_per_unit) charge.count = agreed.total;
      charged = catch_error([&] { ledger->charge(std::span(&charge, 1)); }, refusal);
    }
  }
  MPI_Bcast(&charged, 1, MPI_INT32_T, 0, s.comm);
  if (charged != none) throw_error(charged, broadcast_message(s.comm, 0, s.rank, refusal));
  return agreed;
}

std::string differs_from_root(const DistributedContext& context, const void* bytes, std::size_t size,
                              const std::string& what) {
  const DistributedContext::State& s = Access::state(context);
  std::vector<char> root(static_cast<const char*>(bytes), static_cast<const char*>(bytes) + size);
  MPI_Bcast(root.data(), static_cast<int>(size), MPI_BYTE, 0, s.comm);
  if (std::memcmp(root.data(), bytes, size) == 0) return {};
  return "dpselect: " + what + " must be the same on every rank (rank " + std::to_string(s.rank) +
         "'s differ from rank 0's)";
}

std::uint64_t bytes_digest(const void* data, std::size_t bytes) {
  std::uint64_t digest = 0xcbf29ce484222325ull;
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) digest = (digest ^ p[i]) * 0x100000001b3ull;
  return digest;
}

IndexRange even_share(std::uint64_t count, int rank, int size) {
  const std::uint64_t r = static_cast<std::uint64_t>(rank);
  const std::uint64_t p = static_cast<std::uint64_t>(size);
  const std::uint64_t begin = count / p * r + std::min(r, count % p);
  return IndexRange{begin, begin + count / p + (r < count % p ? 1 : 0)};
}

Release begin_agreed_release(DistributedContext& context, const SelectionParams& params, const AgreedShards& agreed) {
  DistributedContext::State& s = Access::state(context);
  s.expected_candidates = agreed.total;
  s.expected_coverage = agreed.coverage;
  return dpselect::detail::ContextAccess::begin_charged_release(s.local, params);
}

namespace {

// agree_and_charge, then one release on every rank: the ranks have begun the same releases in
// the same order, so each draws the same stream.
Release begin_release_charging(DistributedContext& context, const SelectionParams& params, IndexRange shard,
                               std::string local_error, const PrivacyCharge& charge, const std::uint64_t* top_k) {
  ShardRules rules;
  rules.top_k = top_k;
  const AgreedShards agreed =
      agree_and_charge(context, &params, shard, invalid_unless_empty(std::move(local_error)), ChargeRule{charge}, rules);
  return begin_agreed_release(context, params, agreed);
}

}  // namespace

Release begin_distributed_release(DistributedContext& context, const SelectionParams& params, IndexRange shard,
                                  Finding local) {
  const AgreedShards agreed =
      agree_and_charge(context, &params, shard, std::move(local), ChargeRule{one_release_charge(params)});
  return begin_agreed_release(context, params, agreed);
}

Release begin_distributed_release(DistributedContext& context, const SelectionParams& params, IndexRange shard,
                                  std::string local_error) {
  return begin_distributed_release(context, params, shard, invalid_unless_empty(std::move(local_error)));
}

// The merge of every rank's tally, checked to cover every shard exactly once.
ShardResult merged_tally(DistributedContext::State& s, const ShardResult& mine) {
  ShardResult merged;
  MPI_Allreduce(&mine, &merged, 1, s.shard_type, s.merge, s.comm);
  // The merge is the same on every rank, so every rank decides alike from here on.
  if (merged.candidates != s.expected_candidates || merged.coverage != s.expected_coverage) {
    throw UsageError("dpselect: the merged shards cover " + std::to_string(merged.candidates) +
                     " candidates but the ranks' shards hold " + std::to_string(s.expected_candidates) +
                     "; every shard must be merged exactly once");
  }
  return merged;
}

void agree_on_pass(DistributedContext& context, std::exception_ptr failure) {
  DistributedContext::State& s = Access::state(context);
  std::string message;
  const std::int32_t kind = failure ? catch_error([&] { std::rethrow_exception(failure); }, message) : none;
  std::int32_t first_failing = kind != none ? s.rank : s.size;
  MPI_Allreduce(MPI_IN_PLACE, &first_failing, 1, MPI_INT32_T, MPI_MIN, s.comm);
  if (first_failing == s.size) return;
  std::int32_t failing_kind = kind;
  MPI_Bcast(&failing_kind, 1, MPI_INT32_T, first_failing, s.comm);
  throw_error(failing_kind, broadcast_message(s.comm, first_failing, s.rank, message));
}

Selection finish_distributed_release(DistributedContext& context, Release& release, const ShardResult& mine) {
  return release.finish(merged_tally(Access::state(context), mine));
}

void agree_utility_reference(DistributedContext& context, Release& release, bool has_shard, std::uint64_t first_index,
                             double first_utility) {
  if (!dpselect::detail::ReleaseAccess::takes_reference_from_data(release)) return;  // public: nothing to agree
  const DistributedContext::State& s = Access::state(context);
  struct FirstUtility {
    std::uint64_t first_index;
    double value;
    std::int32_t has_shard;
    std::int32_t padding;
  };
  const FirstUtility mine{first_index, first_utility, has_shard ? 1 : 0, 0};
  std::vector<FirstUtility> all(static_cast<std::size_t>(s.size));
  MPI_Allgather(&mine, static_cast<int>(sizeof mine), MPI_BYTE, all.data(), static_cast<int>(sizeof mine), MPI_BYTE,
                s.comm);
  const FirstUtility* lowest = nullptr;
  for (const FirstUtility& rank : all) {
    if (rank.has_shard != 0 && (lowest == nullptr || rank.first_index < lowest->first_index)) lowest = &rank;
  }
  dpselect::detail::ReleaseAccess::fix_reference_from_data(release, lowest != nullptr ? lowest->value : 0.0);
}

std::string shard_end_error(const DistributedContext& context, std::uint64_t first, std::uint64_t count,
                            const char* first_name, const char* unit) {
  if (first <= dpselect::detail::kIndexLimit && count <= dpselect::detail::kIndexLimit - first) return {};
  return "dpselect: rank " + std::to_string(context.rank()) + "'s shard must end at or below 2^63 (got " + first_name +
         " " + std::to_string(first) + " and " + std::to_string(count) + " " + unit + ")";
}

}  // namespace detail

namespace {

using detail::shard_end_error;

template <class T>
Selection select_host(DistributedContext& context, std::span<const T> shard, std::uint64_t first_index,
                      const SelectionParams& params) {
  std::string local_error = shard_end_error(context, first_index, shard.size(), "first_index", "utilities");
  const IndexRange range = local_error.empty() ? IndexRange{first_index, first_index + shard.size()} : IndexRange{};
  Release release = detail::begin_distributed_release(context, params, range, std::move(local_error));
  detail::agree_utility_reference(context, release, !shard.empty(), first_index,
                                  shard.empty() ? 0.0 : static_cast<double>(shard.front()));
  const ShardResult mine =
      detail::agreed_pass(context, [&] { return shard.empty() ? ShardResult{} : release.evaluate(shard, first_index); });
  return detail::finish_distributed_release(context, release, mine);
}

// A shard in device memory: the checks of one process's device entry points (a device pointer,
// a usable GPU) become this rank's finding, so a bad pointer on one rank fails every rank.
template <class T>
Selection select_device(DistributedContext& context, DeviceSpan<const T> shard, std::uint64_t first_index,
                        const SelectionParams& params, cuda_stream_t stream) {
  detail::Finding finding =
      detail::invalid_unless_empty(shard_end_error(context, first_index, shard.size, "first_index", "utilities"));
  if (finding.kind == detail::none && shard.size != 0) {
    finding = detail::finding_of([&] {
      dpselect::detail::validate_device_utilities(shard.data, shard.size, first_index, params.backend);
    });
  }
  const IndexRange range = finding.kind == detail::none ? IndexRange{first_index, first_index + shard.size} : IndexRange{};
  Release release = detail::begin_distributed_release(context, params, range, std::move(finding));
  // A failed read leaves this rank out of the choice; its pass then fails on every rank.
  double first_utility = 0.0;
  const bool has_first =
      shard.size != 0 &&
      detail::finding_of([&] { first_utility = dpselect::detail::gpu_read_value(shard.data, 0, stream); }).kind ==
          detail::none;
  detail::agree_utility_reference(context, release, has_first, first_index, first_utility);
  const ShardResult mine = detail::agreed_pass(
      context, [&] { return shard.size == 0 ? ShardResult{} : release.evaluate(shard, first_index, stream); });
  return detail::finish_distributed_release(context, release, mine);
}

}  // namespace

Selection select(DistributedContext& context, DeviceSpan<const float> shard, std::uint64_t first_index,
                 const SelectionParams& params, cuda_stream_t stream) {
  return select_device(context, shard, first_index, params, stream);
}

Selection select(DistributedContext& context, DeviceSpan<const double> shard, std::uint64_t first_index,
                 const SelectionParams& params, cuda_stream_t stream) {
  return select_device(context, shard, first_index, params, stream);
}

int local_device(MPI_Comm comm) {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int local_rank = 0;
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_free(&node);
  // cudaGetDeviceCount only: anything more would create a context on device 0 in every rank.
  const int devices = dpselect::detail::gpu_device_count();
  return devices > 0 ? local_rank % devices : -1;
}

Selection select(DistributedContext& context, std::span<const float> shard, std::uint64_t first_index,
                 const SelectionParams& params) {
  return select_host(context, shard, first_index, params);
}

Selection select(DistributedContext& context, std::span<const double> shard, std::uint64_t first_index,
                 const SelectionParams& params) {
  return select_host(context, shard, first_index, params);
}

namespace {

using dpselect::detail::RankedCandidate;
static_assert(std::is_trivially_copyable_v<RankedCandidate>, "RankedCandidate travels as raw bytes");

// The library's order (ranked_lists.hpp): higher score first; equal scores: smaller index first.
bool ranks_before(const RankedCandidate& a, const RankedCandidate& b) {
  return dpselect::detail::ranks_before(a.score, a.index, b.score, b.index);
}

template <class T>
TopKSelection top_k_host(DistributedContext& context, std::span<const T> shard, std::uint64_t first_index,
                         const TopKParams& params) {
  // selection.epsilon is the release's total; each pick spends epsilon / k (top_k.hpp). A k of 0
  // is refused with the shards' agreement, in begin_release_charging.
  const SelectionParams per_pick = params.k == 0 ? params.selection : dpselect::detail::per_pick_params(params);
  // This rank's checks beyond begin_distributed_release's, in one process's order and words.
  std::string local_error = shard_end_error(context, first_index, shard.size(), "first_index", "utilities");
  if (local_error.empty() && per_pick.mechanism != Mechanism::exponential) {
    local_error = "dpselect: top-k mechanism must be exponential (one-shot Gumbel top-k equals peeling EM only for "
                  "Gumbel noise; got " + std::string(to_string(per_pick.mechanism)) + ")";
  } else if (local_error.empty() && params.k != 0 && std::isfinite(params.selection.epsilon) &&
             params.selection.epsilon > 0.0 && !std::isnormal(per_pick.epsilon)) {
    local_error = "dpselect: epsilon / k must be a normal double (epsilon " +
                  dpselect::detail::format_value(params.selection.epsilon) + ", k " + std::to_string(params.k) + ")";
  } else if (local_error.empty() && per_pick.backend == Backend::Gpu) {
    local_error = "dpselect: a distributed top-k runs its shards on the CPU so far (got backend Gpu)";
  }
  // Every rank must ask for the same k: compare with rank 0's.
  DistributedContext::State& s = detail::Access::state(context);
  std::uint64_t root_k = params.k;
  MPI_Bcast(&root_k, 1, MPI_UINT64_T, 0, s.comm);
  if (local_error.empty() && root_k != params.k) {
    local_error = "dpselect: k must be the same on every rank (rank " + std::to_string(context.rank()) + " has " +
                  std::to_string(params.k) + ", rank 0 " + std::to_string(root_k) + ")";
  }
  const IndexRange range = local_error.empty() ? IndexRange{first_index, first_index + shard.size()} : IndexRange{};
  const PrivacyCharge picks = dpselect::detail::top_k_charge(params);  // once, for every rank
  Release release = detail::begin_release_charging(context, per_pick, range, std::move(local_error), picks, &params.k);

  const dpselect::detail::TopKShard mine = detail::agreed_pass(context, [&] {
    dpselect::detail::TopKShard top;
    if (shard.empty()) return top;
    dpselect::detail::ReleaseAccess::claim(release, range);
    top = dpselect::detail::cpu_top_k_shard(dpselect::detail::ReleaseAccess::noise_spec(release), shard, first_index,
                                            params.k);
    top.tally = dpselect::detail::ReleaseAccess::stamped(release, range, top.tally);
    return top;
  });
  // The k best of the whole range are among the ranks' k best: gather them all on every rank.
  const int count = static_cast<int>(mine.top.size() * sizeof(RankedCandidate));
  std::vector<int> counts(static_cast<std::size_t>(s.size));
  MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, s.comm);
  std::vector<int> offsets(counts.size(), 0);
  for (std::size_t r = 1; r < counts.size(); ++r) offsets[r] = offsets[r - 1] + counts[r - 1];
  std::vector<RankedCandidate> all((offsets.back() + counts.back()) / sizeof(RankedCandidate));
  MPI_Allgatherv(mine.top.data(), count, MPI_BYTE, all.data(), counts.data(), offsets.data(), MPI_BYTE, s.comm);
  std::sort(all.begin(), all.end(), ranks_before);
  if (all.size() > params.k) all.resize(params.k);

  // As in one process (the tally carries the best candidate so finish() applies the usual checks).
  return dpselect::detail::finish_top_k(release, params, detail::merged_tally(s, mine.tally), all);
}

}  // namespace

TopKSelection select_top_k(DistributedContext& context, std::span<const float> shard, std::uint64_t first_index,
                           const TopKParams& params) {
  return top_k_host(context, shard, first_index, params);
}

TopKSelection select_top_k(DistributedContext& context, std::span<const double> shard, std::uint64_t first_index,
                           const TopKParams& params) {
  return top_k_host(context, shard, first_index, params);
}

}  // namespace dpselect::mpi
