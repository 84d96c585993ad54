// The loader's per-rank layout (docs/program-format.md, "Big programs"):
// the index, its rank files (names, sizes and CRC-32s checked before any
// is parsed) and a rank's own file.
#include "program/loader_impl.h"

#include "program/document.h"
#include "program/program_file.h"

namespace pipesched::runtime::loading {

using schema::layout::indexName;

std::string indexNames() {
  return indexName(program::Encoding::Json) + " or " + indexName(program::Encoding::Cbor);
}

Program Loader::loadIndex(const json &doc, const std::string &dir) {
  Program p;
  indexSource_ = source_;
  dir_ = dir;
  loadTop(doc, p, /*index=*/true);
  loadCollectiveGroups(doc, p);
  checkOwners(p, JsonPath().key(schema::layout::kRankFiles),
              str(schema::layout::kRankFiles) + "[i]." + str(schema::layout::kOwns));
  return p;
}

// rank_files: one entry per worker, in rank order.
void Loader::loadRankFiles(const json &doc, Program &p) {
  namespace layout = schema::layout;
  const JsonPath where = JsonPath().key(layout::kRankFiles);
  const json &list = require(doc, layout::kRankFiles, JsonPath());
  checkArray(list, where);
  if (list.size() != size_t(p.workers))
    fail(where, "has " + std::to_string(list.size()) +
                    " entries, expected one per worker (" + std::to_string(p.workers) + ")");
  static constexpr std::string_view kFields[] = {layout::kRank, layout::kOwns,
                                                 layout::kFile, layout::kBytes,
                                                 layout::kCrc32};
  p.ranks.resize(size_t(p.workers));
  files_.resize(size_t(p.workers));
  for (int r = 0; r < p.workers; ++r) {
    const JsonPath at = where.index(r);
    const json &e = list[size_t(r)];
    checkObject(e, at);
    checkFields(e, at, kFields);
    int64_t rank = intField(e, layout::kRank, at, 0, kNoUpperBound);
    if (rank != r)
      fail(at.key(layout::kRank), "expected " + std::to_string(r) + ", got " +
                                      std::to_string(rank) +
                                      " (ranks must be listed in order)");
    RankProgram &rp = p.ranks[size_t(r)];
    rp.rank = r;
    loadOwns(require(e, layout::kOwns, at), at.key(layout::kOwns), p, rp);
    RankFile &f = files_[size_t(r)];
    f.owns = rp.owns;
    const json &file = require(e, layout::kFile, at);
    if (!file.is_string())
      fail(at.key(layout::kFile), "expected a string, got " + describeValue(file));
    f.name = file.get<std::string>();
    // A name inside the directory, nothing that leaves it.
    if (f.name.empty() || f.name == "." || f.name == ".." ||
        f.name.find('/') != std::string::npos || f.name.find('\0') != std::string::npos)
      fail(at.key(layout::kFile), shortDump(file) +
                                      " is not a plain file name (no '/', not '.' or '..')");
    f.bytes = intField(e, layout::kBytes, at, 0, int64_t(1) << 48);
    f.crc32 = uint32_t(intField(e, layout::kCrc32, at, 0, int64_t(1) << 32));
    // The sizes bound the program before any of it is allocated, so each
    // is checked against its file now, by every rank (the rank files must
    // all be visible: one shared directory); the CRC-32 only by the rank
    // that reads the file.
    (void)statProgramFile(dir_ + "/" + f.name, f.bytes);
  }
}

void Loader::loadRankFile(const std::string &dir, int r, Program &p) {
  const RankFile &f = files_[size_t(r)];
  source_ = dir + "/" + f.name;
  const std::string bytes = readFile(source_, f.bytes);
  if (int64_t(bytes.size()) != f.bytes) // a pipe, or a file that changed
    fail(JsonPath(), std::to_string(bytes.size()) + " bytes, the index says " +
                         std::to_string(f.bytes) + " (a file from another compile?)");
  const uint32_t crc = crc32Of(bytes);
  if (crc != f.crc32)
    fail(JsonPath(), "CRC-32 " + hex32(crc) + " differs from the index's " + hex32(f.crc32) +
                         " (a file from another compile?)");
  const json doc = decodeDocument(bytes, source_);
  RankProgram &rp = p.ranks[size_t(r)];
  rp.owns.clear();
  rp.ownsSorted.clear();
  loadRank(doc, JsonPath(), r, p);
  if (rp.owns != f.owns)
    fail(JsonPath().key(schema::rank::kOwns),
         listString(rp.owns) + " differs from the index's " +
             str(schema::layout::kRankFiles) + "[" + std::to_string(r) + "]." +
             str(schema::layout::kOwns) + " " + listString(f.owns));
  if (p.scanned())
    fillScanValues(p, rp);
}

// What each scan tensor of a scanned backward holds, a vector or a matrix,
// as far as rank rp's ops fix it: the validator fixes it from every rank's
// writers, but a run of one rank's file has only that rank's ops. Its
// writers and readers fix what it computes and reads, and so what it
// receives (each receive is read here).
void Loader::fillScanValues(Program &p, const RankProgram &rp) const {
  using program::ScanValue;
  p.scanValue.assign(size_t(p.scanTensors), ScanValue::None);
  auto fix = [&](int64_t id, ScanValue value, const JsonPath &where) {
    if (!p.isScanTensor(id))
      return;
    ScanValue &slot = p.scanValue[size_t(id - p.scanBase())];
    if (slot != ScanValue::None && slot != value)
      fail(where, describeTensor(p, id) + " is used both as a vector and as a matrix");
    slot = value;
  };
  const JsonPath ops = JsonPath().key(schema::rank::kOps);
  for (size_t i = 0; i < rp.ops.size(); ++i) {
    const Op &op = rp.ops[i];
    const JsonPath at = ops.index(int64_t(i));
    if (program::isScan(op.kind))
      fix(rp.writes(op)[0],
          op.kind == OpKind::LossGrad   ? ScanValue::Vector
          : op.kind == OpKind::Jacobian ? ScanValue::Matrix
                                        : op.product,
          at);
    if (op.kind == OpKind::Combine) {
      fix(rp.reads(op)[0], op.product, at);
      fix(rp.reads(op)[1], ScanValue::Matrix, at);
    } else if (op.kind == OpKind::BackwardWeight && rp.reads(op).size() > 0) {
      fix(rp.reads(op)[0], ScanValue::Vector, at);
    }
  }
  auto checkReceive = [&](const Op &op, const JsonPath &at) {
    if (op.kind == OpKind::Recv && p.isScanTensor(op.tensor) &&
        p.scanValue[size_t(op.tensor - p.scanBase())] == ScanValue::None)
      fail(at, "receives " + describeTensor(p, op.tensor) +
                   ", which no op of this rank reads (its size is unknown)");
  };
  for (size_t i = 0; i < rp.ops.size(); ++i) {
    const Op &op = rp.ops[i];
    checkReceive(op, ops.index(int64_t(i)));
    if (op.kind == OpKind::Group)
      for (uint32_t c = 0; c < op.count; ++c)
        checkReceive(rp.childrenOf(op)[c],
                     ops.index(int64_t(i)).key(schema::rank::kOps).index(c));
  }
}

std::string indexIn(const std::string &dir) {
  std::string found;
  for (program::Encoding e : {program::Encoding::Json, program::Encoding::Cbor}) {
    const std::string name = indexName(e);
    struct stat st {};
    if (stat((dir + "/" + name).c_str(), &st) != 0)
      continue;
    if (!found.empty())
      throw ProgramError(dir + ": holds both " + found + " and " + name +
                         " (one program has one index: remove the stale one)");
    found = name;
  }
  return found;
}

bool isIndexName(const std::string &name) {
  for (program::Encoding e : {program::Encoding::Json, program::Encoding::Cbor})
    if (name == indexName(e))
      return true;
  return false;
}

Program loadPerRank(const std::string &dir, const std::string &indexPath,
                    const std::string &bytes, const json &index, int worldSize, int rank) {
  Loader loader(indexPath, worldSize);
  Program p = loader.loadIndex(index, dir);
  p.source = dir;
  p.perRank = true;
  p.crc32 = crc32Of(bytes);
  if (rank >= p.workers) // a run checks its world size first
    throw ProgramError(indexPath + ": the program is for " + std::to_string(p.workers) +
                       " ranks, not rank " + std::to_string(rank));
  if (rank >= 0) {
    p.onlyRank = rank;
    loader.loadRankFile(dir, rank, p);
    return p;
  }
  for (int r = 0; r < p.workers; ++r)
    loader.loadRankFile(dir, r, p);
  loader.checkGroupsUsed();
  return p;
}

} // namespace pipesched::runtime::loading
