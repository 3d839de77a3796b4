// SPDX-License-Identifier: Apache-2.0
// dpselect price: a private posted price for bids read from a file.
#include <memory>
#include <span>

#include "cli_error.hpp"
#include "commands.hpp"
#include "common_options.hpp"
#include "dpselect/errors.hpp"
#include "input_files.hpp"
#include "job.hpp"
#include "numbers.hpp"
#include "output.hpp"
#include "price_release.hpp"
#include "report_sections.hpp"

namespace dpselect::cli {
namespace {

struct PriceOptions {
  std::string bids_path;
  std::optional<PriceGrid> grid;
  std::optional<PriceRange> range;
  std::string prices_path;
  InputFormat format = InputFormat::by_extension;
  bool flatten = false;
  PricingParams params;
  bool force = false;  // --force
  ReleaseOptions release;
};

// `count` numbers separated by colons, or CliError naming the option and its form.
std::vector<double> parse_colon_fields(const std::string& option, const std::string& form, std::size_t count,
                                       const std::string& text) {
  std::vector<double> fields;
  for (std::string_view rest = text;;) {
    const std::size_t colon = rest.find(':');
    const std::optional<double> field = parse_double(rest.substr(0, colon));
    if (!field) break;
    fields.push_back(*field);
    if (colon == std::string_view::npos) {
      if (fields.size() == count) return fields;
      break;
    }
    rest.remove_prefix(colon + 1);
  }
  throw CliError(option + " must be " + form + ", " + std::to_string(count) + " numbers (got '" + text + "')");
}

// Checks `candidates` by the library's rules (validate()), naming the option on failure.
template <class Candidates>
Candidates validated(const std::string& option, const std::string& text, Candidates candidates) {
  try {
    candidates.validate();
  } catch (const InvalidArgument& error) {
    throw CliError(option + " " + text + ": " + std::string(message_of(error)));
  }
  return candidates;
}

PriceGrid parse_grid(const std::string& text) {
  const std::vector<double> fields = parse_colon_fields("--grid", "MIN:MAX:STEP", 3, text);
  return validated("--grid", text, PriceGrid{fields[0], fields[1], fields[2]});
}

PriceRange parse_price_range(const std::string& text) {
  const std::vector<double> fields = parse_colon_fields("--range", "MIN:MAX", 2, text);
  return validated("--range", text, PriceRange{fields[0], fields[1]});
}

Record run_price(const PriceOptions& options) {
  Record report("dpselect price: private posted price for the bids of an auction");
  report.add("command", std::string("price"));
  require_one_standard_input({{"--bids", options.bids_path}, {"--prices", options.prices_path}});
  PriceCandidates candidates;
  if (options.grid) {
    candidates = *options.grid;
  } else if (options.range) {
    candidates = *options.range;
  } else {
    // Prices and bids are read whole on every rank of a job (job.hpp); the releases split the prices.
    InputValues prices = on_every_rank([&] {
      return read_values({"--prices", options.prices_path, options.format, one_list(options.flatten)},
                         price_values);
    });
    add_input(report, "prices", prices, true);
    candidates = prices.take_doubles();
  }
  // A raw or .npy file of bids is read a chunk at a time into the sorted copy, never held twice.
  InputValues bid_values_read = on_every_rank([&] {
    return read_values({.name = "--bids",
                        .path = options.bids_path,
                        .format = options.format,
                        .two_dimensional = one_list(options.flatten),
                        .chunked = true},
                       bid_values);
  });
  add_input(report, "bids", bid_values_read, false);
  const std::shared_ptr<const ChunkedFile>& chunked = bid_values_read.chunked;
  const Bids bids = prepared_from("--bids", options.bids_path, [&] {
    return !chunked                 ? Bids(std::span<const double>(bid_values_read.take_doubles()))
           : chunked->holds_floats() ? Bids(chunked->chunked_values<float>())
                                     : Bids(chunked->chunked_values<double>());
  });

  add_price_releases(report, bids, candidates, options.params, options.release, options.force,
                     "NOT PRIVATE (diagnostics computed from the bids: do not publish)");
  return report;
}

constexpr const char* price_examples = R"(Examples:
  dpselect price --bids bids.txt --epsilon 1 --grid 0.01:100:0.01
  dpselect price --bids bids.npy --epsilon 0.5 --prices menu.txt --neighbours change-bid
  dpselect price --bids bids.f64 --epsilon 1 --grid 0.5:500:0.5 --diagnostics --json
  dpselect price --bids bids.txt --epsilon 1 --range 0:100 --max-bidders 1000000

Releases only the chosen price: text output starts with it ("price 3.01", one line per
release), --quiet prints only the prices, one per line. The sensitivity is the largest
candidate price (one bidder moves the revenue at price p by at most p). --diagnostics also
prints the number of bidders, the best price, the revenues and the run times, computed from the
bids and NOT PRIVATE.)";

}  // namespace

void register_price_command(CLI::App& app) {
  auto options = std::make_shared<PriceOptions>();
  CLI::App* command = app.add_subcommand(
      "price", "private posted price: a price that earns close to the best revenue from the bids");
  add_file_option(*command, "--bids", options->bids_path, "file of bids, finite and >= 0");
  add_epsilon_option(*command, options->params.epsilon)->required();
  CLI::App* candidates = command->add_option_group("candidate prices", "the prices to choose from");
  candidates
      ->add_option_function<std::string>(
          "--grid", [options](const std::string& text) { options->grid = parse_grid(text); },
          "the prices MIN, MIN+STEP, ... up to MAX, computed on the fly")
      ->type_name("MIN:MAX:STEP");
  candidates
      ->add_option("--prices", options->prices_path, "file of candidate prices, finite and >= 0")
      ->type_name("FILE");
  candidates
      ->add_option_function<std::string>(
          "--range", [options](const std::string& text) { options->range = parse_price_range(text); },
          "every price in [MIN, MAX] (exponential mechanism over 2^40 + 1 evenly spaced prices, "
          "sampled in O(bids) work)")
      ->type_name("MIN:MAX");
  candidates->require_option(1);
  // The command samples a large grid by bid intervals when that is much cheaper (same
  // distribution); the library's default stays per-price for its existing callers.
  options->params.grid_sampler = GridSampler::automatic;
  add_pricing_options(*command, options->params, options->force);
  add_format_option(*command, options->format);
  add_flatten_option(*command, options->flatten);
  complete_release_command(*command, options->release, price_examples,
                           [options] { return run_price(*options); });
}

}  // namespace dpselect::cli
