// Order-statistic AVL tree template: insert, erase, rank/select, range counts and an in-order iterator.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace avl {
namespace {

template <typename K, typename V, typename Less = std::less<K>>
class Tree {
  struct Node {
    K key;
    V value;
    Node *left = nullptr, *right = nullptr;
    int height = 1;
    std::size_t size = 1;
    Node(const K &k, const V &v) : key(k), value(v) {}
  };

 public:
  Tree() = default;
  Tree(const Tree &) = delete;
  Tree &operator=(const Tree &) = delete;
  ~Tree() { destroy(root_); }

  bool insert(const K &k, const V &v) {
    bool added = false;
    root_ = insert(root_, k, v, added);
    return added;
  }
  bool erase(const K &k) {
    bool removed = false;
    root_ = erase(root_, k, removed);
    return removed;
  }
  const V *find(const K &k) const {
    Node *n = root_;
    while (n) {
      if (less_(k, n->key))
        n = n->left;
      else if (less_(n->key, k))
        n = n->right;
      else
        return &n->value;
    }
    return nullptr;
  }
  std::size_t size() const { return sz(root_); }
  int height() const { return ht(root_); }

  // Number of keys strictly less than k.
  std::size_t rank(const K &k) const {
    std::size_t r = 0;
    for (Node *n = root_; n;) {
      if (less_(n->key, k)) {
        r += sz(n->left) + 1;
        n = n->right;
      } else {
        n = n->left;
      }
    }
    return r;
  }
  // The i-th smallest key (0-based); i must be < size().
  const K &select(std::size_t i) const {
    Node *n = root_;
    for (;;) {
      std::size_t l = sz(n->left);
      if (i < l) {
        n = n->left;
      } else if (i == l) {
        return n->key;
      } else {
        i -= l + 1;
        n = n->right;
      }
    }
  }
  std::size_t count_range(const K &lo, const K &hi) const {
    if (less_(hi, lo)) return 0;
    std::size_t upto = rank(hi) + (find(hi) ? 1 : 0);
    return upto - rank(lo);
  }
  bool check() const {
    bool ok = true;
    verify(root_, ok);
    return ok;
  }

  class Iterator {
   public:
    explicit Iterator(Node *root) { push_left(root); }
    bool done() const { return stack_.empty(); }
    const K &key() const { return stack_.back()->key; }
    const V &value() const { return stack_.back()->value; }
    void next() {
      Node *n = stack_.back();
      stack_.pop_back();
      push_left(n->right);
    }

   private:
    void push_left(Node *n) {
      for (; n; n = n->left) stack_.push_back(n);
    }
    std::vector<Node *> stack_;
  };
  Iterator begin() const { return Iterator(root_); }

 private:
  static int ht(const Node *n) { return n ? n->height : 0; }
  static std::size_t sz(const Node *n) { return n ? n->size : 0; }
  static void update(Node *n) {
    int hl = ht(n->left), hr = ht(n->right);
    n->height = 1 + (hl > hr ? hl : hr);
    n->size = 1 + sz(n->left) + sz(n->right);
  }
  static Node *rotate_right(Node *y) {
    Node *x = y->left;
    y->left = x->right;
    x->right = y;
    update(y);
    update(x);
    return x;
  }
  static Node *rotate_left(Node *x) {
    Node *y = x->right;
    x->right = y->left;
    y->left = x;
    update(x);
    update(y);
    return y;
  }
  static Node *rebalance(Node *n) {
    update(n);
    int bal = ht(n->left) - ht(n->right);
    if (bal > 1) {
      if (ht(n->left->left) < ht(n->left->right)) n->left = rotate_left(n->left);
      return rotate_right(n);
    }
    if (bal < -1) {
      if (ht(n->right->right) < ht(n->right->left)) n->right = rotate_right(n->right);
      return rotate_left(n);
    }
    return n;
  }
  Node *insert(Node *n, const K &k, const V &v, bool &added) {
    if (!n) {
      added = true;
      return new Node(k, v);
    }
    if (less_(k, n->key))
      n->left = insert(n->left, k, v, added);
    else if (less_(n->key, k))
      n->right = insert(n->right, k, v, added);
    else
      n->value = v;
    return rebalance(n);
  }
  static Node *detach_min(Node *n, Node *&min) {
    if (!n->left) {
      min = n;
      return n->right;
    }
    n->left = detach_min(n->left, min);
    return rebalance(n);
  }
  Node *erase(Node *n, const K &k, bool &removed) {
    if (!n) return nullptr;
    if (less_(k, n->key)) {
      n->left = erase(n->left, k, removed);
    } else if (less_(n->key, k)) {
      n->right = erase(n->right, k, removed);
    } else {
      removed = true;
      Node *l = n->left, *r = n->right;
      delete n;
      if (!r) return l;
      Node *min = nullptr;
      Node *rest = detach_min(r, min);
      min->right = rest;
      min->left = l;
      return rebalance(min);
    }
    return rebalance(n);
  }
  int verify(const Node *n, bool &ok) const {
    if (!n) return 0;
    int hl = verify(n->left, ok), hr = verify(n->right, ok);
    if (hl - hr > 1 || hr - hl > 1) ok = false;
    if (n->size != 1 + sz(n->left) + sz(n->right)) ok = false;
    if (n->left && !less_(n->left->key, n->key)) ok = false;
    if (n->right && !less_(n->key, n->right->key)) ok = false;
    return 1 + (hl > hr ? hl : hr);
  }
  static void destroy(Node *n) {
    while (n) {
      destroy(n->left);
      Node *r = n->right;
      delete n;
      n = r;
    }
  }

  Node *root_ = nullptr;
  Less less_;
};

std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 31;
  x *= 0x7fb5d329728ea185ull;
  x ^= x >> 27;
  x *= 0x81dadef4bc2dd44dull;
  return x ^ (x >> 33);
}

}  // namespace
}  // namespace avl

// Random insert/erase workload on integer keys with order-statistic queries; returns a digest, or 0
// if the AVL invariants break.
extern "C" std::uint64_t avl_workload(std::uint64_t seed, int ops) {
  avl::Tree<std::int64_t, std::int64_t> t;
  std::uint64_t digest = 0, s = seed;
  for (int i = 0; i < ops; ++i) {
    s = avl::mix(s + 0x9e3779b97f4a7c15ull);
    std::int64_t key = static_cast<std::int64_t>(s % 10007u);
    switch ((s >> 40) % 5u) {
      case 0:
      case 1: t.insert(key, i); break;
      case 2: digest += t.erase(key) ? 1u : 0u; break;
      case 3:
        if (t.size()) digest += static_cast<std::uint64_t>(t.select(static_cast<std::size_t>(s >> 20) % t.size()));
        break;
      default: digest += t.count_range(key, key + 500) + t.rank(key); break;
    }
  }
  if (!t.check()) return 0;
  for (auto it = t.begin(); !it.done(); it.next()) digest = digest * 31u + static_cast<std::uint64_t>(it.key());
  return digest ^ static_cast<std::uint64_t>(t.height());
}

// Builds a string-keyed tree from generated words and returns the median word's length times the
// number of distinct words; *height receives the tree height.
extern "C" long avl_string_median(std::uint64_t seed, int n, int *height) {
  avl::Tree<std::string, int> t;
  std::uint64_t s = seed;
  for (int i = 0; i < n; ++i) {
    s = avl::mix(s + 1);
    std::string w;
    for (int k = 0; k < 3 + static_cast<int>(s % 6u); ++k) w.push_back(static_cast<char>('a' + (s >> (5 * k)) % 26u));
    const int *existing = t.find(w);
    t.insert(w, existing ? *existing + 1 : 1);
  }
  *height = t.height();
  if (!t.size()) return 0;
  return static_cast<long>(t.select(t.size() / 2).size() * t.size());
}
