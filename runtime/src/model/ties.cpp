#include "model/ties.h"

#include "model/kernels.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace pipesched::runtime {

ParamTensor tiedTensor(const Model &model, const std::vector<int> &group, int stage) {
  const int lowest = *std::min_element(group.begin(), group.end());
  const ParamTensor *found = nullptr;
  std::vector<ParamTensor> layout = model.paramLayout(stage);
  for (const ParamTensor &t : layout) {
    if (t.kind != ParamTensor::Kind::Weight)
      continue;
    if (!found || (stage == lowest ? t.layer < found->layer : t.layer > found->layer))
      found = &t;
  }
  if (!found)
    throw std::runtime_error(model.name() + ": stage " + std::to_string(stage) +
                             " has no weight matrix the runtime knows of, so it cannot "
                             "tie weights (tied weights need the built-in MLP)");
  return *found;
}

void checkTiesSupported(const Model &model, const Ties &ties) {
  for (const std::vector<int> &group : ties) {
    int64_t size = -1;
    for (int s : group) {
      ParamTensor t = tiedTensor(model, group, s);
      if (size >= 0 && t.size != size)
        throw std::runtime_error("the tied tensors of stages " + std::to_string(group[0]) +
                                 " and " + std::to_string(s) + " differ in size");
      size = t.size;
    }
  }
}

void initTiedParams(const Model &model, const Ties &ties, const std::vector<int> &tieOf,
                    int stage, float *params) {
  model.init(stage, params);
  const int tie = stage < int(tieOf.size()) ? tieOf[size_t(stage)] : -1;
  if (tie < 0)
    return;
  const std::vector<int> &group = ties[size_t(tie)];
  const int lowest = *std::min_element(group.begin(), group.end());
  if (stage == lowest)
    return;
  std::vector<float> first(size_t(model.numParams(lowest)));
  model.init(lowest, first.data());
  ParamTensor from = tiedTensor(model, group, lowest), to = tiedTensor(model, group, stage);
  std::copy_n(first.data() + from.offset, size_t(from.size), params + to.offset);
}

std::vector<int> tieOfStages(int stages, const Ties &ties) {
  std::vector<int> tieOf(size_t(stages), -1);
  for (size_t g = 0; g < ties.size(); ++g)
    for (int s : ties[g])
      tieOf[size_t(s)] = int(g);
  return tieOf;
}

void sumTiedGradients(const Model &model, const Ties &ties,
                      std::vector<std::vector<float>> &grads) {
  std::vector<float> sum;
  for (const std::vector<int> &group : ties) {
    ParamTensor first = tiedTensor(model, group, group[0]);
    sum.assign(grads[size_t(group[0])].begin() + first.offset,
               grads[size_t(group[0])].begin() + first.offset + first.size);
    for (size_t k = 1; k < group.size(); ++k) {
      ParamTensor t = tiedTensor(model, group, group[k]);
      kernels::add(sum.data(), grads[size_t(group[k])].data() + t.offset, t.size);
    }
    const int lowest = *std::min_element(group.begin(), group.end());
    for (int s : group) {
      ParamTensor t = tiedTensor(model, group, s);
      float *g = grads[size_t(s)].data() + t.offset;
      if (s == lowest)
        std::copy(sum.begin(), sum.end(), g);
      else
        std::fill_n(g, size_t(t.size), 0.0f);
    }
  }
}

void shareTiedParams(const Model &model, const Ties &ties,
                     std::vector<std::vector<float>> &params) {
  for (const std::vector<int> &group : ties) {
    const int lowest = *std::min_element(group.begin(), group.end());
    ParamTensor from = tiedTensor(model, group, lowest);
    for (int s : group) {
      if (s == lowest)
        continue;
      ParamTensor to = tiedTensor(model, group, s);
      std::copy_n(params[size_t(lowest)].data() + from.offset, size_t(from.size),
                  params[size_t(s)].data() + to.offset);
    }
  }
}

} // namespace pipesched::runtime
