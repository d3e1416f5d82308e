// Template container library: small-buffer vector, ring buffer, sorted flat map and an LRU cache.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace demo {

template <typename T, std::size_t N>
class SmallVector {
 public:
  SmallVector() = default;
  SmallVector(const SmallVector &other) {
    for (const T &v : other) push_back(v);
  }
  SmallVector &operator=(const SmallVector &other) {
    if (this != &other) {
      clear();
      for (const T &v : other) push_back(v);
    }
    return *this;
  }
  ~SmallVector() {
    clear();
    if (heap_) ::operator delete(heap_);
  }

  void push_back(const T &v) {
    if (size_ == capacity()) grow(capacity() * 2);
    new (data() + size_) T(v);
    ++size_;
  }
  void pop_back() { data()[--size_].~T(); }
  void clear() {
    for (std::size_t i = 0; i < size_; ++i) data()[i].~T();
    size_ = 0;
  }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool on_heap() const { return heap_ != nullptr; }
  T &operator[](std::size_t i) { return data()[i]; }
  const T &operator[](std::size_t i) const { return data()[i]; }
  T *begin() { return data(); }
  T *end() { return data() + size_; }
  const T *begin() const { return data(); }
  const T *end() const { return data() + size_; }

 private:
  std::size_t capacity() const { return heap_ ? heap_cap_ : N; }
  T *data() { return heap_ ? heap_ : reinterpret_cast<T *>(inline_); }
  const T *data() const { return heap_ ? heap_ : reinterpret_cast<const T *>(inline_); }
  void grow(std::size_t cap) {
    T *fresh = static_cast<T *>(::operator new(cap * sizeof(T)));
    for (std::size_t i = 0; i < size_; ++i) {
      new (fresh + i) T(std::move(data()[i]));
      data()[i].~T();
    }
    if (heap_) ::operator delete(heap_);
    heap_ = fresh;
    heap_cap_ = cap;
  }

  alignas(T) unsigned char inline_[N * sizeof(T)];
  T *heap_ = nullptr;
  std::size_t heap_cap_ = 0;
  std::size_t size_ = 0;
};

template <typename T>
class RingBuffer {
 public:
  explicit RingBuffer(std::size_t cap) : buf_(cap) {}
  bool push(const T &v) {
    if (count_ == buf_.size()) return false;
    buf_[(head_ + count_) % buf_.size()] = v;
    ++count_;
    return true;
  }
  void push_overwrite(const T &v) {
    if (count_ == buf_.size()) {
      buf_[head_] = v;
      head_ = (head_ + 1) % buf_.size();
    } else {
      push(v);
    }
  }
  bool pop(T &out) {
    if (!count_) return false;
    out = buf_[head_];
    head_ = (head_ + 1) % buf_.size();
    --count_;
    return true;
  }
  std::size_t size() const { return count_; }
  const T &at(std::size_t i) const { return buf_[(head_ + i) % buf_.size()]; }

 private:
  std::vector<T> buf_;
  std::size_t head_ = 0;
  std::size_t count_ = 0;
};

template <typename K, typename V, typename Less = std::less<K>>
class FlatMap {
 public:
  V &operator[](const K &key) {
    auto it = lower(key);
    if (it == items_.end() || less_(key, it->first)) it = items_.insert(it, {key, V{}});
    return it->second;
  }
  const V *find(const K &key) const {
    auto it = std::lower_bound(items_.begin(), items_.end(), key,
                               [this](const std::pair<K, V> &a, const K &k) { return less_(a.first, k); });
    return it != items_.end() && !less_(key, it->first) ? &it->second : nullptr;
  }
  bool erase(const K &key) {
    auto it = lower(key);
    if (it == items_.end() || less_(key, it->first)) return false;
    items_.erase(it);
    return true;
  }
  std::size_t size() const { return items_.size(); }
  template <typename F>
  void for_each(F f) const {
    for (const auto &kv : items_) f(kv.first, kv.second);
  }

 private:
  typename std::vector<std::pair<K, V>>::iterator lower(const K &key) {
    return std::lower_bound(items_.begin(), items_.end(), key,
                            [this](const std::pair<K, V> &a, const K &k) { return less_(a.first, k); });
  }
  std::vector<std::pair<K, V>> items_;
  Less less_;
};

template <typename K, typename V>
class LruCache {
 public:
  explicit LruCache(std::size_t cap) : cap_(cap) {}
  bool get(const K &key, V &out) {
    auto it = index_.find(key);
    if (it == index_.end()) {
      ++misses_;
      return false;
    }
    order_.splice(order_.begin(), order_, it->second);
    out = it->second->second;
    ++hits_;
    return true;
  }
  void put(const K &key, const V &value) {
    auto it = index_.find(key);
    if (it != index_.end()) {
      it->second->second = value;
      order_.splice(order_.begin(), order_, it->second);
      return;
    }
    if (order_.size() == cap_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    order_.emplace_front(key, value);
    index_[key] = order_.begin();
  }
  std::size_t hits() const { return hits_; }
  std::size_t misses() const { return misses_; }

 private:
  std::size_t cap_;
  std::list<std::pair<K, V>> order_;
  std::unordered_map<K, typename std::list<std::pair<K, V>>::iterator> index_;
  std::size_t hits_ = 0, misses_ = 0;
};

inline std::uint32_t xorshift(std::uint32_t &s) {
  s ^= s << 13;
  s ^= s >> 17;
  s ^= s << 5;
  return s;
}

template <typename Container>
std::uint64_t fold_hash(const Container &c) {
  std::uint64_t h = 1469598103934665603ull;
  for (const auto &v : c) h = (h ^ static_cast<std::uint64_t>(v)) * 1099511628211ull;
  return h;
}

}  // namespace demo

// Exercises SmallVector across the inline/heap boundary and a moving-average RingBuffer.
extern "C" std::uint64_t containers_vector_ring(std::uint32_t seed, int n) {
  demo::SmallVector<int, 8> small;
  demo::SmallVector<std::string, 4> names;
  demo::RingBuffer<int> window(16);
  std::uint32_t s = seed | 1u;
  std::int64_t window_sum = 0;
  std::uint64_t acc = 0;
  for (int i = 0; i < n; ++i) {
    int v = static_cast<int>(demo::xorshift(s) % 1000u);
    small.push_back(v);
    if (i % 5 == 0) names.push_back("item" + std::to_string(v));
    int dropped = 0;
    if (window.size() == 16 && window.pop(dropped)) window_sum -= dropped;
    window.push(v);
    window_sum += v;
    acc += static_cast<std::uint64_t>(window_sum) / window.size();
    if (small.size() > 100) {
      demo::SmallVector<int, 8> copy = small;
      acc ^= demo::fold_hash(copy);
      small.clear();
    }
  }
  for (const auto &name : names) acc = acc * 31u + name.size();
  return acc ^ (small.on_heap() ? 1u : 0u);
}

// Word-count FlatMap plus an LRU cache over Fibonacci-like keys; returns hits*1e6 + misses.
extern "C" std::uint64_t containers_map_cache(std::uint32_t seed, int n, int cache_size) {
  if (cache_size <= 0) return 0;
  demo::FlatMap<std::string, int> counts;
  demo::LruCache<std::uint32_t, std::uint64_t> cache(static_cast<std::size_t>(cache_size));
  std::uint32_t s = seed | 1u;
  for (int i = 0; i < n; ++i) {
    std::uint32_t r = demo::xorshift(s);
    counts[std::string(1, static_cast<char>('a' + r % 26u)) + static_cast<char>('a' + (r >> 8) % 4u)]++;
    std::uint32_t key = (r >> 16) % 64u;
    std::uint64_t value = 0;
    if (!cache.get(key, value)) cache.put(key, static_cast<std::uint64_t>(key) * key + 7u);
    if (i % 17 == 0) counts.erase("zz");
  }
  std::uint64_t total = 0;
  counts.for_each([&total](const std::string &k, int v) { total += k[0] * static_cast<std::uint64_t>(v); });
  const int *aa = counts.find("aa");
  return cache.hits() * 1000000u + cache.misses() + (total % 1000u) + (aa ? static_cast<std::uint64_t>(*aa) : 0u);
}
