//===- pipeline-report.cpp - schedules side by side in one HTML page ------===//
//
// Schedules every spec it is given (the `pipeline-schedule` phase, options as
// `pipeline-compile --lower-options` takes them) and writes one
// self-contained HTML page: a comparison table sorted by latency, then each
// schedule's figures (--sched-stats) and its diagram (--sched-to-svg),
// inline. No script, no network: the page opens anywhere.
//
//===----------------------------------------------------------------------===//

#include "pipesched/InitAllDialects.h"
#include "pipesched/Target/Diagram.h"
#include "pipesched/Tools/DiagnosticDefaults.h"
#include "pipesched/Transforms/Pipelines.h"
#include "pipesched/Transforms/StepStats.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace pipesched;

namespace {
llvm::cl::OptionCategory category("pipeline-report options");

llvm::cl::list<std::string> inputFiles(llvm::cl::Positional, llvm::cl::OneOrMore,
                                       llvm::cl::desc("<spec.mlir>..."),
                                       llvm::cl::cat(category));
llvm::cl::opt<std::string> outputFile("o",
                                      llvm::cl::desc("HTML file (default: stdout)"),
                                      llvm::cl::value_desc("file"),
                                      llvm::cl::init("-"), llvm::cl::cat(category));
llvm::cl::opt<std::string> lowerOptions(
    "lower-options",
    llvm::cl::desc("Options of the scheduling phase, as pipeline-opt's "
                   "--pipeline-schedule takes them: \"transfer-time=1 "
                   "costs=costs.json\""),
    llvm::cl::value_desc("options"), llvm::cl::init(""), llvm::cl::cat(category));
llvm::cl::opt<std::string> title("title", llvm::cl::desc("The page's title"),
                                 llvm::cl::init("pipesched schedule report"),
                                 llvm::cl::cat(category));

/// One simulated step: where it came from, its figures and its picture.
struct Entry {
  std::string name;
  llvm::json::Object stats;
  std::string svg;
  int64_t latency = 0;
  std::optional<double> latencyMs;
};

std::string escaped(llvm::StringRef s) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::printHTMLEscaped(s, os);
  return out;
}

/// A figure of the stats: an integer as is, a ratio with 4 decimals, or as
/// `format` says.
std::string number(const llvm::json::Object &o, llvm::StringRef key,
                   const char *format = nullptr) {
  const llvm::json::Value *v = o.get(key);
  if (!v)
    return "";
  if (std::optional<int64_t> i = v->getAsInteger(); i && !format)
    return std::to_string(*i);
  if (!format)
    format = "%.4f";
  if (std::optional<double> d = v->getAsNumber())
    return llvm::formatv("{0}", llvm::format(format, *d)).str();
  return "";
}

/// Schedules one spec file; appends an entry per step. Diagnostics go to
/// stderr with the file's locations.
LogicalResult scheduleFile(MLIRContext &context, const std::string &path,
                           const LowerOptions &options,
                           std::vector<Entry> &entries) {
  std::string error;
  auto input = openInputFile(path, &error);
  if (!input) {
    llvm::errs() << "pipeline-report: " << error << "\n";
    return failure();
  }
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sources, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sources, &context);
  if (!module)
    return failure();
  PassManager pm(&context, ModuleOp::getOperationName());
  buildSchedulePipeline(pm, options);
  if (failed(pm.run(*module)))
    return failure();
  SmallVector<sched::StepOp> steps;
  SmallVector<sched::ProgramOp> programs;
  sched::collectStepsAndPrograms(*module, steps, programs);
  std::string stem = llvm::sys::path::stem(path).str();
  for (auto [i, step] : llvm::enumerate(steps)) {
    FailureOr<llvm::json::Object> stats = collectStepStats(step);
    FailureOr<diagram::Diagram> picture = diagram::buildDiagram(step);
    if (failed(stats) || failed(picture))
      return failure();
    Entry entry;
    entry.name = steps.size() > 1 ? stem + " #" + std::to_string(i) : stem;
    entry.latency = picture->makespan;
    // The prediction of a calibrated step: its rank programs replayed.
    if (std::optional<double> ms = stats->getNumber("predicted_ms"))
      entry.latencyMs = *ms;
    llvm::raw_string_ostream svg(entry.svg);
    diagram::renderSVG(*picture, svg, /*standalone=*/false);
    entry.stats = std::move(*stats);
    entry.stats["title"] = picture->title;
    entries.push_back(std::move(entry));
  }
  return success();
}

void writeLatency(llvm::raw_ostream &os, const Entry &e) {
  if (e.latencyMs)
    os << llvm::format("%.3f ms", *e.latencyMs) << " (replayed; simulated "
       << e.latency << " ticks)";
  else
    os << e.latency << " ticks (" << number(e.stats, "latency_units", "%.2f")
       << " units)";
}

void writeReport(llvm::raw_ostream &os, std::vector<Entry> &entries) {
  // By predicted time where every schedule has one, else by ticks.
  bool allMs = llvm::all_of(entries, [](const Entry &e) { return e.latencyMs.has_value(); });
  llvm::stable_sort(entries, [&](const Entry &a, const Entry &b) {
    return allMs ? *a.latencyMs < *b.latencyMs : a.latency < b.latency;
  });
  os << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
     << "<title>" << escaped(title) << "</title>\n"
     << "<style>\n"
        "body{font-family:sans-serif;margin:24px;color:#222}\n"
        "table{border-collapse:collapse;margin:8px 0 16px}\n"
        "th,td{border:1px solid #bbb;padding:3px 8px;text-align:right}\n"
        "th{background:#eee}td.name,th.name{text-align:left}\n"
        "section{margin-top:28px}svg{max-width:100%;height:auto}\n"
        "</style>\n</head>\n<body>\n";
  os << "<h1>" << escaped(title) << "</h1>\n";
  os << "<p>" << entries.size() << (entries.size() == 1 ? " schedule" : " schedules")
     << ", sorted by " << (allMs ? "predicted step time" : "simulated latency")
     << ". Bubble: idle / (latency &times; workers). Memory: the most "
        "activations one worker keeps for its backwards. Traffic: tensors "
        "received from other workers.</p>\n";
  os << "<table class=\"comparison\">\n<tr><th>#</th><th class=\"name\">schedule"
        "</th><th>S</th><th>B</th><th>W</th><th>latency</th><th>bubble</th>"
        "<th>peak live activations</th><th>peak live bytes</th>"
        "<th>activations + gradients received</th><th>weight fetches</th></tr>\n";
  for (auto [i, e] : llvm::enumerate(entries)) {
    int64_t traffic = e.stats.getInteger("act_recv").value_or(0) +
                      e.stats.getInteger("grad_recv").value_or(0);
    os << "<tr><td>" << i + 1 << "</td><td class=\"name\"><a href=\"#s" << i
       << "\">" << escaped(e.name) << "</a></td><td>" << number(e.stats, "stages")
       << "</td><td>" << number(e.stats, "microbatches") << "</td><td>"
       << number(e.stats, "workers") << "</td><td>";
    writeLatency(os, e);
    os << "</td><td>" << number(e.stats, "bubble_of_total") << "</td><td>"
       << number(e.stats, "peak_live") << "</td><td>"
       << number(e.stats, "peak_live_bytes") << "</td><td>" << traffic
       << "</td><td>" << number(e.stats, "weight_fetches") << "</td></tr>\n";
  }
  os << "</table>\n";

  for (auto [i, e] : llvm::enumerate(entries)) {
    os << "<section id=\"s" << i << "\">\n<h2>" << escaped(e.name) << "</h2>\n<p>"
       << escaped(e.stats.getString("title").value_or("").str()) << "; latency ";
    writeLatency(os, e);
    os << "; bubble " << number(e.stats, "bubble_of_total") << " of total time, "
       << number(e.stats, "bubble_of_ideal") << " of ideal time (Megatron), rate "
       << number(e.stats, "bubble_rate") << " of the makespan and "
       << number(e.stats, "stage_bubble_rate")
       << " per stage (Zero Bubble); rho "
       << number(e.stats, "rho") << ", bound M/S " << number(e.stats, "bound")
       << "</p>\n";
    os << "<table>\n<tr><th>worker</th><th>jobs</th><th>busy</th><th>idle</th>"
          "<th>act_recv</th><th>grad_recv</th><th>weight_fetches</th>"
          "<th>peak_live</th><th>weights_owned</th></tr>\n";
    if (const llvm::json::Array *workers = e.stats.getArray("per_worker"))
      for (const llvm::json::Value &v : *workers) {
        const llvm::json::Object *w = v.getAsObject();
        os << "<tr>";
        for (const char *key : {"worker", "jobs", "busy", "idle", "act_recv",
                                "grad_recv", "weight_fetches", "peak_live",
                                "weights_owned"})
          os << "<td>" << number(*w, key) << "</td>";
        os << "</tr>\n";
      }
    os << "</table>\n" << e.svg << "</section>\n";
  }
  os << "</body>\n</html>\n";
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::HideUnrelatedOptions(category);
  pipesched::addVersionPrinter();
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "pipeline-report: schedule specs and compare them in one HTML page\n");

  auto options = LowerOptions::createFromString(lowerOptions);
  if (!options) {
    llvm::errs() << "pipeline-report: invalid --lower-options '" << lowerOptions
                 << "'\n";
    return 1;
  }
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);

  std::vector<Entry> entries;
  for (const std::string &path : inputFiles)
    if (failed(scheduleFile(context, path, *options, entries)))
      return 1;
  if (entries.empty()) {
    llvm::errs() << "pipeline-report: the specs hold no sched.step\n";
    return 1;
  }
  std::string error;
  auto output = openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << "pipeline-report: " << error << "\n";
    return 1;
  }
  writeReport(output->os(), entries);
  return pipesched::finishOutput(*output, "pipeline-report", outputFile);
}
