// The loader's entry points: a single document's bytes, and whatever a
// path names (a single document, a per-rank directory or its index). The
// parts of a program are loaded by the Loader of loader_impl.h.
#include "program/loader.h"

#include "program/document.h"
#include "program/loader_impl.h"
#include "program/program_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <new>

namespace pipesched::runtime {
namespace loading {

Program Loader::load(const json &doc) {
  using namespace schema::top;
  Program p;
  loadTop(doc, p, /*index=*/false);
  const JsonPath top;
  const json &ranks = require(doc, kRanks, top);
  checkArray(ranks, top.key(kRanks));
  if (ranks.size() != size_t(p.workers))
    fail(top.key(kRanks), "has " + std::to_string(ranks.size()) +
                              " entries, expected one per worker (" +
                              std::to_string(p.workers) + ")");
  p.ranks.resize(size_t(p.workers));
  for (int r = 0; r < p.workers; ++r)
    loadRank(ranks[size_t(r)], top.key(kRanks).index(r), r, p);
  checkOwners(p, top.key(kRanks), str(kRanks) + "[i]." + str(schema::rank::kOwns));
  return p;
}

} // namespace loading

using namespace loading;

Program parseProgram(const std::string &text, const std::string &source,
                     int worldSize) {
  json doc = decodeDocument(text, source);
  return Loader(source, worldSize).load(doc);
}

Program loadProgram(const std::string &path, int worldSize, int rank) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0)
    throw ProgramError(path + ": cannot open: " + std::strerror(errno));
  std::string dir, file = path;
  if (S_ISDIR(st.st_mode)) {
    dir = path;
    while (dir.size() > 1 && dir.back() == '/')
      dir.pop_back();
    std::string index = indexIn(dir);
    if (index.empty())
      throw ProgramError(path + ": is a directory without " + indexNames() +
                         ", not a per-rank program");
    file = dir + "/" + index;
  }
  try {
    std::string bytes = readFile(file);
    json doc = decodeDocument(bytes, file);
    // What the file is decides, not its name: an index has `layout` (a
    // single document with one is refused by the loader).
    // A directory's index is loaded as one, whatever it holds (the loader
    // names what it lacks).
    const bool index = !dir.empty() ||
                       (doc.is_object() && doc.contains(std::string(schema::layout::kLayout)) &&
                        !doc.contains(std::string(schema::top::kRanks)));
    if (!index) {
      Program p = Loader(path, worldSize).load(doc);
      p.crc32 = crc32Of(bytes);
      return p;
    }
    if (dir.empty()) { // the index file itself names its directory
      const size_t slash = path.rfind('/');
      dir = slash == std::string::npos ? "." : path.substr(0, slash);
      if (isIndexName(path.substr(slash == std::string::npos ? 0 : slash + 1)))
        (void)indexIn(dir); // refuses a directory holding both indexes
    }
    return loadPerRank(dir, file, bytes, doc, worldSize, rank);
  } catch (const std::bad_alloc &) {
    // The JSON document takes ~10x the file's size in memory.
    throw ProgramError(file + ": out of memory while loading a file of " +
                       std::to_string((st.st_size + (1 << 20) - 1) >> 20) + " MiB");
  }
}

} // namespace pipesched::runtime
