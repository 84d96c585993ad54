//===- LayerFile.cpp - a model's layers, read from JSON -------------------===//

#include "pipesched/Transforms/LayerFile.h"
#include "pipesched/Transforms/JsonInput.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace pipesched;
namespace json = llvm::json;

namespace {

constexpr llvm::StringLiteral kInput = "input", kLayers = "layers";
constexpr llvm::StringLiteral kName = "name", kFwd = "fwd", kBwd = "bwd",
                              kBwdW = "bwd_w", kAct = "act",
                              kWeights = "weights";
constexpr llvm::StringLiteral kTopFields[] = {kInput, kLayers};
constexpr llvm::StringLiteral kLayerFields[] = {kName, kFwd,  kBwd,
                                                kBwdW, kAct, kWeights};

/// A value as the file wrote it, cut short.
std::string shown(const json::Value &v) {
  std::string text = llvm::formatv("{0}", v).str();
  return text.size() > 40 ? text.substr(0, 37) + "..." : text;
}

/// An integer in [0, 2^53), or a message saying what `v` is instead.
std::optional<int64_t> count(const json::Value &v, std::string &error,
                             const llvm::Twine &what) {
  std::optional<int64_t> n = v.getAsInteger();
  if (n && *n >= 0 && *n < scheduling::kMaxPartitionValue)
    return n;
  error = (what + " must be an integer in [0, 2^53), got " + shown(v)).str();
  return std::nullopt;
}

/// Reads layers[index] into `out`; "" or the problem.
std::string readLayer(const json::Value &v, size_t index, scheduling::Layer &out,
                      bool &hasBwdW) {
  std::string where = "layers[" + std::to_string(index) + "]";
  const json::Object *layer = v.getAsObject();
  if (!layer)
    return where + " must be an object, got " + shown(v);
  const json::Value *name = layer->get(kName);
  if (!name)
    return where + ": missing '" + kName.str() + "'";
  std::optional<llvm::StringRef> text = name->getAsString();
  if (!text)
    return where + ": 'name' must be a string, got " + shown(*name);
  out.name = text->str();
  where += " ('" + out.name + "')";
  for (const auto &entry : *layer)
    if (!llvm::is_contained(kLayerFields, llvm::StringRef(entry.first)))
      return where + ": unknown field '" + entry.first.str() + "'";
  std::string error;
  for (auto [key, field] :
       {std::pair{kFwd, &out.fwd}, std::pair{kBwd, &out.bwd},
        std::pair{kAct, &out.actBytes}, std::pair{kWeights, &out.weightBytes},
        std::pair{kBwdW, &out.bwdWeight}}) {
    const json::Value *value = layer->get(key);
    if (!value) {
      if (key == kBwdW)
        continue;
      return where + ": missing '" + key.str() + "'";
    }
    std::optional<int64_t> n = count(*value, error, where + ": '" + key + "'");
    if (!n)
      return error;
    *field = *n;
  }
  hasBwdW = layer->get(kBwdW) != nullptr;
  return "";
}

} // namespace

/// Refuses, before parsing, more layers than a partition takes: the objects
/// at depth 2 are the layers (`{"layers": [{...}, ...]}`), and parsed, each
/// costs about 100 times its text.
static std::string checkLayerCount(const JsonNesting &nesting) {
  int64_t layers = nesting.objects.size() > 2 ? nesting.objects[2] : 0;
  if (layers <= scheduling::kMaxPartitionLayers)
    return "";
  return std::to_string(layers) + " layers, more than the supported " +
         std::to_string(scheduling::kMaxPartitionLayers);
}

std::string pipesched::parseLayerFile(llvm::StringRef text, LayerFile &out) {
  json::Value doc = nullptr;
  if (std::string error = parseJsonInput(text, doc, checkLayerCount);
      !error.empty())
    return error;
  const json::Object *top = doc.getAsObject();
  if (!top)
    return "expected a JSON object with 'layers', got " + shown(doc);
  for (const auto &entry : *top)
    if (!llvm::is_contained(kTopFields, llvm::StringRef(entry.first)))
      return "unknown field '" + entry.first.str() +
             "' at the top level (expected 'input' and 'layers')";
  out = LayerFile();
  std::string error;
  if (const json::Value *input = top->get(kInput)) {
    std::optional<int64_t> n = count(*input, error, "'input'");
    if (!n)
      return error;
    out.inputBytes = *n;
  }
  const json::Value *layers = top->get(kLayers);
  if (!layers)
    return "missing 'layers'";
  const json::Array *list = layers->getAsArray();
  if (!list)
    return "'layers' must be a list of layers, got " + shown(*layers);
  if (list->empty())
    return "'layers' is empty: no layer to partition";
  for (auto [i, v] : llvm::enumerate(*list)) {
    scheduling::Layer layer;
    bool hasBwdW = false;
    if (std::string problem = readLayer(v, i, layer, hasBwdW); !problem.empty())
      return problem;
    if (i == 0)
      out.splitBackward = hasBwdW;
    else if (hasBwdW != out.splitBackward)
      return "layers[" + std::to_string(i) + "] ('" + layer.name + "') " +
             (hasBwdW ? "has 'bwd_w' but layers[0] has none"
                      : "has no 'bwd_w' but layers[0] has one") +
             ": give it for every layer or for none";
    out.layers.push_back(std::move(layer));
  }
  return "";
}

std::string pipesched::readLayerFile(llvm::StringRef path, LayerFile &out) {
  std::string text;
  if (std::string error =
          readInputFile(path, kMaxLayerFileBytes, "a layer file", text);
      !error.empty())
    return error;
  return parseLayerFile(text, out);
}
