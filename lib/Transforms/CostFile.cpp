//===- CostFile.cpp - the costs measured on a machine, read from JSON -----===//

#include "pipesched/Transforms/CostFile.h"
#include "pipesched/Program/Costs.h"
#include "pipesched/Transforms/JsonInput.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/JSON.h"

using namespace pipesched;
namespace keys = pipesched::costs;

namespace {
/// Reads the fields of a cost file, remembering the first problem.
class CostFileReader {
public:
  explicit CostFileReader(const llvm::json::Object &doc) : doc(doc) {}

  std::string error;

  std::optional<scheduling::MeasuredCosts> read() {
    for (const auto &entry : doc)
      if (!llvm::is_contained(keys::kAll, std::string_view(llvm::StringRef(entry.first))))
        return fail("unknown field '" + entry.first.str() + "'");
    std::optional<llvm::StringRef> format = doc.getString(str(keys::kFormatField));
    if (!format || *format != str(keys::kFormat))
      return fail("'format' must be \"" + str(keys::kFormat).str() +
                  "\": not a cost file");
    std::optional<int64_t> version = doc.getInteger(str(keys::kVersionField));
    if (!version || *version != keys::kVersion)
      return fail("'version' must be " + std::to_string(keys::kVersion));
    std::optional<llvm::StringRef> unit = doc.getString(str(keys::kUnit));
    if (!unit || *unit != str(keys::kUnitNs))
      return fail("'unit' must be \"ns\"");
    std::optional<int64_t> stages = doc.getInteger(str(keys::kStages));
    if (!stages || *stages < 1 || *stages > keys::kMaxStages)
      return fail("'stages' must be an integer in [1, " +
                  std::to_string(keys::kMaxStages) + "]");
    scheduling::MeasuredCosts m;
    if (!list(keys::kFwd, *stages, false, m.fwd) ||
        !list(keys::kBwd, *stages, false, m.bwd) ||
        !list(keys::kBwdW, *stages, true, m.bwdWeight) ||
        (doc.get(str(keys::kOptimizer)) &&
         !list(keys::kOptimizer, *stages, true, m.optimizer)) ||
        !size(keys::kActBytes, m.actBytes) ||
        !size(keys::kWeightBytes, m.weightBytes))
      return std::nullopt;
    if (const llvm::json::Value *reduce = doc.get(str(keys::kReduce))) {
      const llvm::json::Object *object = reduce->getAsObject();
      std::optional<int64_t> bytes =
          object ? object->getInteger(str(keys::kReduceBytes)) : std::nullopt;
      std::optional<double> time =
          object ? object->getNumber(str(keys::kReduceTime)) : std::nullopt;
      if (!bytes || !time || *bytes < 0 || object->size() != 2)
        return fail("'reduce' must be an object with an integer 'bytes' and "
                    "a number 'time'");
      m.reduceBytes = *bytes;
      m.reduceNs = *time;
    }
    const llvm::json::Object *transfer = doc.getObject(str(keys::kTransfer));
    if (!transfer)
      return fail("'transfer' must be an object with 'latency' and "
                  "'per_byte'");
    for (const auto &entry : *transfer)
      if (!llvm::is_contained(keys::kTransferAll,
                              std::string_view(llvm::StringRef(entry.first))))
        return fail("unknown field 'transfer." + entry.first.str() + "'");
    std::optional<double> latency = transfer->getNumber(str(keys::kLatency)),
                          perByte = transfer->getNumber(str(keys::kPerByte));
    if (!latency || !perByte)
      return fail("'transfer' needs numbers 'latency' and 'per_byte'");
    m.latencyNs = *latency;
    m.nsPerByte = *perByte;
    if (std::string problem = m.check(); !problem.empty())
      return fail(problem);
    return m;
  }

private:
  static llvm::StringRef str(std::string_view s) { return {s.data(), s.size()}; }

  std::nullopt_t fail(const llvm::Twine &message) {
    error = message.str();
    return std::nullopt;
  }

  bool list(std::string_view key, int64_t stages, bool mayBeEmpty,
            std::vector<double> &out) {
    const llvm::json::Array *values = doc.getArray(str(key));
    if (!values) {
      fail("'" + str(key) + "' must be a list of durations");
      return false;
    }
    if (values->empty() && mayBeEmpty)
      return true;
    if (int64_t(values->size()) != stages) {
      fail("'" + str(key) + "' lists " + llvm::Twine(values->size()) +
           " durations for " + llvm::Twine(stages) + " stages");
      return false;
    }
    for (auto [i, v] : llvm::enumerate(*values)) {
      std::optional<double> ns = v.getAsNumber();
      if (!ns) {
        fail("'" + str(key) + "'[" + llvm::Twine(i) + "] is not a number");
        return false;
      }
      out.push_back(*ns);
    }
    return true;
  }

  bool size(std::string_view key, int64_t &out) {
    std::optional<int64_t> v = doc.getInteger(str(key));
    if (!v || *v < 0) {
      fail("'" + str(key) + "' must be a non-negative integer");
      return false;
    }
    out = *v;
    return true;
  }

  const llvm::json::Object &doc;
};
} // namespace

std::string pipesched::parseCostFile(llvm::StringRef text,
                                     scheduling::MeasuredCosts &out) {
  llvm::json::Value doc = nullptr;
  if (std::string error = parseJsonInput(text, doc); !error.empty())
    return error;
  const llvm::json::Object *object = doc.getAsObject();
  if (!object)
    return "expected a JSON object";
  CostFileReader reader(*object);
  std::optional<scheduling::MeasuredCosts> measured = reader.read();
  if (!measured)
    return reader.error;
  out = std::move(*measured);
  return "";
}

std::string pipesched::readCostFile(llvm::StringRef path,
                                    scheduling::MeasuredCosts &out) {
  std::string text;
  if (std::string error =
          readInputFile(path, kMaxCostFileBytes, "a cost file", text);
      !error.empty())
    return error;
  return parseCostFile(text, out);
}
