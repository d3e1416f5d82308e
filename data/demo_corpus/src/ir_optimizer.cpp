// A toy SSA optimiser: straight-line IR, a pass manager with virtual passes (folding, CSE, strength reduction, DCE).
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace ir {
namespace {

enum class Op { Param, Const, Add, Sub, Mul, And, Or, Xor, Shl, Shr, Copy, Select };

struct Inst {
  Op op;
  std::int64_t imm = 0;  // Const value or Param index
  int a = -1, b = -1, c = -1;
  bool dead = false;
};

struct Function {
  std::vector<Inst> body;
  int result = -1;
  std::size_t live_count() const {
    std::size_t n = 0;
    for (const Inst &i : body) n += i.dead ? 0 : 1;
    return n;
  }
};

std::uint64_t u(std::int64_t v) { return static_cast<std::uint64_t>(v); }
std::int64_t s(std::uint64_t v) { return static_cast<std::int64_t>(v); }  // two's-complement wrap

std::int64_t evaluate_op(Op op, std::int64_t x, std::int64_t y, std::int64_t z) {
  switch (op) {
    case Op::Add: return s(u(x) + u(y));
    case Op::Sub: return s(u(x) - u(y));
    case Op::Mul: return s(u(x) * u(y));
    case Op::And: return x & y;
    case Op::Or: return x | y;
    case Op::Xor: return x ^ y;
    case Op::Shl: return s(u(x) << (u(y) & 63u));
    case Op::Shr: return s(u(x) >> (u(y) & 63u));
    case Op::Copy: return x;
    case Op::Select: return x ? y : z;
    default: return 0;
  }
}

int arity(Op op) {
  switch (op) {
    case Op::Param:
    case Op::Const: return 0;
    case Op::Copy: return 1;
    case Op::Select: return 3;
    default: return 2;
  }
}

bool commutative(Op op) { return op == Op::Add || op == Op::Mul || op == Op::And || op == Op::Or || op == Op::Xor; }

std::int64_t interpret(const Function &f, const std::vector<std::int64_t> &params) {
  std::vector<std::int64_t> val(f.body.size(), 0);
  for (std::size_t i = 0; i < f.body.size(); ++i) {
    const Inst &in = f.body[i];
    if (in.dead) continue;
    if (in.op == Op::Const) {
      val[i] = in.imm;
    } else if (in.op == Op::Param) {
      val[i] = params[static_cast<std::size_t>(in.imm) % params.size()];
    } else {
      auto get = [&](int k) { return k >= 0 ? val[static_cast<std::size_t>(k)] : 0; };
      val[i] = evaluate_op(in.op, get(in.a), get(in.b), get(in.c));
    }
  }
  return f.result >= 0 ? val[static_cast<std::size_t>(f.result)] : 0;
}

class Pass {
 public:
  virtual ~Pass() = default;
  virtual const char *name() const = 0;
  virtual bool run(Function &f) = 0;  // returns true if it changed anything

 protected:
  static bool is_const(const Function &f, int v, std::int64_t *out = nullptr) {
    if (v < 0 || f.body[static_cast<std::size_t>(v)].op != Op::Const) return false;
    if (out) *out = f.body[static_cast<std::size_t>(v)].imm;
    return true;
  }
  static void make_const(Inst &in, std::int64_t v) {
    in.op = Op::Const;
    in.imm = v;
    in.a = in.b = in.c = -1;
  }
  static void make_copy(Inst &in, int from) {
    in.op = Op::Copy;
    in.a = from;
    in.b = in.c = -1;
  }
};

class ConstantFold : public Pass {
 public:
  const char *name() const override { return "constfold"; }
  bool run(Function &f) override {
    bool changed = false;
    for (Inst &in : f.body) {
      if (in.dead || arity(in.op) == 0) continue;
      std::int64_t x = 0, y = 0, z = 0;
      bool ca = is_const(f, in.a, &x), cb = arity(in.op) < 2 || is_const(f, in.b, &y);
      bool cc = arity(in.op) < 3 || is_const(f, in.c, &z);
      if (ca && cb && cc) {
        make_const(in, evaluate_op(in.op, x, y, z));
        changed = true;
      } else if (in.op == Op::Select && ca) {
        make_copy(in, x ? in.b : in.c);
        changed = true;
      } else if ((in.op == Op::Add || in.op == Op::Or || in.op == Op::Xor) && cb && y == 0) {
        make_copy(in, in.a);
        changed = true;
      } else if ((in.op == Op::Mul || in.op == Op::And) && cb && y == 0) {
        make_const(in, 0);
        changed = true;
      } else if (in.op == Op::Mul && cb && y == 1) {
        make_copy(in, in.a);
        changed = true;
      } else if ((in.op == Op::Sub || in.op == Op::Xor) && in.a == in.b) {
        make_const(in, 0);
        changed = true;
      }
    }
    return changed;
  }
};

class CopyPropagate : public Pass {
 public:
  const char *name() const override { return "copyprop"; }
  bool run(Function &f) override {
    bool changed = false;
    auto root = [&](int v) {
      while (v >= 0 && f.body[static_cast<std::size_t>(v)].op == Op::Copy) v = f.body[static_cast<std::size_t>(v)].a;
      return v;
    };
    for (Inst &in : f.body) {
      if (in.dead) continue;
      for (int *operand : {&in.a, &in.b, &in.c}) {
        int r = root(*operand);
        if (r != *operand) {
          *operand = r;
          changed = true;
        }
      }
    }
    int r = root(f.result);
    changed |= r != f.result;
    f.result = r;
    return changed;
  }
};

class StrengthReduce : public Pass {
 public:
  const char *name() const override { return "strength"; }
  bool run(Function &f) override {
    bool changed = false;
    for (std::size_t i = 0; i < f.body.size(); ++i) {
      Inst &in = f.body[i];
      std::int64_t y = 0;
      if (in.dead || in.op != Op::Mul) continue;
      if (!is_const(f, in.b, &y) && is_const(f, in.a, &y)) std::swap(in.a, in.b);
      if (y <= 1 || (y & (y - 1)) != 0 || !is_const(f, in.b)) continue;
      int shift = 0;
      while ((std::int64_t{1} << shift) != y) ++shift;
      // New instructions cannot be inserted before this one, so the multiplier constant is
      // rewritten into the shift amount in place, which is only safe when nothing else uses it.
      if (uses(f, in.b) == 1) {
        f.body[static_cast<std::size_t>(in.b)].imm = shift;
        in.op = Op::Shl;
        changed = true;
      }
    }
    return changed;
  }

 private:
  static int uses(const Function &f, int v) {
    int n = f.result == v ? 1 : 0;
    for (const Inst &in : f.body)
      if (!in.dead) n += (in.a == v) + (in.b == v) + (in.c == v);
    return n;
  }
};

class ValueNumbering : public Pass {
 public:
  const char *name() const override { return "gvn"; }
  bool run(Function &f) override {
    std::map<std::tuple<int, std::int64_t, int, int, int>, int> table;
    bool changed = false;
    for (std::size_t i = 0; i < f.body.size(); ++i) {
      Inst &in = f.body[i];
      if (in.dead || in.op == Op::Copy) continue;
      int a = in.a, b = in.b;
      if (commutative(in.op) && a > b) std::swap(a, b);
      auto key = std::make_tuple(static_cast<int>(in.op), in.imm, a, b, in.c);
      auto it = table.find(key);
      if (it == table.end()) {
        table.emplace(key, static_cast<int>(i));
      } else {
        make_copy(in, it->second);
        changed = true;
      }
    }
    return changed;
  }
};

class DeadCode : public Pass {
 public:
  const char *name() const override { return "dce"; }
  bool run(Function &f) override {
    std::vector<bool> live(f.body.size(), false);
    if (f.result >= 0) live[static_cast<std::size_t>(f.result)] = true;
    for (std::size_t i = f.body.size(); i-- > 0;) {
      if (!live[i]) continue;
      const Inst &in = f.body[i];
      for (int operand : {in.a, in.b, in.c})
        if (operand >= 0) live[static_cast<std::size_t>(operand)] = true;
    }
    bool changed = false;
    for (std::size_t i = 0; i < f.body.size(); ++i)
      if (!live[i] && !f.body[i].dead) {
        f.body[i].dead = true;
        changed = true;
      }
    return changed;
  }
};

class PassManager {
 public:
  void add(std::unique_ptr<Pass> p) { passes_.push_back(std::move(p)); }
  int run_to_fixpoint(Function &f, int max_rounds, std::string &log) {
    int rounds = 0;
    for (bool changed = true; changed && rounds < max_rounds; ++rounds) {
      changed = false;
      for (auto &p : passes_)
        if (p->run(f)) {
          changed = true;
          log += p->name();
          log += ';';
        }
    }
    return rounds;
  }

 private:
  std::vector<std::unique_ptr<Pass>> passes_;
};

Function random_function(std::uint64_t seed, int n) {
  Function f;
  std::uint64_t st = seed | 1u;
  auto rnd = [&st]() {
    st ^= st << 7;
    st ^= st >> 9;
    return st;
  };
  for (int p = 0; p < 3; ++p) f.body.push_back(Inst{Op::Param, p});
  for (int i = 0; i < n; ++i) {
    std::uint64_t r = rnd();
    int size = static_cast<int>(f.body.size());
    Inst in{Op::Const};
    if (r % 5 == 0) {
      in.imm = static_cast<std::int64_t>((r >> 8) % 9u);
    } else {
      static const Op ops[] = {Op::Add, Op::Sub, Op::Mul, Op::And, Op::Or, Op::Xor, Op::Shl, Op::Shr, Op::Select};
      in.op = ops[(r >> 4) % 9u];
      in.a = static_cast<int>((r >> 12) % static_cast<std::uint64_t>(size));
      in.b = static_cast<int>((r >> 24) % static_cast<std::uint64_t>(size));
      if (in.op == Op::Select) in.c = static_cast<int>((r >> 36) % static_cast<std::uint64_t>(size));
    }
    f.body.push_back(in);
  }
  f.result = static_cast<int>(f.body.size()) - 1;
  return f;
}

}  // namespace
}  // namespace ir

// Generates a random function of n instructions, optimises it to a fixpoint and checks on several
// inputs that the optimised function computes the same values. Returns surviving instruction count,
// or -1 on a miscompile; *rounds receives the pass-manager rounds used.
extern "C" long iropt_check(std::uint64_t seed, int n, int *rounds) {
  if (n <= 0 || n > 100000) return -1;
  ir::Function f = ir::random_function(seed, n), original = f;
  ir::PassManager pm;
  pm.add(std::make_unique<ir::ConstantFold>());
  pm.add(std::make_unique<ir::StrengthReduce>());
  pm.add(std::make_unique<ir::ValueNumbering>());
  pm.add(std::make_unique<ir::CopyPropagate>());
  pm.add(std::make_unique<ir::DeadCode>());
  std::string log;
  *rounds = pm.run_to_fixpoint(f, 50, log);
  for (std::int64_t k = 0; k < 8; ++k) {
    std::vector<std::int64_t> params = {k * 3 - 7, k * k + 1, (k << 20) ^ 0x5a5a};
    if (ir::interpret(original, params) != ir::interpret(f, params)) return -1;
  }
  return static_cast<long>(f.live_count());
}
