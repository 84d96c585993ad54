//===- ProgramEncoder.cpp - write program documents, any layout -----------===//
//
// JSON keeps the format it always had: the header as one compact object,
// then one op per line, so a program reads and diffs line by line. CBOR
// writes the same document (RFC 8949, indefinite-length containers where
// the size is not known up front). Nothing is built in memory: a program
// of millions of ops streams through a buffered file.
//
//===----------------------------------------------------------------------===//

#include "pipesched/Target/ProgramEncoder.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CRC.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace pipesched;
namespace schema = pipesched::program;
using schema::Encoding;
using schema::OpKind;

//===----------------------------------------------------------------------===//
// DocumentWriter
//===----------------------------------------------------------------------===//

namespace {
// CBOR major types (RFC 8949, 3.1).
enum Major : uint8_t {
  kUnsigned = 0,
  kNegative = 1,
  kText = 3,
  kArray = 4,
  kMap = 5,
};
constexpr uint8_t kIndefiniteArray = 0x9f, kIndefiniteMap = 0xbf,
                  kBreak = 0xff, kFalse = 0xf4, kTrue = 0xf5;
} // namespace

void DocumentWriter::cborHead(uint8_t major, uint64_t value) {
  uint8_t m = uint8_t(major << 5);
  if (value < 24) {
    os << char(m | value);
    return;
  }
  int bytes = value <= 0xff ? 1 : value <= 0xffff ? 2 : value <= 0xffffffff ? 4 : 8;
  os << char(m | (bytes == 1 ? 24 : bytes == 2 ? 25 : bytes == 4 ? 26 : 27));
  for (int i = bytes - 1; i >= 0; --i)
    os << char((value >> (8 * i)) & 0xff);
}

void DocumentWriter::separate() {
  if (afterKey) {
    afterKey = false;
    return;
  }
  if (!nonEmpty.empty()) {
    if (nonEmpty.back())
      os << ',';
    nonEmpty.back() = true;
  }
  if (pendingNewline) {
    os << '\n';
    pendingNewline = false;
  }
}

void DocumentWriter::open(char json, uint8_t cborHead) {
  if (!isJson()) {
    os << char(cborHead);
    return;
  }
  separate();
  os << json;
  nonEmpty.push_back(false);
}

void DocumentWriter::beginObject() { open('{', kIndefiniteMap); }
void DocumentWriter::beginArray() { open('[', kIndefiniteArray); }

void DocumentWriter::close(char json) {
  if (!isJson()) {
    os << char(kBreak); // every container of unknown size is indefinite
    return;
  }
  nonEmpty.pop_back();
  os << json;
}

void DocumentWriter::key(std::string_view name) {
  if (!isJson()) {
    string(name);
    return;
  }
  separate();
  // Keys are the schema's names: nothing to escape.
  os << '"' << llvm::StringRef(name.data(), name.size()) << "\":";
  afterKey = true;
}

void DocumentWriter::value(int64_t v) {
  if (!isJson()) {
    if (v >= 0)
      cborHead(kUnsigned, uint64_t(v));
    else
      cborHead(kNegative, uint64_t(-(v + 1)));
    return;
  }
  separate();
  os << v;
}

void DocumentWriter::value(bool v) {
  if (!isJson()) {
    os << char(v ? kTrue : kFalse);
    return;
  }
  separate();
  os << (v ? "true" : "false");
}

void DocumentWriter::string(std::string_view s) {
  if (!isJson()) {
    cborHead(kText, s.size());
    os << llvm::StringRef(s.data(), s.size());
    return;
  }
  separate();
  // The strings written are schema names and file names the encoder
  // chose: nothing to escape.
  os << '"' << llvm::StringRef(s.data(), s.size()) << '"';
}

void DocumentWriter::array(llvm::ArrayRef<int64_t> values) {
  if (!isJson()) {
    cborHead(kArray, values.size());
    for (int64_t v : values)
      value(v);
    return;
  }
  separate();
  os << '[';
  llvm::interleave(values, os, ",");
  os << ']';
}

void DocumentWriter::raw(llvm::StringRef text) {
  if (isJson())
    os << text;
}

void DocumentWriter::leaveOpen() {
  if (isJson())
    nonEmpty.pop_back();
}

//===----------------------------------------------------------------------===//
// ProgramEncoder
//===----------------------------------------------------------------------===//

/// A file being written, with the CRC-32 of what passed through. It is a
/// new temporary in the directory (created exclusively, so a link left at
/// any name is never followed) renamed over its name once whole: a link at
/// that name is replaced, never written through, and no reader sees a
/// partial file.
class ProgramEncoder::OutputFile : public llvm::raw_ostream {
public:
  static llvm::Expected<std::unique_ptr<OutputFile>>
  create(llvm::StringRef path) {
    llvm::Expected<llvm::sys::fs::TempFile> temp =
        llvm::sys::fs::TempFile::create(path + "-%%%%%%.tmp");
    if (!temp)
      return temp.takeError();
    return std::unique_ptr<OutputFile>(
        new OutputFile(path, std::move(*temp)));
  }
  ~OutputFile() override {
    flush();
    file.clear_error(); // reported by close(), or the open's error already
    if (temp)
      llvm::consumeError(temp->discard());
  }
  uint32_t crc() const { return crc32; }
  uint64_t size() const { return written; }
  /// Flushes and renames the file into place; on an error it is removed.
  std::error_code close() {
    flush();
    std::error_code ec = file.error();
    file.clear_error();
    llvm::Error kept = ec ? temp->discard() : temp->keep(path);
    temp.reset();
    if (!ec)
      ec = llvm::errorToErrorCode(std::move(kept));
    else
      llvm::consumeError(std::move(kept));
    return ec;
  }

private:
  OutputFile(llvm::StringRef path, llvm::sys::fs::TempFile temp)
      : path(path.str()), temp(std::move(temp)),
        file(this->temp->FD, /*shouldClose=*/false) {
    SetBufferSize(1 << 16);
    file.SetUnbuffered(); // this stream buffers: `file` holds nothing
  }
  void write_impl(const char *ptr, size_t size) override {
    crc32 = llvm::crc32(
        crc32, llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(ptr),
                                       size));
    written += size;
    file.write(ptr, size);
  }
  uint64_t current_pos() const override { return written; }

  std::string path;
  std::optional<llvm::sys::fs::TempFile> temp;
  llvm::raw_fd_ostream file;
  uint32_t crc32 = 0;
  uint64_t written = 0;
};

ProgramEncoder::ProgramEncoder(Encoding encoding, ProgramLayout layout)
    : encoding(encoding), layout(layout) {}
ProgramEncoder::ProgramEncoder(ProgramEncoder &&) = default;
ProgramEncoder::~ProgramEncoder() { llvm::consumeError(std::move(error)); }

ProgramEncoder ProgramEncoder::toStream(llvm::raw_ostream &os,
                                        Encoding encoding) {
  ProgramEncoder out(encoding, ProgramLayout::Single);
  out.single = &os;
  out.doc = std::make_unique<DocumentWriter>(os, encoding);
  return out;
}

llvm::Expected<ProgramEncoder>
ProgramEncoder::toDirectory(llvm::StringRef dir, Encoding encoding) {
  // Checked before anything is planned: a bad -o fails at once. Only the
  // last component is created, as `mkdir` would: a missing parent is an
  // error, and `a/b/../d` never creates `a/b`.
  if (std::error_code ec = llvm::sys::fs::create_directory(dir))
    return llvm::createStringError(ec, "%s: cannot create the directory: %s",
                                   dir.str().c_str(), ec.message().c_str());
  if (!llvm::sys::fs::is_directory(dir))
    return llvm::createStringError(
        std::make_error_code(std::errc::not_a_directory),
        "%s: is a file, not a directory for the per-rank layout",
        dir.str().c_str());
  ProgramEncoder out(encoding, ProgramLayout::PerRank);
  out.dir = dir.str();
  return std::move(out);
}

llvm::SmallString<256> ProgramEncoder::pathOf(llvm::StringRef name) const {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name);
  return path;
}

void ProgramEncoder::fail(const llvm::Twine &path, std::error_code ec,
                          llvm::StringRef what) {
  if (!error)
    error = llvm::createStringError(ec, "%s: %s: %s", path.str().c_str(),
                                    what.str().c_str(), ec.message().c_str());
}

void ProgramEncoder::removeOldIndexes() {
  // The new index is written last, after every rank file, and an earlier
  // one goes first: a compile that fails midway leaves a directory without
  // an index (refused as such), never an old index over a mix of old and
  // new rank files. Removed only once the step is planned and its first
  // rank is being written: a compile that fails before writing anything
  // leaves the earlier program as it was.
  for (Encoding e : {Encoding::Json, Encoding::Cbor}) {
    llvm::SmallString<256> path = pathOf(schema::layout::indexName(e));
    if (std::error_code ec = llvm::sys::fs::remove(path))
      fail(path, ec, "cannot remove");
  }
}

void ProgramEncoder::writeHeaderFields(DocumentWriter &d) {
  namespace top = schema::top;
  const ProgramHeader &h = header;
  d.key(top::kFormatField);
  d.string(schema::kFormat);
  d.key(top::kVersion);
  d.value(schema::kVersion);
  d.key(top::kStages);
  d.value(h.stages);
  d.key(top::kMicrobatches);
  d.value(h.microbatches);
  d.key(top::kWorkers);
  d.value(h.workers);
  // Always explicit, in the step's own edge order (the runtime sums fan-in
  // activations and fan-out gradients in edge order).
  d.key(top::kStageGraph);
  d.beginArray();
  for (auto [src, dst] : h.stageGraph)
    d.array({src, dst});
  d.endArray();
  // Optional fields are written only where used (older readers).
  if (!h.tied.empty()) {
    d.key(top::kTied);
    d.beginArray();
    for (const std::vector<int64_t> &group : h.tied)
      d.array(group);
    d.endArray();
  }
  d.key(top::kSplitBackward);
  d.value(h.splitBackward);
  d.key(top::kCost);
  d.beginObject();
  d.key(schema::cost::kFwd);
  d.array(h.fwd);
  d.key(schema::cost::kBwd);
  d.array(h.bwd);
  d.key(schema::cost::kBwdW);
  d.array(h.bwdW);
  d.key(schema::cost::kActBytes);
  d.value(h.actBytes);
  d.key(schema::cost::kWeightBytes);
  d.value(h.weightBytes);
  if (h.transfer) {
    d.key(schema::cost::kTransfer);
    d.value(h.transfer);
  }
  if (h.tickNs) {
    d.key(schema::cost::kTickNs);
    d.value(*h.tickNs);
  }
  d.endObject();
  d.key(top::kMakespan);
  d.value(h.makespan);
  if (h.replayed) {
    d.key(top::kReplayedMakespan);
    d.value(*h.replayed);
  }
  if (h.scanTensors) {
    d.key(top::kScanTensors);
    d.value(h.scanTensors);
  }
  if (h.layers) {
    d.key(top::kLayers);
    d.array(*h.layers);
  }
}

void ProgramEncoder::begin(const ProgramHeader &h) {
  header = h;
  if (layout == ProgramLayout::PerRank)
    return; // the index is written last, with the files' sizes and CRCs
  doc->beginObject();
  writeHeaderFields(*doc);
  if (!doc->isJson()) {
    doc->key(schema::top::kRanks);
    doc->beginArray();
    return;
  }
  // JSON: the ranks one op per line, framed by hand.
  doc->leaveOpen();
  doc->raw((",\n\"" + std::string(schema::top::kRanks) + "\": [\n").c_str());
}

void ProgramEncoder::beginRank(int64_t rank, llvm::ArrayRef<int64_t> owns) {
  if (layout == ProgramLayout::PerRank) {
    if (firstRank)
      removeOldIndexes();
    std::string name = (llvm::Twine(schema::layout::kRankStem) +
                        llvm::Twine(rank) + schema::extension(encoding).data())
                           .str();
    written.push_back({rank, owns.vec(), name, 0, 0});
    // After a failure nothing more is written: the rest of the program
    // streams into a null sink, and finish() reports the first error.
    if (!error) {
      llvm::SmallString<256> path = pathOf(name);
      auto file = OutputFile::create(path);
      if (file)
        rankFile = std::move(*file);
      else
        fail(path, llvm::errorToErrorCode(file.takeError()), "cannot write");
    }
    if (!rankFile && !nullSink)
      nullSink = std::make_unique<llvm::raw_null_ostream>();
    doc = std::make_unique<DocumentWriter>(
        rankFile ? static_cast<llvm::raw_ostream &>(*rankFile) : *nullSink,
        encoding);
  } else if (!firstRank) {
    doc->raw(",\n");
  }
  firstRank = false;
  firstOp = true;
  namespace r = schema::rank;
  if (doc->isJson()) {
    // The rank's framing keeps its spaces (what every program has had).
    std::string line;
    llvm::raw_string_ostream os(line);
    os << "{\"" << r::kRank.data() << "\": " << rank << ", \""
       << r::kOwns.data() << "\": [";
    llvm::interleaveComma(owns, os);
    os << "], \"" << r::kOps.data() << "\": [\n";
    doc->raw(line);
    return;
  }
  doc->beginObject();
  doc->key(r::kRank);
  doc->value(rank);
  doc->key(r::kOwns);
  doc->array(owns);
  doc->key(r::kOps);
  doc->beginArray();
}

void ProgramEncoder::beginOp(OpKind kind) {
  if (!inGroup) {
    doc->raw(firstOp ? "  " : ",\n  ");
    firstOp = false;
  }
  doc->beginObject();
  doc->key(schema::fieldName(schema::kOp));
  doc->string(schema::opName(kind));
}

void ProgramEncoder::endOp() { doc->endObject(); }

void ProgramEncoder::field(schema::Field f, int64_t value) {
  doc->key(schema::fieldName(f));
  doc->value(value);
}

void ProgramEncoder::members(llvm::ArrayRef<int64_t> ranks) {
  doc->key(schema::fieldName(schema::kMembers));
  doc->array(ranks);
  if (layout == ProgramLayout::PerRank)
    collectiveGroups.insert(ranks.vec());
}

void ProgramEncoder::compute(OpKind kind, int64_t stage, int64_t microbatch,
                             llvm::ArrayRef<int64_t> reads,
                             llvm::ArrayRef<int64_t> writes,
                             std::string_view product,
                             std::optional<int64_t> start,
                             std::optional<int64_t> end) {
  beginOp(kind);
  field(schema::kStage, stage);
  field(schema::kMicrobatch, microbatch);
  doc->key(schema::fieldName(schema::kReads));
  doc->array(reads);
  doc->key(schema::fieldName(schema::kWrites));
  doc->array(writes);
  if (!product.empty()) {
    doc->key(schema::fieldName(schema::kProduct));
    doc->string(product);
  }
  if (start)
    field(schema::kStart, *start);
  if (end)
    field(schema::kEnd, *end);
  endOp();
}

void ProgramEncoder::send(int64_t tensor, int64_t peer, int64_t tag,
                          int64_t bytes) {
  beginOp(OpKind::Send);
  doc->key(schema::fieldName(schema::kReads));
  doc->array(tensor);
  field(schema::kPeer, peer);
  field(schema::kTag, tag);
  field(schema::kBytes, bytes);
  endOp();
}

void ProgramEncoder::recv(int64_t tensor, int64_t peer, int64_t tag,
                          int64_t bytes) {
  beginOp(OpKind::Recv);
  doc->key(schema::fieldName(schema::kWrites));
  doc->array(tensor);
  field(schema::kPeer, peer);
  field(schema::kTag, tag);
  field(schema::kBytes, bytes);
  endOp();
}

void ProgramEncoder::weights(bool outgoing, int64_t stage, int64_t peer,
                             int64_t tag, int64_t bytes) {
  beginOp(outgoing ? OpKind::SendWeights : OpKind::FetchWeights);
  field(schema::kStage, stage);
  field(schema::kPeer, peer);
  field(schema::kTag, tag);
  field(schema::kBytes, bytes);
  endOp();
}

void ProgramEncoder::releaseWeights(int64_t stage) {
  beginOp(OpKind::ReleaseWeights);
  field(schema::kStage, stage);
  endOp();
}

void ProgramEncoder::allReduceGrad(int64_t stage,
                                   llvm::ArrayRef<int64_t> ranks,
                                   int64_t bytes) {
  beginOp(OpKind::AllreduceGrad);
  field(schema::kStage, stage);
  members(ranks);
  field(schema::kBytes, bytes);
  endOp();
}

void ProgramEncoder::reduceGrad(int64_t stage, int64_t root,
                                llvm::ArrayRef<int64_t> ranks, int64_t bytes) {
  beginOp(OpKind::ReduceGrad);
  field(schema::kStage, stage);
  field(schema::kRoot, root);
  members(ranks);
  field(schema::kBytes, bytes);
  endOp();
}

void ProgramEncoder::optimizerStep(int64_t stage) {
  beginOp(OpKind::OptimizerStep);
  field(schema::kStage, stage);
  endOp();
}

void ProgramEncoder::tiedGrad(int64_t tie, llvm::ArrayRef<int64_t> ranks,
                              int64_t bytes) {
  beginOp(OpKind::TiedGrad);
  field(schema::kTie, tie);
  members(ranks);
  field(schema::kBytes, bytes);
  endOp();
}

void ProgramEncoder::beginGroup() {
  beginOp(OpKind::Group);
  doc->key(schema::fieldName(schema::kOps));
  doc->beginArray();
  inGroup = true;
}

void ProgramEncoder::endGroup() {
  inGroup = false;
  doc->endArray();
  endOp();
}

void ProgramEncoder::endRank() {
  if (doc->isJson()) {
    doc->raw("\n]}");
  } else {
    doc->endArray();
    doc->endObject();
  }
  if (layout != ProgramLayout::PerRank)
    return;
  doc->raw("\n");
  doc.reset();
  if (!rankFile)
    return;
  RankEntry &entry = written.back();
  if (std::error_code ec = rankFile->close())
    fail(pathOf(entry.file), ec, "cannot write");
  entry.bytes = rankFile->size();
  entry.crc32 = rankFile->crc();
  rankFile.reset();
}

llvm::Error ProgramEncoder::finish() {
  if (layout == ProgramLayout::Single) {
    if (doc->isJson())
      doc->raw("\n]}\n");
    else {
      doc->endArray();
      doc->endObject();
    }
    // The stream's own errors (a full disk) are its owner's to check.
    single->flush();
    return std::move(error);
  }
  if (error)
    return std::move(error);
  // The index, last: it never exists unless complete.
  llvm::SmallString<256> path = pathOf(schema::layout::indexName(encoding));
  auto file = OutputFile::create(path);
  std::error_code ec;
  if (file) {
    writeIndex(**file);
    ec = (*file)->close();
  } else {
    ec = llvm::errorToErrorCode(file.takeError());
  }
  if (ec)
    return llvm::createStringError(ec, "%s: cannot write: %s", path.c_str(),
                                   ec.message().c_str());
  return llvm::Error::success();
}

void ProgramEncoder::writeIndex(llvm::raw_ostream &os) {
  namespace lay = schema::layout;
  DocumentWriter d(os, encoding);
  d.beginObject();
  writeHeaderFields(d);
  d.key(lay::kLayout);
  d.string(lay::kPerRank);
  d.key(lay::kRankFiles);
  d.beginArray();
  for (const RankEntry &entry : written) {
    d.lineBreak();
    d.beginObject();
    d.key(lay::kRank);
    d.value(entry.rank);
    d.key(lay::kOwns);
    d.array(entry.owns);
    d.key(lay::kFile);
    d.string(entry.file);
    d.key(lay::kBytes);
    d.value(int64_t(entry.bytes));
    d.key(lay::kCrc32);
    d.value(int64_t(entry.crc32));
    d.endObject();
  }
  d.raw("\n");
  d.endArray();
  d.key(lay::kCollectiveGroups);
  d.beginArray();
  for (const std::vector<int64_t> &group : collectiveGroups)
    d.array(group);
  d.endArray();
  d.endObject();
  d.raw("\n");
}
