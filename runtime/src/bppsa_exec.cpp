#include "bppsa_exec.h"

#include "kernels.h"
#include "mlp_stage.h"

#include <stdexcept>
#include <string>

namespace pipesched::runtime {

using scheduling::BppsaJob;
using scheduling::BppsaJobKind;
using scheduling::Product;

std::vector<float> stageJacobian(const pipesched_stage_config &c, const float *params,
                                 int64_t rows, const float *input) {
  const int64_t H = c.hidden, L = c.layers, block = rows * H;
  const int64_t layerParams = H * H + H;
  // Pre-activations and their GELU derivatives, layer by layer, with the
  // forward's own kernels (the same z as the forward computes).
  const size_t n = static_cast<size_t>(block);
  std::vector<float> z(n), a(input, input + block), next(n);
  std::vector<float> ones(n, 1.0f);
  std::vector<std::vector<float>> slope(static_cast<size_t>(L), std::vector<float>(n));
  for (int64_t l = 0; l < L; ++l) {
    const float *w = params + l * layerParams;
    kernels::linearForward(a.data(), w, w + H * H, z.data(), rows, H, H);
    kernels::geluBackward(z.data(), ones.data(), slope[size_t(l)].data(), block);
    kernels::geluForward(z.data(), next.data(), block);
    a.swap(next);
  }
  // J = M_0 ... M_{L-1}, composed from the last layer backwards in double.
  std::vector<float> jac(static_cast<size_t>(rows * H * H));
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
    for (int64_t k = 0; k < H * H; ++k)
      jac[size_t(r * H * H + k)] = float(acc[size_t(k)]);
  }
  return jac;
}

namespace {

// C = B A per row (the scan's A <> B): A a vector (JV) or a matrix (JJ).
std::vector<float> combine(Product product, const std::vector<float> &a,
                           const std::vector<float> &b, int64_t rows, int64_t H) {
  const int64_t cols = product == Product::JV ? 1 : H;
  std::vector<float> c(static_cast<size_t>(rows * H * cols));
  for (int64_t r = 0; r < rows; ++r) {
    const float *A = a.data() + r * H * cols, *B = b.data() + r * H * H;
    float *C = c.data() + r * H * cols;
    for (int64_t i = 0; i < H; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        double sum = 0; // k ascending, in double
        for (int64_t k = 0; k < H; ++k)
          sum += double(B[i * H + k]) * A[k * cols + j];
        C[i * cols + j] = float(sum);
      }
  }
  return c;
}

} // namespace

BppsaBackward runBppsa(const scheduling::BppsaShape &shape,
                       const scheduling::BppsaGraph &graph, pipesched_stage_config c,
                       const std::vector<std::vector<float>> &params,
                       const std::vector<std::vector<float>> &inputs,
                       const std::vector<float> &lossGradient) {
  if (shape.form != scheduling::JacobianForm::Dense)
    throw std::invalid_argument("runBppsa: only dense Jacobians are executed so far");
  const int64_t S = shape.stages, H = c.hidden, rows = shape.rows;
  const pipesched_stage_api *api = builtinMlpApi();
  BppsaBackward out;
  out.outputGradients.assign(size_t(S), {});
  out.weightGradients.assign(size_t(S), {});
  std::vector<std::vector<float>> value(graph.jobs.size());
  std::vector<float> ws;
  for (size_t i = 0; i < graph.jobs.size(); ++i) {
    const BppsaJob &j = graph.jobs[i];
    if (j.microbatch != 0)
      break;
    switch (j.kind) {
    case BppsaJobKind::LossGradient:
      value[i] = lossGradient;
      break;
    case BppsaJobKind::Jacobian:
      c.stage = int32_t(j.stage);
      value[i] = stageJacobian(c, params[size_t(j.stage)].data(), rows,
                               inputs[size_t(j.stage)].data());
      break;
    case BppsaJobKind::UpSweep:
    case BppsaJobKind::DownSweep:
      value[i] = combine(j.product, value[j.inputs[0]], value[j.inputs[1]], rows, H);
      break;
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
  }
  return out;
}

} // namespace pipesched::runtime
