// The loader's ranks: each rank's owned stages and ops, every op's fields
// by its kind, and each compute op's reads and writes against the stage
// graph (roles.h).
#include "program/loader_impl.h"

#include "program/roles.h"

#include <algorithm>

namespace pipesched::runtime::loading {
namespace {

// The index of an op field in the schema's kFieldNames, or -1.
int fieldIndex(const std::string &key) {
  for (int i = 0; i < schema::kNumFields; ++i)
    if (key == schema::kFieldNames[i])
      return i;
  return -1;
}

} // namespace

// `where`: ranks[index] in a single document, the root of a rank file.
void Loader::loadRank(const json &v, const JsonPath &where, int index, Program &p) {
  using namespace schema::rank;
  checkObject(v, where);
  checkFields(v, where, kAll);
  RankProgram &rp = p.ranks[size_t(index)];
  int64_t rank = intField(v, kRank, where, 0, kNoUpperBound);
  if (rank != index)
    fail(where.key(kRank), "expected " + std::to_string(index) + ", got " +
                               std::to_string(rank) +
                               (where.empty() ? " (the index gives this file to rank " +
                                                    std::to_string(index) + ")"
                                              : std::string(" (ranks must be listed in order)")));
  rp.rank = index;
  loadOwns(require(v, kOwns, where), where.key(kOwns), p, rp);

  const json &ops = require(v, kOps, where);
  const JsonPath opsAt = where.key(kOps);
  checkArray(ops, opsAt);
  if (ops.size() > size_t(kMaxInt))
    fail(opsAt, "has more than 2^31 ops");
  rp.ops.reserve(ops.size());
  for (size_t i = 0; i < ops.size(); ++i)
    rp.ops.push_back(loadOp(ops[i], opsAt.index(int64_t(i)), index, false, p, rp));
}

void Loader::loadOwns(const json &owns, const JsonPath &where, const Program &p,
                      RankProgram &rp) const {
  checkArray(owns, where);
  for (size_t i = 0; i < owns.size(); ++i)
    rp.owns.push_back(int(toInt(owns[i], where.index(int64_t(i)), 0, p.stages)));
  rp.ownsSorted = rp.owns;
  std::sort(rp.ownsSorted.begin(), rp.ownsSorted.end());
  auto twice = std::adjacent_find(rp.ownsSorted.begin(), rp.ownsSorted.end());
  if (twice == rp.ownsSorted.end())
    return;
  // Name the second listing.
  size_t second = 0;
  for (size_t i = 0, seen = 0; i < rp.owns.size(); ++i)
    if (rp.owns[i] == *twice && seen++ == 1)
      second = i;
  fail(where.index(int64_t(second)),
       "stage " + std::to_string(*twice) + " is listed twice");
}

// Every stage needs an owner to initialize and keep its weights.
void Loader::checkOwners(const Program &p, const JsonPath &where,
                         const std::string &list) const {
  std::vector<char> owned(size_t(p.stages), 0);
  for (const RankProgram &rp : p.ranks)
    for (int s : rp.owns)
      owned[size_t(s)] = 1;
  for (int s = 0; s < p.stages; ++s)
    if (!owned[size_t(s)])
      fail(where, "stage " + std::to_string(s) + " has no owner (no " + list +
                      " lists it)");
}

Op Loader::loadOp(const json &v, const JsonPath &where, int rank, bool inGroup,
                  Program &p, RankProgram &rp) {
  OpFields f(where);
  Op op;
  op.kind = readOpFields(v, inGroup, f);
  if (f.has(schema::kStage))
    op.stage = int32_t(intOf(f, schema::kStage, 0, p.stages));
  switch (op.kind) {
  case OpKind::Combine:
  case OpKind::LossGrad:
  case OpKind::Jacobian:
  case OpKind::Forward:
  case OpKind::Backward:
  case OpKind::BackwardWeight:
    loadJob(f, p, rp, op);
    break;
  case OpKind::Send:
  case OpKind::Recv:
  case OpKind::SendWeights:
  case OpKind::FetchWeights:
    loadTransfer(f, rank, p, op);
    break;
  case OpKind::ReleaseWeights:
  case OpKind::OptimizerStep:
    break;
  case OpKind::AllreduceGrad:
  case OpKind::ReduceGrad:
  case OpKind::TiedGrad:
    loadCollective(f, rank, p, op);
    break;
  case OpKind::Group:
    loadGroup(f, rank, p, rp, op);
    break;
  }
  return op;
}

// The op's name and fields: a known op, allowed where it is, with its
// required fields and no others.
OpKind Loader::readOpFields(const json &v, bool inGroup, OpFields &f) const {
  const JsonPath &where = f.where;
  checkObject(v, where);
  bool unknown = false;
  for (auto it = v.begin(); it != v.end(); ++it) {
    int i = fieldIndex(it.key());
    if (i < 0) {
      unknown = true;
      continue;
    }
    f.fields[i] = &it.value();
    f.present |= 1u << i;
  }
  const json *name = f.fields[0];
  if (!name)
    fail(where, "missing field 'op'");
  if (!name->is_string())
    fail(where.key("op"), "expected a string, got " + describeValue(*name));
  const std::string &opText = name->get_ref<const std::string &>();
  f.name = opText;
  std::optional<OpKind> kind = schema::opKindNamed(opText);
  if (!kind)
    fail(where.key("op"), "unknown op '" + opText + "'");
  const schema::OpSchema &spec = schema::opSchema(*kind);
  if (inGroup && !isPointToPoint(*kind))
    fail(where, "'" + opText + "' cannot appear in a group (only send, recv, "
                "send_weights and fetch_weights can)");
  if (unknown || (f.present & ~spec.allowed()))
    for (auto it = v.begin(); it != v.end(); ++it) { // the first, in key order
      int i = fieldIndex(it.key());
      if (i < 0 || !(spec.allowed() >> i & 1u))
        fail(where, "unknown field '" + it.key() + "' for op '" + opText + "'");
    }
  for (int i = 0; i < schema::kNumFields; ++i)
    if ((spec.required >> i & 1u) && !(f.present >> i & 1u))
      fail(where, "missing field '" + str(schema::kFieldNames[i]) + "'");
  return *kind;
}

int64_t Loader::intOf(const OpFields &f, schema::Field field, int64_t lo, int64_t hi) const {
  return toInt(f.field(field), f.at(field), lo, hi);
}

// A job: its microbatch, simulated times and tensors; the scan's jobs need
// a scanned program, a weight half a split or scanned backward.
void Loader::loadJob(const OpFields &f, const Program &p, RankProgram &rp, Op &op) const {
  const std::string opText(f.name);
  if (op.kind == OpKind::Combine) {
    const json &product = f.field(schema::kProduct);
    const std::string text = product.is_string() ? product.get<std::string>() : "";
    op.product = text == program::productName(program::ScanValue::Vector)
                     ? program::ScanValue::Vector
                 : text == program::productName(program::ScanValue::Matrix)
                     ? program::ScanValue::Matrix
                     : program::ScanValue::None;
    if (op.product == program::ScanValue::None)
      fail(f.at(schema::kProduct), "expected \"jv\" or \"jj\", got " + describeValue(product));
  }
  if (program::isScan(op.kind) && !p.scanned())
    fail(f.where, "'" + opText + "' needs \"scan_tensors\" (a scanned backward)");
  if (op.kind == OpKind::BackwardWeight && !p.splitBackward && !p.scanned())
    fail(f.where, "backward_weight needs \"split_backward\": true (or a scanned "
                  "backward's \"scan_tensors\")");
  op.microbatch = int32_t(intOf(f, schema::kMicrobatch, 0, p.microbatches));
  // Simulated times: present once the schedule was simulated.
  if (f.has(schema::kStart))
    op.start = toNumber(f.field(schema::kStart), f.at(schema::kStart));
  if (f.has(schema::kEnd))
    op.end = toNumber(f.field(schema::kEnd), f.at(schema::kEnd));
  if (f.has(schema::kStart) && f.has(schema::kEnd) && op.end < op.start)
    fail(f.at(schema::kEnd), "ends before its start");
  loadTensors(&f.field(schema::kReads), &f.field(schema::kWrites), f.where, p, rp, op);
}

// A transfer: an activation's or gradient's send or receive names its
// tensor, whose (s, b) it takes; every transfer has a peer, a tag, a size.
void Loader::loadTransfer(const OpFields &f, int rank, const Program &p, Op &op) const {
  if (op.kind == OpKind::Send || op.kind == OpKind::Recv) {
    const schema::Field tensor = op.kind == OpKind::Send ? schema::kReads : schema::kWrites;
    op.tensor = loadTensorList(f.field(tensor), f.at(tensor), p);
    if (!p.isScanTensor(op.tensor)) { // a scan tensor has no (s, b) of its own
      program::TensorRef t = program::tensorOf(op.tensor, p.microbatches);
      op.stage = int32_t(t.stage);
      op.microbatch = int32_t(t.microbatch);
    }
  }
  op.peer = int32_t(intOf(f, schema::kPeer, 0, p.workers));
  if (op.peer == rank)
    fail(f.at(schema::kPeer), std::to_string(op.peer) + " is the rank itself");
  op.tag = intOf(f, schema::kTag, 0, kMaxInt + 1);
  op.bytes = intOf(f, schema::kBytes, 0, kNoUpperBound);
}

// A group: its transfers, loaded in order into the rank's children (groups
// do not nest, so a group's children are contiguous).
void Loader::loadGroup(const OpFields &f, int rank, Program &p, RankProgram &rp, Op &op) {
  const json &ops = f.field(schema::kOps);
  const JsonPath opsAt = f.at(schema::kOps);
  checkArray(ops, opsAt);
  if (rp.children.size() + ops.size() > size_t(kMaxInt))
    fail(opsAt, "the rank's groups hold more than 2^31 ops");
  op.first = uint32_t(rp.children.size());
  op.count = uint32_t(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    Op child = loadOp(ops[i], opsAt.index(int64_t(i)), rank, true, p, rp);
    rp.children.push_back(child);
  }
}

// A send's reads or a receive's writes: exactly one tensor id.
int64_t Loader::loadTensorList(const json &v, const JsonPath &where,
                               const Program &p) const {
  checkArray(v, where);
  if (v.size() != 1)
    fail(where, "lists " + std::to_string(v.size()) +
                    " tensors; a send or receive moves exactly one");
  return toInt(v[0], where.index(0), 0, p.tensorCount());
}

// A compute op's reads and writes: ids in range, then exactly the roles of
// the stage graph (roles.h).
void Loader::loadTensors(const json *reads, const json *writes, const JsonPath &where,
                         const Program &p, RankProgram &rp, Op &op) const {
  const JsonPath readsAt = where.key(schema::fieldName(schema::kReads));
  const JsonPath writesAt = where.key(schema::fieldName(schema::kWrites));
  checkArray(*reads, readsAt);
  checkArray(*writes, writesAt);
  if (rp.tensorIds.size() + reads->size() + writes->size() > size_t(UINT32_MAX))
    fail(where, "the rank's ops list more than 2^32 tensors");
  op.first = uint32_t(rp.tensorIds.size());
  op.count = uint32_t(reads->size());
  op.writes = uint32_t(writes->size());
  const int64_t ids = p.tensorCount();
  for (size_t i = 0; i < reads->size(); ++i)
    rp.tensorIds.push_back(toInt((*reads)[i], readsAt.index(int64_t(i)), 0, ids));
  for (size_t i = 0; i < writes->size(); ++i)
    rp.tensorIds.push_back(toInt((*writes)[i], writesAt.index(int64_t(i)), 0, ids));
  auto listed = [](IdList l) {
    std::string s = "[";
    for (uint32_t i = 0; i < l.size(); ++i)
      s += (i ? ", " : "") + std::to_string(l[i]);
    return s + "]";
  };
  if (!readsMatchRoles(p, op, rp.reads(op)))
    fail(readsAt, describe(p, op) + " reads " + listed(rp.reads(op)) + ", expected " +
                      expectedReads(p, op));
  if (!writesMatchRoles(p, op, rp.writes(op)))
    fail(writesAt, describe(p, op) + " writes " + listed(rp.writes(op)) +
                       ", expected " + expectedWrites(p, op));
}

} // namespace pipesched::runtime::loading
