// Limit order book and matching engine: price-time priority, market/limit/IOC orders, cancels, trade statistics.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <list>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace market {
namespace {

enum class Side { Buy, Sell };
enum class Kind { Limit, Market, ImmediateOrCancel };

struct Order {
  std::uint64_t id;
  Side side;
  Kind kind;
  std::int64_t price;  // ticks; ignored for market orders
  std::int64_t qty;
  std::uint32_t trader;
};

struct Trade {
  std::uint64_t buy_id, sell_id;
  std::int64_t price, qty;
};

struct Level {
  std::list<Order> queue;
  std::int64_t total = 0;
};

class Book {
 public:
  std::vector<Trade> submit(Order o) {
    std::vector<Trade> trades;
    if (o.qty <= 0) return trades;
    if (o.side == Side::Buy)
      match(o, asks_, trades, [](std::int64_t level, std::int64_t limit) { return level <= limit; });
    else
      match(o, bids_, trades, [](std::int64_t level, std::int64_t limit) { return level >= limit; });
    if (o.qty > 0 && o.kind == Kind::Limit) rest(o);
    return trades;
  }

  bool cancel(std::uint64_t id) {
    auto it = index_.find(id);
    if (it == index_.end()) return false;
    Locator loc = it->second;
    if (loc.side == Side::Buy)
      erase_from(bids_, loc);
    else
      erase_from(asks_, loc);
    index_.erase(it);
    return true;
  }

  std::int64_t best_bid() const { return bids_.empty() ? 0 : bids_.begin()->first; }
  std::int64_t best_ask() const { return asks_.empty() ? 0 : asks_.begin()->first; }
  std::size_t resting() const { return index_.size(); }
  std::int64_t depth(Side side, int levels) const {
    std::int64_t total = 0;
    int n = 0;
    if (side == Side::Buy) {
      for (auto it = bids_.begin(); it != bids_.end() && n < levels; ++it, ++n) total += it->second.total;
    } else {
      for (auto it = asks_.begin(); it != asks_.end() && n < levels; ++it, ++n) total += it->second.total;
    }
    return total;
  }

 private:
  using Bids = std::map<std::int64_t, Level, std::greater<std::int64_t>>;
  using Asks = std::map<std::int64_t, Level, std::less<std::int64_t>>;
  struct Locator {
    Side side;
    std::int64_t price;
    std::list<Order>::iterator pos;
  };

  template <typename Levels, typename Crosses>
  void match(Order &o, Levels &levels, std::vector<Trade> &trades, Crosses crosses) {
    while (o.qty > 0 && !levels.empty()) {
      auto lvl = levels.begin();
      if (o.kind != Kind::Market && !crosses(lvl->first, o.price)) break;
      Level &level = lvl->second;
      while (o.qty > 0 && !level.queue.empty()) {
        Order &resting = level.queue.front();
        std::int64_t q = o.qty < resting.qty ? o.qty : resting.qty;
        bool buy = o.side == Side::Buy;
        trades.push_back({buy ? o.id : resting.id, buy ? resting.id : o.id, lvl->first, q});
        o.qty -= q;
        resting.qty -= q;
        level.total -= q;
        if (resting.qty == 0) {
          index_.erase(resting.id);
          level.queue.pop_front();
        }
      }
      if (level.queue.empty()) levels.erase(lvl);
    }
  }

  void rest(const Order &o) {
    if (o.side == Side::Buy)
      add_to(bids_, o);
    else
      add_to(asks_, o);
  }

  template <typename Levels>
  void add_to(Levels &levels, const Order &o) {
    Level &level = levels[o.price];
    level.queue.push_back(o);
    level.total += o.qty;
    index_[o.id] = Locator{o.side, o.price, std::prev(level.queue.end())};
  }

  template <typename Levels>
  void erase_from(Levels &levels, const Locator &loc) {
    auto lvl = levels.find(loc.price);
    if (lvl == levels.end()) return;
    lvl->second.total -= loc.pos->qty;
    lvl->second.queue.erase(loc.pos);
    if (lvl->second.queue.empty()) levels.erase(lvl);
  }

  Bids bids_;
  Asks asks_;
  std::unordered_map<std::uint64_t, Locator> index_;
};

class Stats {
 public:
  void record(const Trade &t) {
    ++count_;
    volume_ += t.qty;
    notional_ += t.price * t.qty;
    if (t.price > high_) high_ = t.price;
    if (low_ == 0 || t.price < low_) low_ = t.price;
  }
  long count() const { return count_; }
  std::int64_t volume() const { return volume_; }
  double vwap() const { return volume_ ? static_cast<double>(notional_) / static_cast<double>(volume_) : 0.0; }
  std::int64_t high() const { return high_; }
  std::int64_t low() const { return low_; }

 private:
  long count_ = 0;
  std::int64_t volume_ = 0, notional_ = 0, high_ = 0, low_ = 0;
};

std::uint64_t next(std::uint64_t &s) {
  s += 0x9e3779b97f4a7c15ull;
  std::uint64_t z = s;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace
}  // namespace market

// Streams n random orders (limit near a drifting mid, some market/IOC, some cancels) through the
// book. Returns the VWAP; writes trade count, volume and resting orders into out[0..2].
extern "C" double order_book_simulate(std::uint64_t seed, int n, std::int64_t out[3]) {
  using namespace market;
  Book book;
  Stats stats;
  std::uint64_t s = seed;
  std::int64_t mid = 10000;
  std::vector<std::uint64_t> live_ids;
  for (int i = 0; i < n; ++i) {
    std::uint64_t r = next(s);
    if (r % 97u == 0) mid += (r >> 8) % 2u ? 5 : -5;
    if (r % 7u == 0 && !live_ids.empty()) {
      std::size_t k = static_cast<std::size_t>((r >> 16) % live_ids.size());
      book.cancel(live_ids[k]);
      live_ids[k] = live_ids.back();
      live_ids.pop_back();
      continue;
    }
    Order o;
    o.id = static_cast<std::uint64_t>(i) + 1;
    o.side = (r >> 3) & 1u ? Side::Buy : Side::Sell;
    unsigned kind = static_cast<unsigned>((r >> 5) % 20u);
    o.kind = kind == 0 ? Kind::Market : kind == 1 ? Kind::ImmediateOrCancel : Kind::Limit;
    std::int64_t offset = static_cast<std::int64_t>((r >> 10) % 20u) - 8;
    o.price = o.side == Side::Buy ? mid - offset : mid + offset;
    o.qty = 1 + static_cast<std::int64_t>((r >> 24) % 100u);
    o.trader = static_cast<std::uint32_t>((r >> 40) % 50u);
    for (const Trade &t : book.submit(o)) stats.record(t);
    if (o.kind == Kind::Limit) live_ids.push_back(o.id);
  }
  out[0] = stats.count();
  out[1] = stats.volume();
  out[2] = static_cast<std::int64_t>(book.resting());
  return stats.vwap();
}

// Builds a deterministic ladder, sweeps it with a market order and reports the spread after
// each of k partial sweeps, summed. Exercises depth queries and level removal.
extern "C" std::int64_t order_book_sweep(int levels, int k) {
  using namespace market;
  Book book;
  std::uint64_t id = 1;
  for (int i = 0; i < levels; ++i) {
    book.submit(Order{id++, Side::Sell, Kind::Limit, 1000 + i, 10 + i % 3, 1});
    book.submit(Order{id++, Side::Buy, Kind::Limit, 999 - i, 10 + i % 5, 2});
  }
  std::int64_t spreads = 0;
  for (int j = 0; j < k; ++j) {
    book.submit(Order{id++, j % 2 ? Side::Buy : Side::Sell, Kind::Market, 0, 25, 3});
    std::int64_t bid = book.best_bid(), ask = book.best_ask();
    spreads += (bid && ask) ? ask - bid : -1;
    spreads += book.depth(Side::Buy, 3) - book.depth(Side::Sell, 3);
  }
  return spreads;
}
