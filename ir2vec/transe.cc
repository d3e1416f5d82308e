//===- ir2vec/transe.cc - TransE vocabulary trainer -----------------------===//
#include "mlgo/ir2vec/transe.h"

#include "number_text.h"
#include "parallel.h"
#include "rng.h"
#include "triplet_index.h"

#include "mlgo/ir2vec/entities.h"

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace mlgo::ir2vec {
namespace {

void normalizeRow(float* row, unsigned dimension) {
  double sum = 0;
  for (unsigned d = 0; d < dimension; ++d)
    sum += static_cast<double>(row[d]) * row[d];
  if (sum <= 0)
    return;
  float scale = static_cast<float>(1.0 / std::sqrt(sum));
  for (unsigned d = 0; d < dimension; ++d)
    row[d] *= scale;
}

void normalizeRows(std::vector<float>& rows, unsigned dimension) {
  for (size_t start = 0; start < rows.size(); start += dimension)
    normalizeRow(rows.data() + start, dimension);
}

float l1Distance(const float* h, const float* r, const float* t, unsigned dimension) {
  float sum = 0;
  for (unsigned d = 0; d < dimension; ++d)
    sum += std::fabs(h[d] + r[d] - t[d]);
  return sum;
}

float sign(float x) {
  return x > 0 ? 1.0f : (x < 0 ? -1.0f : 0.0f);
}

Status validateConfig(const TripletSet& data, const TransEConfig& config) {
  MLGO_TRY(data.validate());
  if (data.triplets.empty())
    return makeError(ErrorCode::kInvalidArgument, "no triplets to train on");
  if (data.entities.size() < 2)
    return makeError(ErrorCode::kInvalidArgument, "training needs at least two entities");
  if (config.dimension == 0)
    return makeError(ErrorCode::kInvalidArgument, "the dimension must be positive");
  if (config.epochs == 0)
    return makeError(ErrorCode::kInvalidArgument, "the number of epochs must be positive");
  if (!(config.margin > 0) || !std::isfinite(config.margin))
    return makeError(ErrorCode::kInvalidArgument, "the margin must be positive (got {})",
                     config.margin);
  if (!(config.learningRate > 0) || !std::isfinite(config.learningRate))
    return makeError(ErrorCode::kInvalidArgument, "the learning rate must be positive (got {})",
                     config.learningRate);
  return Status::success();
}

/// One positive triplet's negative sample and hinge outcome.
struct Sample {
  Triplet positive;
  uint32_t negativeHead = 0;
  uint32_t negativeTail = 0;
  float loss = 0; // > 0: the sample contributes updates
};

/// The training state shared by all worker threads.
class Trainer {
public:
  Trainer(const TripletSet& data, const TransEConfig& config, TransEModel& model)
      : data_(data), config_(config), model_(model), index_(data),
        headProbability_(detail::headReplacementProbabilities(data, config.bernoulli)) {
    size_t n = data.triplets.size();
    batches_ = static_cast<unsigned>(std::clamp<size_t>(config.batchesPerEpoch, 1, n));
    batchSize_ = (n + batches_ - 1) / batches_;
    batches_ = static_cast<unsigned>((n + batchSize_ - 1) / batchSize_); // no empty batches
    order_.resize(n);
    samples_.resize(batchSize_);
    signs_.resize(batchSize_ * 2 * model.dimension);
  }

  /// Runs all epochs on `threads` threads (the caller is one of them).
  void run(unsigned threads);

private:
  void beginEpoch();
  void drawSample(size_t position, Sample& sample) const;
  void scoreSamples(unsigned thread);
  void applyUpdates(unsigned thread);
  void finishBatch() noexcept;

  const TripletSet& data_;
  const TransEConfig& config_;
  TransEModel& model_;
  detail::TripletIndex index_;
  std::vector<double> headProbability_; // per relation
  unsigned batches_ = 1;
  size_t batchSize_ = 1;
  unsigned threads_ = 1;

  // Position in the schedule (written only in finishBatch / before start).
  unsigned epoch_ = 0;
  unsigned batch_ = 0;
  size_t batchBegin_ = 0, batchEnd_ = 0;
  std::vector<uint32_t> order_;
  std::vector<Sample> samples_;
  std::vector<int8_t> signs_; // per sample: positive then negative, one per dimension
  double epochLoss_ = 0;
  size_t epochViolations_ = 0;
  std::chrono::steady_clock::time_point epochStart_;
};

void Trainer::beginEpoch() {
  for (size_t i = 0; i < order_.size(); ++i)
    order_[i] = static_cast<uint32_t>(i);
  detail::Rng rng(config_.seed, 0xe90c4u, epoch_);
  rng.shuffle(order_.data(), order_.size());
  epochLoss_ = 0;
  epochViolations_ = 0;
  epochStart_ = std::chrono::steady_clock::now();
}

void Trainer::drawSample(size_t position, Sample& sample) const {
  const Triplet& positive = data_.triplets[order_[position]];
  detail::Rng rng(config_.seed, (uint64_t{epoch_} << 32) | 0x9a11u, position);
  uint32_t entities = static_cast<uint32_t>(data_.entities.size());
  bool replaceHead = rng.unit() < headProbability_[positive.relation];
  Triplet negative = positive;
  for (int attempt = 0; attempt < 16; ++attempt) {
    // Uniform over the other entities.
    auto other = static_cast<uint32_t>(rng.below(entities - 1));
    uint32_t& slot = replaceHead ? negative.head : negative.tail;
    uint32_t original = replaceHead ? positive.head : positive.tail;
    slot = other >= original ? other + 1 : other;
    if (!index_.contains(negative))
      break;
  }
  sample.positive = positive;
  sample.negativeHead = negative.head;
  sample.negativeTail = negative.tail;
  unsigned dim = model_.dimension;
  const float* r = model_.relations.data() + size_t{positive.relation} * dim;
  const float* e = model_.entities.data();
  float positiveDistance =
      l1Distance(e + size_t{positive.head} * dim, r, e + size_t{positive.tail} * dim, dim);
  float negativeDistance =
      l1Distance(e + size_t{negative.head} * dim, r, e + size_t{negative.tail} * dim, dim);
  sample.loss =
      std::max(0.0f, static_cast<float>(config_.margin) + positiveDistance - negativeDistance);
}

void Trainer::scoreSamples(unsigned thread) {
  // Contiguous chunks: neighbouring samples share cache lines.
  size_t count = batchEnd_ - batchBegin_;
  size_t begin = batchBegin_ + count * thread / threads_;
  size_t end = batchBegin_ + count * (thread + 1) / threads_;
  for (size_t p = begin; p < end; ++p)
    drawSample(p, samples_[p - batchBegin_]);
}

void Trainer::applyUpdates(unsigned thread) {
  unsigned dim = model_.dimension;
  unsigned begin = static_cast<unsigned>(uint64_t{dim} * thread / threads_);
  unsigned end = static_cast<unsigned>(uint64_t{dim} * (thread + 1) / threads_);
  float* e = model_.entities.data();
  float* rel = model_.relations.data();
  size_t count = batchEnd_ - batchBegin_;
  // Sub-gradient signs at the batch's starting point.
  for (size_t i = 0; i < count; ++i) {
    const Sample& s = samples_[i];
    if (s.loss <= 0)
      continue;
    const float* r = rel + size_t{s.positive.relation} * dim;
    const float* h = e + size_t{s.positive.head} * dim;
    const float* t = e + size_t{s.positive.tail} * dim;
    const float* h2 = e + size_t{s.negativeHead} * dim;
    const float* t2 = e + size_t{s.negativeTail} * dim;
    int8_t* out = signs_.data() + i * 2 * dim;
    for (unsigned d = begin; d < end; ++d) {
      out[d] = static_cast<int8_t>(sign(h[d] + r[d] - t[d]));
      out[dim + d] = static_cast<int8_t>(sign(h2[d] + r[d] - t2[d]));
    }
  }
  auto lr = static_cast<float>(config_.learningRate);
  bool entities = config_.trainEntities;
  for (size_t i = 0; i < count; ++i) {
    const Sample& s = samples_[i];
    if (s.loss <= 0)
      continue;
    float* r = rel + size_t{s.positive.relation} * dim;
    float* h = e + size_t{s.positive.head} * dim;
    float* t = e + size_t{s.positive.tail} * dim;
    float* h2 = e + size_t{s.negativeHead} * dim;
    float* t2 = e + size_t{s.negativeTail} * dim;
    const int8_t* g = signs_.data() + i * 2 * dim;
    for (unsigned d = begin; d < end; ++d) {
      float gp = lr * g[d], gn = lr * g[dim + d];
      r[d] -= gp - gn;
      if (entities) {
        h[d] -= gp;
        t[d] += gp;
        h2[d] += gn;
        t2[d] -= gn;
      }
    }
  }
}

void Trainer::finishBatch() noexcept {
  for (size_t i = 0; i < batchEnd_ - batchBegin_; ++i) {
    epochLoss_ += samples_[i].loss;
    epochViolations_ += samples_[i].loss > 0;
  }
  if (config_.trainEntities)
    normalizeRows(model_.entities, model_.dimension);
  if (++batch_ == batches_) {
    if (config_.onEpoch) {
      EpochReport report;
      report.epoch = epoch_ + 1;
      report.epochs = config_.epochs;
      report.loss = epochLoss_;
      report.violatingFraction =
          static_cast<double>(epochViolations_) / static_cast<double>(order_.size());
      report.seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - epochStart_).count();
      try {
        config_.onEpoch(report);
      } catch (...) {
        // A reporting callback must not stop training.
      }
    }
    batch_ = 0;
    if (++epoch_ < config_.epochs)
      beginEpoch();
  }
  batchBegin_ = std::min(order_.size(), size_t{batch_} * batchSize_);
  batchEnd_ = std::min(order_.size(), batchBegin_ + batchSize_);
}

void Trainer::run(unsigned threads) {
  epoch_ = 0;
  batch_ = 0;
  beginEpoch();
  batchBegin_ = 0;
  batchEnd_ = std::min(order_.size(), batchSize_);
  std::barrier scored(threads);
  std::barrier applied(threads, [this]() noexcept { finishBatch(); });
  // Workers wait at the gate until the number of threads that really
  // started is known (the work partition depends on it).
  std::mutex gateMutex;
  std::condition_variable gate;
  bool open = false;
  auto loop = [&](unsigned thread) {
    {
      std::unique_lock lock(gateMutex);
      gate.wait(lock, [&] { return open; });
    }
    while (epoch_ < config_.epochs) {
      scoreSamples(thread);
      scored.arrive_and_wait();
      applyUpdates(thread);
      applied.arrive_and_wait();
    }
  };
  std::vector<std::thread> workers;
  for (unsigned t = 1; t < threads; ++t) {
    try {
      workers.emplace_back(loop, t);
    } catch (const std::system_error&) {
      break; // Run with the threads we have.
    }
  }
  threads_ = static_cast<unsigned>(workers.size() + 1);
  for (unsigned missing = threads_; missing < threads; ++missing) {
    scored.arrive_and_drop();
    applied.arrive_and_drop();
  }
  {
    std::lock_guard lock(gateMutex);
    open = true;
  }
  gate.notify_all();
  loop(0);
  for (std::thread& w : workers)
    w.join();
}

} // namespace

double TransEModel::distance(size_t head, size_t relation, size_t tail) const {
  return l1Distance(entities.data() + head * dimension, relations.data() + relation * dimension,
                    entities.data() + tail * dimension, dimension);
}

Result<Vocabulary> TransEModel::toVocabulary(const std::vector<std::string>& names) const {
  if (names != ir2vec::entityNames())
    return makeError(ErrorCode::kInvalidArgument,
                     "the triplets' entities are not LLVM 22's IR2Vec entities ({} given, {} "
                     "expected): cannot write an LLVM vocabulary",
                     names.size(), ir2vec::entityCount());
  std::vector<double> values(entities.size());
  for (size_t i = 0; i < entities.size(); ++i)
    values[i] = detail::floatAsShortDouble(entities[i]);
  return Vocabulary::fromValues(dimension, std::move(values));
}

TransEModel randomTransEModel(size_t entityCount, size_t relationCount, unsigned dimension,
                              uint64_t seed) {
  TransEModel model;
  model.dimension = dimension;
  model.entityCount = entityCount;
  model.relationCount = relationCount;
  double bound = 6.0 / std::sqrt(static_cast<double>(dimension));
  detail::Rng rng(seed, 0x1417u);
  auto fill = [&](std::vector<float>& rows, size_t count) {
    rows.resize(count * dimension);
    for (float& x : rows)
      x = static_cast<float>((2 * rng.unit() - 1) * bound);
    normalizeRows(rows, dimension);
  };
  fill(model.entities, entityCount);
  fill(model.relations, relationCount);
  return model;
}

Result<TransEModel> trainTransE(const TripletSet& data, const TransEConfig& config) {
  MLGO_TRY(validateConfig(data, config));
  // Duplicates (llvm-ir2vec's output has them) would only weight triplets.
  TripletSet unique{data.entities, data.relations, data.triplets};
  std::sort(unique.triplets.begin(), unique.triplets.end());
  unique.triplets.erase(std::unique(unique.triplets.begin(), unique.triplets.end()),
                        unique.triplets.end());
  TransEModel model =
      randomTransEModel(data.entities.size(), data.relations.size(), config.dimension, config.seed);
  Trainer trainer(unique, config, model);
  trainer.run(detail::workerCount(config.threads, config.dimension));
  normalizeRows(model.entities, model.dimension);
  return model;
}

} // namespace mlgo::ir2vec
