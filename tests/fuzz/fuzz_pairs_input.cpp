// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the reader of `dpselect keys` (host/cli/pairs_input.hpp: read_pairs). The
// first bytes choose the format (CSV, .npy, or by extension), the columns named and what the ids
// are; the rest is the file.
//
// Invariants: read_pairs either returns at least one pair, with one user id and one key per pair
// (text keys that are valid UTF-8 and their ends ascending within the key bytes), or throws
// CliError (or OutOfMemory) with a one-line printable message. Anything else (another exception,
// a crash, a sanitizer report) is a finding.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "cli_error.hpp"
#include "fuzz_support.hpp"
#include "pairs_input.hpp"

namespace {

using namespace dpselect::cli;
using dpselect::fuzz::check;

void check_pairs(const PairsInput& input) {
  check(input.pairs >= 1, "an input without pairs was accepted");
  check(input.user_ids.size() == input.pairs, "not one user id per pair");
  if (input.keys == IdKind::integer) {
    check(input.integer_keys.size() == input.pairs, "not one integer key per pair");
    return;
  }
  check(input.key_ends.size() == input.pairs, "not one text key per pair");
  std::uint64_t previous = 0;
  for (const std::uint64_t end : input.key_ends) {
    check(previous <= end && end <= input.key_bytes.size(), "a text key outside the key bytes");
    previous = end;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  FuzzedDataProvider data(bytes, size);
  PairsOption option;
  option.format = static_cast<PairsFormat>(data.ConsumeIntegralInRange<int>(0, 2));
  option.users = static_cast<IdKind>(data.ConsumeIntegralInRange<int>(0, 2));
  option.keys = static_cast<IdKind>(data.ConsumeIntegralInRange<int>(0, 2));
  if (data.ConsumeBool()) {
    option.user_column = data.ConsumeRandomLengthString(8);
    option.key_column = data.ConsumeRandomLengthString(8);
    option.columns_given = true;
  }
  const char* name = data.ConsumeBool() ? "pairs.npy" : "pairs.csv";
  const std::string file = data.ConsumeRemainingBytesAsString();
  const std::filesystem::path path = dpselect::fuzz::scratch_directory() / name;
  dpselect::fuzz::write_file(path, file.data(), file.size());
  option.path = path.string();
  try {
    check_pairs(read_pairs(option));
  } catch (const CliError& error) {
    check(dpselect::fuzz::printable_one_line(error.what()), "an error message that is not one printable line");
  } catch (const OutOfMemory& error) {
    check(dpselect::fuzz::printable_one_line(error.what()), "an error message that is not one printable line");
  }
  return 0;
}
