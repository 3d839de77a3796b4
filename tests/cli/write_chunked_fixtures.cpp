// SPDX-License-Identifier: Apache-2.0
// Writes the inputs of the chunked-input tests (tests/cli/chunked_inputs.cmake) into a folder:
// more values than the command reads at once (chunk_values), the same values as text (read whole)
// and as raw float32, raw float64 and .npy '<f4' (read a chunk at a time), so that the two paths
// can be compared. Every value is a multiple of 1/8 below 2^13 in magnitude: exact in float32 and
// in its shortest decimal text.
//
//   dpselect_write_chunked_fixtures FOLDER
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {

constexpr std::uint64_t kRows = 4210;
constexpr std::uint64_t kCols = 1000;  // 4,210,000 values: two chunks of 2^22, two blocks of rows

std::vector<float> values(double offset) {
  std::vector<float> v(kRows * kCols);
  for (std::uint64_t i = 0; i < v.size(); ++i) {
    v[i] = static_cast<float>(static_cast<double>((i * 2654435761u) % 100003u) / 8.0 - 6000.0 + offset);
  }
  return v;
}

void write_set(const std::string& stem, const std::vector<float>& v) {
  std::ofstream(stem + ".f32", std::ios::binary)
      .write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
  const std::vector<double> wide(v.begin(), v.end());
  std::ofstream(stem + ".f64", std::ios::binary)
      .write(reinterpret_cast<const char*>(wide.data()), static_cast<std::streamsize>(wide.size() * sizeof(double)));
  // .npy 1.0: magic, version, header length, then a dict padded with spaces and ended by '\n' so
  // that the data start at a multiple of 64 bytes.
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(v.size()) + ",), }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ').push_back('\n');
  std::ofstream npy(stem + ".npy", std::ios::binary);
  npy.write("\x93NUMPY\x01\x00", 8);
  const char length[2] = {static_cast<char>(header.size() & 0xff), static_cast<char>(header.size() >> 8)};
  npy.write(length, 2);
  npy << header;
  npy.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
  std::FILE* text = std::fopen((stem + ".txt").c_str(), "w");
  for (const float x : v) std::fprintf(text, "%.17g\n", static_cast<double>(x));
  std::fclose(text);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FOLDER\n", argv[0]);
    return 2;
  }
  const std::string folder = argv[1];
  write_set(folder + "/chunked_utilities", values(0.0));
  write_set(folder + "/chunked_bids", values(6000.0));  // >= 0
  std::vector<float> bad = values(0.0);
  bad[4'200'000] = std::nanf("");  // in the second chunk
  std::ofstream(folder + "/chunked_nan.f32", std::ios::binary)
      .write(reinterpret_cast<const char*>(bad.data()), static_cast<std::streamsize>(bad.size() * sizeof(float)));
  return 0;
}
