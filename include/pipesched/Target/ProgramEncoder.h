//===- ProgramEncoder.h - write program documents, any layout ---*- C++ -*-===//
//
// The one writer of the program format (pipesched/Program/Schema.h,
// docs/program-format.md), dialect-free: a caller describes the header and
// then each rank's ops in order, and the encoder streams them out as one
// document or in the per-rank layout, in JSON or CBOR. Two callers feed it:
// the translation of lowered IR (ExportProgram.cpp) and the direct emission
// of a communication plan (EmitPlan.cpp), so both write the same bytes.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_TARGET_PROGRAMENCODER_H
#define PIPESCHED_TARGET_PROGRAMENCODER_H

#include "pipesched/Program/Schema.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>
#include <set>
#include <vector>

namespace pipesched {

/// The top-level fields of a program, in the order they are written.
struct ProgramHeader {
  int64_t stages = 0, microbatches = 0, workers = 0;
  std::vector<std::pair<int64_t, int64_t>> stageGraph; ///< always explicit
  std::vector<std::vector<int64_t>> tied;              ///< empty: none
  bool splitBackward = false;
  std::vector<int64_t> fwd, bwd, bwdW;
  int64_t actBytes = 0, weightBytes = 0;
  int64_t transfer = 0;             ///< written when non-zero
  std::optional<int64_t> tickNs;    ///< written when the cost has a unit
  int64_t makespan = 0;
  std::optional<int64_t> replayed;
  int64_t scanTensors = 0;          ///< written when non-zero
  std::optional<std::vector<int64_t>> layers;
};

/// Streams JSON or CBOR values. JSON is compact (no spaces); CBOR uses
/// indefinite-length maps and arrays of unknown size, so nothing is
/// buffered.
class DocumentWriter {
public:
  DocumentWriter(llvm::raw_ostream &os, program::Encoding encoding)
      : os(os), encoding(encoding) {}
  void beginObject();
  void endObject() { close('}'); }
  void beginArray();
  void endArray() { close(']'); }
  void key(std::string_view name);
  void value(int64_t v);
  void value(bool v);
  void string(std::string_view s);
  void array(llvm::ArrayRef<int64_t> values);
  /// JSON only: text written as is (line breaks, the rank framing).
  void raw(llvm::StringRef text);
  /// JSON only: the next element starts a new line (after its comma).
  void lineBreak() { pendingNewline = isJson(); }
  /// JSON only: forgets the innermost container without closing it; the
  /// caller closes it with raw text.
  void leaveOpen();
  bool isJson() const { return encoding == program::Encoding::Json; }

private:
  /// A container: its JSON bracket, or its indefinite-length CBOR head.
  void open(char json, uint8_t cborHead);
  void close(char json);
  /// JSON: a comma before the next element of the current container.
  void separate();
  void cborHead(uint8_t major, uint64_t value);

  llvm::raw_ostream &os;
  program::Encoding encoding;
  /// Per open container: whether it has an element already.
  llvm::SmallVector<bool, 8> nonEmpty;
  bool afterKey = false;
  bool pendingNewline = false;
};

/// Where and how a program is written.
enum class ProgramLayout : uint8_t { Single, PerRank };

class ProgramEncoder {
public:
  /// One document into `os`, flushed by finish(); the stream's I/O errors
  /// are its owner's to check (raw_fd_ostream::has_error()).
  static ProgramEncoder toStream(llvm::raw_ostream &os,
                                 program::Encoding encoding);
  /// The per-rank layout into directory `dir` (created if missing, its
  /// parent must exist):
  /// `index.EXT` and `rank-R.EXT`; an error when `dir` cannot be created
  /// or is a file. Nothing in it changes before the first rank is written.
  static llvm::Expected<ProgramEncoder> toDirectory(llvm::StringRef dir,
                                                    program::Encoding encoding);
  ProgramEncoder(ProgramEncoder &&);
  ~ProgramEncoder();

  void begin(const ProgramHeader &header);
  void beginRank(int64_t rank, llvm::ArrayRef<int64_t> owns);
  /// A compute op: reads and writes as the schema names them; `product`
  /// only for a combine ("jv" / "jj"); start and end when simulated.
  void compute(program::OpKind kind, int64_t stage, int64_t microbatch,
               llvm::ArrayRef<int64_t> reads, llvm::ArrayRef<int64_t> writes,
               std::string_view product, std::optional<int64_t> start,
               std::optional<int64_t> end);
  void send(int64_t tensor, int64_t peer, int64_t tag, int64_t bytes);
  void recv(int64_t tensor, int64_t peer, int64_t tag, int64_t bytes);
  /// send_weights (outgoing) or fetch_weights.
  void weights(bool outgoing, int64_t stage, int64_t peer, int64_t tag,
               int64_t bytes);
  void releaseWeights(int64_t stage);
  void allReduceGrad(int64_t stage, llvm::ArrayRef<int64_t> members,
                     int64_t bytes);
  void reduceGrad(int64_t stage, int64_t root,
                  llvm::ArrayRef<int64_t> members, int64_t bytes);
  void optimizerStep(int64_t stage);
  void tiedGrad(int64_t tie, llvm::ArrayRef<int64_t> members, int64_t bytes);
  /// Point-to-point ops between these two are one group.
  void beginGroup();
  void endGroup();
  void endRank();
  /// Ends the document (per-rank: writes the index, last); the first error
  /// of the per-rank files (a single stream's errors are its owner's).
  llvm::Error finish();

private:
  ProgramEncoder(program::Encoding encoding, ProgramLayout layout);
  llvm::SmallString<256> pathOf(llvm::StringRef name) const;
  /// Records the first error (`path: what: reason`).
  void fail(const llvm::Twine &path, std::error_code ec, llvm::StringRef what);
  void removeOldIndexes();
  void writeIndex(llvm::raw_ostream &os);
  void beginOp(program::OpKind kind);
  void endOp();
  void field(program::Field f, int64_t value);
  void members(llvm::ArrayRef<int64_t> ranks);
  void writeHeaderFields(DocumentWriter &doc);

  class OutputFile;
  program::Encoding encoding;
  ProgramLayout layout;
  llvm::raw_ostream *single = nullptr;
  std::string dir;
  ProgramHeader header;
  /// The writer of the current document: the single one, or the open rank
  /// file's.
  std::unique_ptr<DocumentWriter> doc;
  std::unique_ptr<OutputFile> rankFile;
  /// Where a rank goes after a failure: nothing more is written.
  std::unique_ptr<llvm::raw_null_ostream> nullSink;
  /// Per-rank: what the index lists about each written rank.
  struct RankEntry {
    int64_t rank;
    std::vector<int64_t> owns;
    std::string file;
    uint64_t bytes;
    uint32_t crc32;
  };
  std::vector<RankEntry> written;
  std::set<std::vector<int64_t>> collectiveGroups;
  bool firstRank = true, firstOp = true, inGroup = false;
  llvm::Error error = llvm::Error::success();
};

} // namespace pipesched

#endif // PIPESCHED_TARGET_PROGRAMENCODER_H
