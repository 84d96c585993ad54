// Writes a single-document program in the per-rank layout (docs/
// program-format.md, "Big programs"): the C++ twin of
// integration/split_program.py, for the unit tests and the loading
// benchmark (bench/load), which need CBOR of large programs fast. Not the
// compiler's writer: a test helper over nlohmann-json and zlib.
#pragma once

#include "program/document.h"

#include "pipesched/Program/Schema.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace pipesched::runtime::split {

inline std::string encodeDocument(const nlohmann::json &doc, program::Encoding e) {
  if (e == program::Encoding::Json)
    return doc.dump();
  std::vector<uint8_t> bytes = nlohmann::json::to_cbor(doc);
  return std::string(bytes.begin(), bytes.end());
}

inline void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!out)
    throw std::runtime_error(path + ": cannot write");
}

// Writes `doc` (moved from: its ranks are taken) into the existing
// directory `dir`: index.EXT and rank-R.EXT in encoding `e`.
inline void splitProgram(nlohmann::json doc, const std::string &dir, program::Encoding e) {
  namespace layout = program::layout;
  const std::string ext(program::extension(e));
  nlohmann::json ranks = std::move(doc[std::string(program::top::kRanks)]);
  doc.erase(std::string(program::top::kRanks));
  std::set<std::vector<int>> groups; // sorted: the compiler's order
  nlohmann::json files = nlohmann::json::array();
  for (size_t r = 0; r < ranks.size(); ++r) {
    for (const nlohmann::json &op : ranks[r]["ops"])
      if (auto kind = program::opKindNamed(op.value("op", "")); kind && program::isCollective(*kind))
        groups.insert(op["members"].get<std::vector<int>>());
    const std::string name = std::string(layout::kRankStem) + std::to_string(r) + ext;
    const std::string bytes = encodeDocument(ranks[r], e);
    writeFile(dir + "/" + name, bytes);
    files.push_back({{std::string(layout::kRank), r},
                     {std::string(layout::kOwns), ranks[r]["owns"]},
                     {std::string(layout::kFile), name},
                     {std::string(layout::kBytes), bytes.size()},
                     {std::string(layout::kCrc32), crc32Of(bytes)}});
    ranks[r] = nullptr; // free as we go: big programs
  }
  doc[std::string(layout::kLayout)] = layout::kPerRank;
  doc[std::string(layout::kRankFiles)] = std::move(files);
  doc[std::string(layout::kCollectiveGroups)] = groups;
  writeFile(dir + "/" + std::string(layout::kIndexStem) + ext, encodeDocument(doc, e));
}

} // namespace pipesched::runtime::split
