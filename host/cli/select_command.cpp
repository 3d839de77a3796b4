// dpselect select: one private arg-max over utilities read from a file.
#include <memory>
#include <span>

#include "commands.hpp"
#include "common_options.hpp"
#include "dpselect/select.hpp"
#include "input_files.hpp"
#include "output.hpp"
#include "releases.hpp"
#include "report_sections.hpp"

namespace dpselect::cli {
namespace {

struct SelectOptions {
  std::string utilities_path;
  InputFormat format = InputFormat::by_extension;
  SelectionParams params;
  ReleaseOptions release;
};

Record run_select(const SelectOptions& options) {
  const InputValues utilities = read_values(options.utilities_path, options.format, utility_values);
  SelectionParams params = options.params;
  params.backend = options.release.backend;
  std::vector<ReleaseOutcome> outcomes =
      run_releases(options.release, utilities.size(), [&](Context& context) {
        return std::visit(
            [&](const auto& values) {
              return outcome_of(select(context, std::span(values), params));
            },
            utilities.values);
      });

  Record report("dpselect select: private selection of one candidate index");
  report.add("command", std::string("select"));
  add_input(report, "utilities", utilities, true);
  report.add("utility_bound", params.utility_bound, params.utility_bound > 0 ? "" : "none");
  add_release_summary(report, options.release, outcomes);
  return report;
}

constexpr const char* examples = R"(Examples:
  dpselect select --utilities scores.txt --epsilon 1 --sensitivity 1
  dpselect select --utilities counts.npy --epsilon 0.5 --sensitivity 1 --monotone \
      --mechanism permute-and-flip --utility-bound 1e6 --json
  dpselect select --utilities scores.f32 --epsilon 1 --sensitivity 2 --repeat 10

Releases only the index of the chosen candidate (0-based line or element of the file). Each
release is epsilon-DP when no utility moves by more than --sensitivity between neighbouring
datasets; --repeat N spends N * epsilon.)";

}  // namespace

void register_select_command(CLI::App& app) {
  auto options = std::make_shared<SelectOptions>();
  CLI::App* command =
      app.add_subcommand("select", "private arg-max: pick the index of a high-utility candidate");
  command
      ->add_option("--utilities", options->utilities_path,
                   "file of utilities u(0..n-1), one per candidate (-inf excludes one)")
      ->required()
      ->type_name("FILE");
  add_epsilon_option(*command, options->params.epsilon)->required();
  command
      ->add_option("--sensitivity", options->params.sensitivity,
                   "largest change of any utility between neighbouring datasets")
      ->required()
      ->check(finite_positive());
  add_mechanism_option(*command, options->params.mechanism);
  command->add_flag("--monotone", options->params.monotone,
                    "all utilities move in the same direction between neighbours (e.g. counts): "
                    "half the noise");
  command
      ->add_option("--utility-bound", options->params.utility_bound,
                   "public bound on |utility| (0: none); makes the floating-point slack "
                   "independent of the data")
      ->check(finite_nonnegative())
      ->capture_default_str();
  add_format_option(*command, options->format);
  complete_release_command(*command, options->release, examples,
                           [options] { return run_select(*options); });
}

}  // namespace dpselect::cli
