#include "model/bppsa_exec.h"

#include "model/kernels.h"

#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>

namespace pipesched::runtime {
namespace bppsa {
namespace {

// One CSR block: views into its fixed-capacity slot.
struct CsrBlock {
  float *base;
  int64_t H;
  static int64_t floats(int64_t H) { return 2 + H + 2 * H * H; }
  int32_t getInt(int64_t k) const {
    int32_t v;
    std::memcpy(&v, base + k, sizeof v);
    return v;
  }
  void setInt(int64_t k, int32_t v) { std::memcpy(base + k, &v, sizeof v); }
  int32_t nnz() const { return getInt(0); }
  int32_t rowBegin(int64_t i) const { return getInt(1 + i); }
  int32_t col(int64_t e) const { return getInt(2 + H + e); }
  float value(int64_t e) const { return base[2 + H + H * H + e]; }
};

CsrBlock block(const float *m, int64_t r, int64_t H) {
  return CsrBlock{const_cast<float *>(m) + r * CsrBlock::floats(H), H};
}

// Writes row-major dense `acc` (H x H) as block r of a matrix in `storage`.
void store(const double *acc, Storage storage, int64_t r, int64_t H, float *out) {
  if (storage == Storage::Dense) {
    for (int64_t k = 0; k < H * H; ++k)
      out[r * H * H + k] = float(acc[k]);
    return;
  }
  CsrBlock b = block(out, r, H);
  int32_t e = 0;
  for (int64_t i = 0; i < H; ++i) {
    b.setInt(1 + i, e);
    for (int64_t j = 0; j < H; ++j) {
      const float v = float(acc[i * H + j]);
      if (v == 0.0f)
        continue;
      b.setInt(2 + H + e, int32_t(j));
      b.base[2 + H + H * H + e] = v;
      ++e;
    }
  }
  b.setInt(1 + H, e);
  b.setInt(0, e);
}

// Calls f(k, value) for the nonzeros of row i of block r, k ascending.
template <class F>
void forEachInRow(const float *m, Storage storage, int64_t r, int64_t i, int64_t H, F &&f) {
  if (storage == Storage::Dense) {
    const float *row = m + r * H * H + i * H;
    for (int64_t k = 0; k < H; ++k)
      if (row[k] != 0.0f)
        f(k, row[k]);
    return;
  }
  const CsrBlock b = block(m, r, H);
  for (int32_t e = b.rowBegin(i); e < b.rowBegin(i + 1); ++e)
    f(int64_t(b.col(e)), b.value(e));
}

} // namespace

std::optional<Storage> storageNamed(std::string_view name) {
  if (name == "dense")
    return Storage::Dense;
  if (name == "csr")
    return Storage::Csr;
  return std::nullopt;
}

std::string_view storageName(Storage storage) {
  return storage == Storage::Dense ? "dense" : "csr";
}

int64_t tensorFloats(Value value, Storage storage, int64_t rows, int64_t H) {
  if (value == Value::Vector)
    return rows * H;
  return rows * (storage == Storage::Dense ? H * H : CsrBlock::floats(H));
}

void writeJacobian(const pipesched_stage_config &c, Activation act, const float *params,
                   int64_t rows, const float *input, Storage storage, float *out) {
  const int64_t H = c.hidden, L = c.layers, block = rows * H;
  const int64_t layerParams = H * H + H;
  // Pre-activations and their derivatives, layer by layer, with the
  // forward's own kernels (the same z as the forward computes).
  const size_t n = static_cast<size_t>(block);
  std::vector<float> z(n), a(input, input + block), next(n);
  std::vector<float> ones(n, 1.0f);
  std::vector<std::vector<float>> slope(static_cast<size_t>(L), std::vector<float>(n));
  for (int64_t l = 0; l < L; ++l) {
    const float *w = params + l * layerParams;
    kernels::linearForward(a.data(), w, w + H * H, z.data(), rows, H, H);
    activationBackward(act, z.data(), ones.data(), slope[size_t(l)].data(), block);
    activationForward(act, z.data(), next.data(), block);
    a.swap(next);
  }
  // J = M_0 ... M_{L-1}, composed from the last layer backwards in double.
  std::vector<double> acc(static_cast<size_t>(H * H)), tmp(acc.size());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t l = L - 1; l >= 0; --l) {
      const float *w = params + l * layerParams;
      const float *d = slope[size_t(l)].data() + r * H;
      // M_l[i][o] = w[o][i] d[o]; acc = M_l acc (acc = I before the last).
      for (int64_t i = 0; i < H; ++i)
        for (int64_t o = 0; o < H; ++o) {
          if (l == L - 1) {
            tmp[size_t(i * H + o)] = double(w[o * H + i]) * d[o];
            continue;
          }
          double sum = 0;
          for (int64_t k = 0; k < H; ++k)
            sum += double(w[k * H + i]) * d[k] * acc[size_t(k * H + o)];
          tmp[size_t(i * H + o)] = sum;
        }
      acc.swap(tmp);
    }
    store(acc.data(), storage, r, H, out);
  }
}

void combine(Value leftValue, const float *left, const float *right, Storage storage,
             int64_t rows, int64_t H, float *out) {
  if (leftValue == Value::Vector) {
    // out[r][i] = sum_k right[r][i][k] left[r][k].
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t i = 0; i < H; ++i) {
        double sum = 0;
        forEachInRow(right, storage, r, i, H,
                     [&](int64_t k, float v) { sum += double(v) * left[r * H + k]; });
        out[r * H + i] = float(sum);
      }
    return;
  }
  // out[r] = right[r] left[r], row by row (Gustavson): for each nonzero
  // right[i][k], k ascending, row k of left is scaled into the row's sums.
  std::vector<double> acc(static_cast<size_t>(H * H));
  for (int64_t r = 0; r < rows; ++r) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int64_t i = 0; i < H; ++i)
      forEachInRow(right, storage, r, i, H, [&](int64_t k, float b) {
        forEachInRow(left, storage, r, k, H, [&](int64_t j, float a) {
          acc[size_t(i * H + j)] += double(b) * a;
        });
      });
    store(acc.data(), storage, r, H, out);
  }
}

int64_t nonzeros(const float *matrix, Storage storage, int64_t rows, int64_t H) {
  if (storage == Storage::Dense)
    return rows * H * H;
  int64_t n = 0;
  for (int64_t r = 0; r < rows; ++r)
    n += block(matrix, r, H).nnz();
  return n;
}

std::vector<float> toDense(const float *matrix, Storage storage, int64_t rows, int64_t H) {
  std::vector<float> dense(static_cast<size_t>(rows * H * H), 0.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < H; ++i)
      forEachInRow(matrix, storage, r, i, H,
                    [&](int64_t k, float v) { dense[size_t(r * H * H + i * H + k)] = v; });
  return dense;
}

} // namespace bppsa

using scheduling::BppsaJob;
using scheduling::BppsaJobKind;
using scheduling::Product;

BppsaBackward runBppsa(const scheduling::BppsaShape &shape,
                       const scheduling::BppsaGraph &graph, pipesched_stage_config c,
                       Activation act, bppsa::Storage storage,
                       const std::vector<std::vector<float>> &params,
                       const std::vector<std::vector<float>> &inputs,
                       const std::vector<float> &lossGradient,
                       std::vector<double> *jobSeconds) {
  const int64_t S = shape.stages, H = c.hidden, rows = shape.rows;
  const pipesched_stage_api *api = builtinMlpApi(act);
  BppsaBackward out;
  out.outputGradients.assign(size_t(S), {});
  out.weightGradients.assign(size_t(S), {});
  std::vector<std::vector<float>> value(graph.jobs.size());
  auto floats = [&](bppsa::Value v) {
    return size_t(bppsa::tensorFloats(v, storage, rows, H));
  };
  std::vector<float> ws;
  if (jobSeconds)
    jobSeconds->assign(graph.jobs.size(), 0.0);
  for (size_t i = 0; i < graph.jobs.size(); ++i) {
    const BppsaJob &j = graph.jobs[i];
    if (j.microbatch != 0)
      break;
    const auto start = std::chrono::steady_clock::now();
    switch (j.kind) {
    case BppsaJobKind::LossGradient:
      value[i] = lossGradient;
      break;
    case BppsaJobKind::Jacobian:
      c.stage = int32_t(j.stage);
      value[i].assign(floats(bppsa::Value::Jacobian), 0.0f);
      bppsa::writeJacobian(c, act, params[size_t(j.stage)].data(), rows,
                           inputs[size_t(j.stage)].data(), storage, value[i].data());
      break;
    case BppsaJobKind::UpSweep:
    case BppsaJobKind::DownSweep: {
      const bppsa::Value left =
          j.product == Product::JV ? bppsa::Value::Vector : bppsa::Value::Jacobian;
      value[i].assign(floats(left), 0.0f);
      bppsa::combine(left, value[j.inputs[0]].data(), value[j.inputs[1]].data(), storage,
                     rows, H, value[i].data());
      break;
    }
    case BppsaJobKind::WeightGradient: {
      const std::vector<float> &g = value[j.inputs[0]];
      c.stage = int32_t(j.stage);
      std::vector<float> &grad = out.weightGradients[size_t(j.stage)];
      grad.assign(size_t(api->num_params(&c)), 0.0f);
      ws.resize(size_t(api->workspace_floats(&c, rows)));
      if (api->backward(&c, params[size_t(j.stage)].data(), rows,
                        inputs[size_t(j.stage)].data(), g.data(), nullptr, grad.data(),
                        ws.data()) != 0)
        throw std::runtime_error("runBppsa: the backward of stage " +
                                 std::to_string(j.stage) + " failed");
      out.outputGradients[size_t(j.stage)] = g;
      break;
    }
    }
    if (jobSeconds)
      (*jobSeconds)[i] =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return out;
}

} // namespace pipesched::runtime
