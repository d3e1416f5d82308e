// Discrete-event simulation of a queueing network with virtual event/station classes and statistics.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace sim {

class Random {
 public:
  explicit Random(std::uint64_t seed) : state_(seed ? seed : 0x853c49e6748fea9bull) {}
  std::uint64_t next() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return state_ * 2685821657736338717ull;
  }
  double uniform() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
  double exponential(double rate) { return -std::log(1.0 - uniform()) / rate; }
  std::size_t pick(std::size_t n) { return static_cast<std::size_t>(next() % n); }

 private:
  std::uint64_t state_;
};

struct Customer {
  int id;
  double created;
  double service_total = 0;
  int hops = 0;
};

class Simulator;

class Event {
 public:
  Event(double time, long seq) : time_(time), seq_(seq) {}
  virtual ~Event() = default;
  virtual void fire(Simulator &sim) = 0;
  virtual const char *kind() const = 0;
  double time() const { return time_; }
  long seq() const { return seq_; }

 private:
  double time_;
  long seq_;
};

struct EventOrder {
  bool operator()(const std::unique_ptr<Event> &a, const std::unique_ptr<Event> &b) const {
    if (a->time() != b->time()) return a->time() > b->time();
    return a->seq() > b->seq();
  }
};

class Tally {
 public:
  void add(double x) {
    ++n_;
    double d = x - mean_;
    mean_ += d / static_cast<double>(n_);
    m2_ += d * (x - mean_);
    if (x > max_) max_ = x;
  }
  long count() const { return n_; }
  double mean() const { return mean_; }
  double variance() const { return n_ > 1 ? m2_ / static_cast<double>(n_ - 1) : 0.0; }
  double max() const { return max_; }

 private:
  long n_ = 0;
  double mean_ = 0, m2_ = 0, max_ = 0;
};

class Station {
 public:
  Station(std::string name, int servers, double rate) : name_(std::move(name)), servers_(servers), rate_(rate) {}
  virtual ~Station() = default;
  void arrive(Simulator &sim, Customer c);
  void depart(Simulator &sim, Customer c);
  virtual Station *route(Random &rng) = 0;
  const Tally &waits() const { return waits_; }
  const std::string &name() const { return name_; }
  double busy_time() const { return busy_time_; }

 protected:
  virtual double service_time(Random &rng) { return rng.exponential(rate_); }

 private:
  void start_service(Simulator &sim, Customer c, double queued_since);

  std::string name_;
  int servers_;
  double rate_;
  int busy_ = 0;
  std::deque<std::pair<Customer, double>> queue_;
  Tally waits_;
  double busy_time_ = 0;
};

class Simulator {
 public:
  explicit Simulator(std::uint64_t seed) : rng_(seed) {}
  template <typename E, typename... Args>
  void schedule(double delay, Args &&...args) {
    events_.push_back(std::make_unique<E>(now_ + delay, seq_++, std::forward<Args>(args)...));
    std::push_heap(events_.begin(), events_.end(), EventOrder());
  }
  bool step() {
    if (events_.empty()) return false;
    std::pop_heap(events_.begin(), events_.end(), EventOrder());
    std::unique_ptr<Event> e = std::move(events_.back());
    events_.pop_back();
    now_ = e->time();
    e->fire(*this);
    ++fired_;
    return true;
  }
  double now() const { return now_; }
  Random &rng() { return rng_; }
  long fired() const { return fired_; }
  void finish(const Customer &c) {
    sojourn_.add(now_ - c.created);
    hops_.add(c.hops);
  }
  const Tally &sojourn() const { return sojourn_; }
  const Tally &hops() const { return hops_; }

 private:
  std::vector<std::unique_ptr<Event>> events_;  // binary heap ordered by EventOrder
  double now_ = 0;
  long seq_ = 0;
  long fired_ = 0;
  Random rng_;
  Tally sojourn_, hops_;
};

class DepartureEvent : public Event {
 public:
  DepartureEvent(double t, long s, Station *st, Customer c) : Event(t, s), station_(st), customer_(c) {}
  void fire(Simulator &sim) override { station_->depart(sim, customer_); }
  const char *kind() const override { return "departure"; }

 private:
  Station *station_;
  Customer customer_;
};

class ArrivalEvent : public Event {
 public:
  ArrivalEvent(double t, long s, Station *st, Customer c) : Event(t, s), station_(st), customer_(c) {}
  void fire(Simulator &sim) override { station_->arrive(sim, customer_); }
  const char *kind() const override { return "arrival"; }

 private:
  Station *station_;
  Customer customer_;
};

class SourceEvent : public Event {
 public:
  SourceEvent(double t, long s, Station *entry, double rate, int remaining, int next_id)
      : Event(t, s), entry_(entry), rate_(rate), remaining_(remaining), next_id_(next_id) {}
  void fire(Simulator &sim) override {
    Customer c{next_id_, sim.now()};
    sim.schedule<ArrivalEvent>(0.0, entry_, c);
    if (remaining_ > 1)
      sim.schedule<SourceEvent>(sim.rng().exponential(rate_), entry_, rate_, remaining_ - 1, next_id_ + 1);
  }
  const char *kind() const override { return "source"; }

 private:
  Station *entry_;
  double rate_;
  int remaining_;
  int next_id_;
};

void Station::arrive(Simulator &sim, Customer c) {
  if (busy_ < servers_) {
    start_service(sim, c, sim.now());
  } else {
    queue_.emplace_back(c, sim.now());
  }
}

void Station::start_service(Simulator &sim, Customer c, double queued_since) {
  ++busy_;
  waits_.add(sim.now() - queued_since);
  double st = service_time(sim.rng());
  busy_time_ += st;
  c.service_total += st;
  sim.schedule<DepartureEvent>(st, this, c);
}

void Station::depart(Simulator &sim, Customer c) {
  --busy_;
  c.hops++;
  if (!queue_.empty()) {
    auto next = queue_.front();
    queue_.pop_front();
    start_service(sim, next.first, next.second);
  }
  Station *to = route(sim.rng());
  if (to)
    sim.schedule<ArrivalEvent>(0.0, to, c);
  else
    sim.finish(c);
}

class SinkStation : public Station {
 public:
  using Station::Station;
  Station *route(Random &) override { return nullptr; }
};

class ProbabilisticStation : public Station {
 public:
  ProbabilisticStation(std::string name, int servers, double rate) : Station(std::move(name), servers, rate) {}
  void add_route(Station *to, double p) { routes_.push_back({to, p}); }
  Station *route(Random &rng) override {
    double u = rng.uniform(), acc = 0;
    for (const auto &r : routes_) {
      acc += r.second;
      if (u < acc) return r.first;
    }
    return nullptr;
  }

 private:
  std::vector<std::pair<Station *, double>> routes_;
};

class DeterministicStation : public ProbabilisticStation {
 public:
  DeterministicStation(std::string name, int servers, double fixed)
      : ProbabilisticStation(std::move(name), servers, 1.0 / fixed), fixed_(fixed) {}

 protected:
  double service_time(Random &) override { return fixed_; }

 private:
  double fixed_;
};

}  // namespace sim

// Simulates n customers through triage -> (fast | slow with rework) -> checkout and returns the mean
// sojourn time; *events receives the number of fired events and *max_wait the worst queue wait.
extern "C" double event_sim_run(std::uint64_t seed, int customers, double arrival_rate, long *events, double *max_wait) {
  using namespace sim;
  Simulator s(seed);
  SinkStation exit_desk("checkout", 2, 3.0);
  ProbabilisticStation slow("slow", 2, 0.8);
  DeterministicStation fast("fast", 1, 0.4);
  ProbabilisticStation triage("triage", 1, 4.0);
  triage.add_route(&fast, 0.6);
  triage.add_route(&slow, 0.4);
  fast.add_route(&exit_desk, 1.0);
  slow.add_route(&triage, 0.1);
  slow.add_route(&exit_desk, 0.9);
  if (customers > 0) s.schedule<SourceEvent>(0.0, &triage, arrival_rate, customers, 0);
  while (s.step()) {
  }
  *events = s.fired();
  double worst = 0;
  const Station *all[] = {&triage, &fast, &slow, &exit_desk};
  for (const Station *st : all)
    if (st->waits().max() > worst) worst = st->waits().max();
  *max_wait = worst;
  return s.sojourn().mean();
}

// Single M/M/1 queue; returns the measured mean wait divided by the analytic value rho/(mu-lambda).
extern "C" double event_sim_mm1_ratio(std::uint64_t seed, int customers, double lambda, double mu) {
  using namespace sim;
  if (lambda <= 0 || mu <= lambda || customers <= 0) return -1;
  Simulator s(seed);
  SinkStation server("server", 1, mu);
  s.schedule<SourceEvent>(0.0, &server, lambda, customers, 0);
  while (s.step()) {
  }
  double analytic = (lambda / mu) / (mu - lambda);
  return server.waits().mean() / analytic;
}
