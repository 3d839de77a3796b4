// SPDX-License-Identifier: Apache-2.0
#include "dpselect/select.hpp"

#include "dpselect/detail/release_access.hpp"
#include "selection/chunked_passes.hpp"
#include "device/gpu.hpp"
#include "validation/validation.hpp"

namespace dpselect {
namespace {

// Every check that can fail runs before the release draws its stream: the candidates' here, the
// parameters' (and the calibration) once, in begin_release, before it charges.
template <class Utilities, class... StreamArg>
Selection select_all(Context& context, Utilities utilities, const SelectionParams& params,
                     StreamArg... stream) {
  if constexpr (requires { utilities.size(); }) {
    detail::validate_candidate_count("utilities", utilities.size(), 0);
    detail::resolve_backend(params.backend);
  } else {
    detail::validate_device_utilities(utilities.data, utilities.size, 0, params.backend);
  }
  Release release = context.begin_release(params);
  // The scores are computed relative to the first utility (SelectionParams::utility_reference):
  // over device memory the kernel loads it itself.
  if constexpr (requires { utilities.size(); }) {
    if (detail::ReleaseAccess::takes_reference_from_data(release)) {
      detail::ReleaseAccess::fix_reference_from_data(release, static_cast<double>(utilities.front()));
    }
    return release.finish(release.evaluate(utilities, 0));
  } else {
    return release.finish(detail::ReleaseAccess::evaluate_whole_device_array(release, utilities, stream...));
  }
}

// Each chunk is a shard of one release; the reference is the first chunk's first utility, as
// select_all takes it from the whole array's.
template <class T>
Selection select_chunks(Context& context, const ChunkedValues<T>& utilities, const SelectionParams& params) {
  std::vector<T> buffer = detail::chunk_buffer(utilities);
  detail::resolve_backend(params.backend);
  Release release = context.begin_release(params);
  ShardResult merged;
  detail::for_each_chunk(utilities, buffer, [&](std::span<const T> chunk, std::uint64_t first) {
    if (first == 0 && detail::ReleaseAccess::takes_reference_from_data(release)) {
      detail::ReleaseAccess::fix_reference_from_data(release, static_cast<double>(chunk.front()));
    }
    merged = first == 0 ? release.evaluate(chunk, first) : merge(merged, release.evaluate(chunk, first));
  });
  return release.finish(merged);
}

}  // namespace

Selection select(Context& context, const ChunkedValues<float>& utilities, const SelectionParams& params) {
  return select_chunks(context, utilities, params);
}
Selection select(Context& context, const ChunkedValues<double>& utilities, const SelectionParams& params) {
  return select_chunks(context, utilities, params);
}
Selection select(Context& context, std::span<const float> utilities, const SelectionParams& params) {
  return select_all(context, utilities, params);
}
Selection select(Context& context, std::span<const double> utilities, const SelectionParams& params) {
  return select_all(context, utilities, params);
}
Selection select(Context& context, DeviceSpan<const float> utilities, const SelectionParams& params,
                 cuda_stream_t stream) {
  return select_all(context, utilities, params, stream);
}
Selection select(Context& context, DeviceSpan<const double> utilities,
                 const SelectionParams& params, cuda_stream_t stream) {
  return select_all(context, utilities, params, stream);
}

bool gpu_usable() { return detail::cuda_device_usable(); }
bool built_with_cuda() { return detail::cuda_backend_compiled(); }
std::string_view gpu_unusable_reason() { return detail::gpu_unusable_reason(); }

std::string_view to_string(Mechanism mechanism) {
  switch (mechanism) {
    case Mechanism::exponential: return "exponential";
    case Mechanism::permute_and_flip: return "permute-and-flip";
    case Mechanism::laplace_noisy_max: return "laplace-noisy-max";
  }
  return "unknown";
}

std::string_view to_string(Backend backend) {
  switch (backend) {
    case Backend::Auto: return "auto";
    case Backend::Cpu: return "cpu";
    case Backend::Gpu: return "gpu";
  }
  return "unknown";
}

std::string_view to_string(ExecutedOn executed_on) {
  switch (executed_on) {
    case ExecutedOn::none: return "none";
    case ExecutedOn::cpu: return "cpu";
    case ExecutedOn::gpu: return "gpu";
    case ExecutedOn::cpu_and_gpu: return "cpu+gpu";
  }
  return "unknown";
}

std::string_view to_string(Generator generator) {
  switch (generator) {
    case Generator::chacha20: return "chacha20";
    case Generator::philox: return "philox";
  }
  return "unknown";
}

}  // namespace dpselect
