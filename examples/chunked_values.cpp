// SPDX-License-Identifier: Apache-2.0
// A selection over utilities read from a file a chunk at a time, never held whole: the same index
// as the selection over the whole array, from the same context position.
#include <dpselect/chunked_values.hpp>
#include <dpselect/dpselect.hpp>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <span>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

// Reads float32 values [first, first + out.size()) of a raw little-endian file.
void read_floats(std::ifstream& file, std::uint64_t first, std::span<float> out) {
  file.seekg(static_cast<std::streamoff>(first * sizeof(float)));
  file.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(out.size_bytes()));
  if (!file) throw std::runtime_error("utilities file: short read at value " + std::to_string(first));
}

}  // namespace

int main() {
  const std::uint64_t n = 100'000;
  std::vector<float> utility(n);
  for (std::uint64_t i = 0; i < n; ++i) utility[i] = static_cast<float>((i * 7919) % 1000);
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("dpselect_example_chunked_" + std::to_string(::getpid()) + ".f32");
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(utility.data()), static_cast<std::streamsize>(n * sizeof(float)));
  }
  std::ifstream file(path, std::ios::binary);

  dpselect::SelectionParams params;
  params.epsilon = 1.0;
  params.sensitivity = 1.0;
  params.backend = dpselect::Backend::Cpu;
  // A fixed seed only so the two releases below can be compared; real data takes Context().
  dpselect::Context context = dpselect::Context::with_fixed_seed(2026);
  dpselect::Context whole_array_context = dpselect::Context::with_fixed_seed(2026);

  // [doc:chunked_values]
  const dpselect::ChunkedValues<float> scores{n, [&](std::uint64_t first, std::span<float> out) {
    read_floats(file, first, out);            // the utilities of candidates [first, first + out.size())
  }};                                         // chunk_size: 2^22 values by default
  const dpselect::Selection pick = dpselect::select(context, scores, params);
  // [/doc:chunked_values]

  const dpselect::Selection whole = dpselect::select(whole_array_context, std::span<const float>(utility), params);
  file.close();
  std::filesystem::remove(path);
  std::printf("chunked pick %llu, whole-array pick %llu\n", static_cast<unsigned long long>(pick.index),
              static_cast<unsigned long long>(whole.index));
  return pick.index == whole.index ? 0 : 1;
}
