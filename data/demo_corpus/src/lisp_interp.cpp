// A small Scheme-like interpreter: reader, arena-owned values, environments, special forms, closures, builtins.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace lisp {
namespace {

enum class Type { Nil, Num, Sym, Pair, Closure, Builtin, Bool };

struct Env;
struct Value;
using Builtin = Value *(*)(class Interp &, Value *args);

struct Value {
  Type type = Type::Nil;
  double num = 0;
  std::string sym;
  Value *car = nullptr, *cdr = nullptr;  // pair; for closures: params and body
  Env *env = nullptr;
  Builtin fn = nullptr;
  bool truth = false;
};

struct Env {
  std::unordered_map<std::string, Value *> vars;
  Env *outer = nullptr;
  Value *lookup(const std::string &name) const {
    for (const Env *e = this; e; e = e->outer) {
      auto it = e->vars.find(name);
      if (it != e->vars.end()) return it->second;
    }
    return nullptr;
  }
};

class Interp {
 public:
  Interp() : nil_(make(Type::Nil)), t_(make(Type::Bool)), f_(make(Type::Bool)) {
    t_->truth = true;
    global_ = new_env(nullptr);
    install();
  }
  Value *nil() { return nil_; }
  Value *boolean(bool b) { return b ? t_ : f_; }
  Value *number(double d) {
    Value *v = make(Type::Num);
    v->num = d;
    return v;
  }
  Value *symbol(const std::string &s) {
    Value *v = make(Type::Sym);
    v->sym = s;
    return v;
  }
  Value *cons(Value *a, Value *b) {
    Value *v = make(Type::Pair);
    v->car = a;
    v->cdr = b;
    return v;
  }
  Value *fail(const char *msg) {
    if (error_.empty()) error_ = msg;
    return nil_;
  }
  bool failed() const { return !error_.empty(); }
  const std::string &error() const { return error_; }

  Value *read(const char *&p);
  Value *eval(Value *x, Env *env, int depth);
  Env *global() { return global_; }
  std::string show(const Value *v) const;
  long steps() const { return steps_; }

 private:
  Value *make(Type t) {
    values_.push_back(std::make_unique<Value>());
    values_.back()->type = t;
    return values_.back().get();
  }
  Env *new_env(Env *outer) {
    envs_.push_back(std::make_unique<Env>());
    envs_.back()->outer = outer;
    return envs_.back().get();
  }
  void install();
  Value *apply(Value *fn, Value *args, int depth);
  Value *eval_list(Value *list, Env *env, int depth);

  std::vector<std::unique_ptr<Value>> values_;
  std::vector<std::unique_ptr<Env>> envs_;
  Value *nil_, *t_, *f_;
  Env *global_;
  std::string error_;
  long steps_ = 0;
};

void skip_space(const char *&p) {
  for (;;) {
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') ++p;
    if (*p != ';') return;
    while (*p && *p != '\n') ++p;
  }
}

Value *Interp::read(const char *&p) {
  skip_space(p);
  if (!*p) return fail("unexpected end of input");
  if (*p == '\'') {
    ++p;
    return cons(symbol("quote"), cons(read(p), nil_));
  }
  if (*p == '(') {
    ++p;
    std::vector<Value *> items;
    for (;;) {
      skip_space(p);
      if (!*p) return fail("missing )");
      if (*p == ')') {
        ++p;
        break;
      }
      items.push_back(read(p));
      if (failed()) return nil_;
    }
    Value *list = nil_;
    for (auto it = items.rbegin(); it != items.rend(); ++it) list = cons(*it, list);
    return list;
  }
  if (*p == ')') return fail("unexpected )");
  const char *start = p;
  while (*p && *p != ' ' && *p != '\n' && *p != '\t' && *p != '(' && *p != ')' && *p != '\r') ++p;
  std::string tok(start, static_cast<std::size_t>(p - start));
  if (tok == "#t") return t_;
  if (tok == "#f") return f_;
  char *end = nullptr;
  double d = std::strtod(tok.c_str(), &end);
  if (end && *end == '\0' && end != tok.c_str()) return number(d);
  return symbol(tok);
}

std::size_t list_length(const Value *v) {
  std::size_t n = 0;
  for (; v->type == Type::Pair; v = v->cdr) ++n;
  return n;
}

Value *nth(Value *v, std::size_t i) {
  for (; i && v->type == Type::Pair; --i) v = v->cdr;
  return v->type == Type::Pair ? v->car : v;
}

Value *Interp::eval_list(Value *list, Env *env, int depth) {
  std::vector<Value *> vals;
  for (; list->type == Type::Pair && !failed(); list = list->cdr) vals.push_back(eval(list->car, env, depth));
  Value *out = nil_;
  for (auto it = vals.rbegin(); it != vals.rend(); ++it) out = cons(*it, out);
  return out;
}

Value *Interp::eval(Value *x, Env *env, int depth) {
  for (;;) {
    if (failed()) return nil_;
    if (++steps_ > 5000000) return fail("step limit");
    if (depth > 400) return fail("recursion too deep");
    switch (x->type) {
      case Type::Sym: {
        Value *v = env->lookup(x->sym);
        return v ? v : fail("unbound symbol");
      }
      case Type::Pair: break;
      default: return x;
    }
    Value *head = x->car;
    if (head->type == Type::Sym) {
      const std::string &op = head->sym;
      bool needs_body = op == "lambda" || op == "let" || op == "define";
      if (needs_body && list_length(x) < 3) return fail("malformed special form");
      if (op == "quote") return nth(x, 1);
      if (op == "if") {
        Value *c = eval(nth(x, 1), env, depth + 1);
        bool truthy = !(c->type == Type::Bool && !c->truth) && c->type != Type::Nil;
        x = truthy ? nth(x, 2) : (list_length(x) > 3 ? nth(x, 3) : nil_);
        continue;  // tail position
      }
      if (op == "define" || op == "set!") {
        Value *target = nth(x, 1);
        if (target->type == Type::Pair) {  // (define (f args) body...)
          if (target->car->type != Type::Sym) return fail("bad function name");
          Value *clo = make(Type::Closure);
          clo->car = target->cdr;
          clo->cdr = x->cdr->cdr;
          clo->env = env;
          env->vars[target->car->sym] = clo;
          return clo;
        }
        if (target->type != Type::Sym) return fail("bad define target");
        Value *v = eval(nth(x, 2), env, depth + 1);
        env->vars[target->sym] = v;
        return v;
      }
      if (op == "lambda") {
        Value *clo = make(Type::Closure);
        clo->car = nth(x, 1);
        clo->cdr = x->cdr->cdr;
        clo->env = env;
        return clo;
      }
      if (op == "let") {
        Env *e = new_env(env);
        for (Value *b = nth(x, 1); b->type == Type::Pair; b = b->cdr) {
          if (b->car->type != Type::Pair || b->car->car->type != Type::Sym) return fail("bad let binding");
          e->vars[b->car->car->sym] = eval(nth(b->car, 1), env, depth + 1);
        }
        Value *body = x->cdr->cdr;
        for (; body->type == Type::Pair && body->cdr->type == Type::Pair; body = body->cdr) eval(body->car, e, depth + 1);
        if (body->type != Type::Pair) return nil_;
        x = body->car;
        env = e;
        continue;
      }
      if (op == "begin") {
        Value *body = x->cdr;
        if (body->type != Type::Pair) return nil_;
        for (; body->cdr->type == Type::Pair; body = body->cdr) eval(body->car, env, depth + 1);
        x = body->car;
        continue;
      }
    }
    Value *fn = eval(head, env, depth + 1);
    Value *args = eval_list(x->cdr, env, depth + 1);
    if (failed()) return nil_;
    if (fn->type != Type::Closure) return apply(fn, args, depth + 1);
    Env *e = new_env(fn->env);
    Value *params = fn->car;
    for (; params->type == Type::Pair; params = params->cdr, args = args->cdr) {
      if (args->type != Type::Pair) return fail("too few arguments");
      e->vars[params->car->sym] = args->car;
    }
    if (params->type == Type::Sym) e->vars[params->sym] = args;  // variadic tail
    Value *body = fn->cdr;
    if (body->type != Type::Pair) return nil_;
    for (; body->cdr->type == Type::Pair; body = body->cdr) eval(body->car, e, depth + 1);
    x = body->car;
    env = e;
  }
}

Value *Interp::apply(Value *fn, Value *args, int) {
  if (fn->type != Type::Builtin) return fail("not a function");
  return fn->fn(*this, args);
}

Value *arith(Interp &in, Value *args, char op) {
  if (args->type != Type::Pair || args->car->type != Type::Num) return in.fail("arithmetic on non-number");
  double acc = args->car->num;
  if (args->cdr->type != Type::Pair && op == '-') return in.number(-acc);
  for (Value *a = args->cdr; a->type == Type::Pair; a = a->cdr) {
    if (a->car->type != Type::Num) return in.fail("arithmetic on non-number");
    double v = a->car->num;
    switch (op) {
      case '+': acc += v; break;
      case '-': acc -= v; break;
      case '*': acc *= v; break;
      default:
        if (v == 0) return in.fail("division by zero");
        acc /= v;
        break;
    }
  }
  return in.number(acc);
}

Value *compare(Interp &in, Value *args, int op) {
  if (list_length(args) != 2 || args->car->type != Type::Num || args->cdr->car->type != Type::Num)
    return in.fail("comparison needs two numbers");
  double a = args->car->num, b = args->cdr->car->num;
  return in.boolean(op == 0 ? a < b : op == 1 ? a == b : a > b);
}

void Interp::install() {
  struct Entry {
    const char *name;
    Builtin fn;
  };
  static const Entry table[] = {
      {"+", [](Interp &in, Value *a) { return arith(in, a, '+'); }},
      {"-", [](Interp &in, Value *a) { return arith(in, a, '-'); }},
      {"*", [](Interp &in, Value *a) { return arith(in, a, '*'); }},
      {"/", [](Interp &in, Value *a) { return arith(in, a, '/'); }},
      {"<", [](Interp &in, Value *a) { return compare(in, a, 0); }},
      {"=", [](Interp &in, Value *a) { return compare(in, a, 1); }},
      {">", [](Interp &in, Value *a) { return compare(in, a, 2); }},
      {"car", [](Interp &in, Value *a) { return nth(a, 0)->type == Type::Pair ? nth(a, 0)->car : in.fail("car of non-pair"); }},
      {"cdr", [](Interp &in, Value *a) { return nth(a, 0)->type == Type::Pair ? nth(a, 0)->cdr : in.fail("cdr of non-pair"); }},
      {"cons", [](Interp &in, Value *a) { return in.cons(nth(a, 0), nth(a, 1)); }},
      {"list", [](Interp &, Value *a) { return a; }},
      {"null?", [](Interp &in, Value *a) { return in.boolean(nth(a, 0)->type == Type::Nil); }},
  };
  for (const Entry &e : table) {
    Value *v = make(Type::Builtin);
    v->fn = e.fn;
    global_->vars[e.name] = v;
  }
}

std::string Interp::show(const Value *v) const {
  char buf[64];
  switch (v->type) {
    case Type::Nil: return "()";
    case Type::Bool: return v->truth ? "#t" : "#f";
    case Type::Num: std::snprintf(buf, sizeof buf, "%.15g", v->num); return buf;
    case Type::Sym: return v->sym;
    case Type::Closure: return "#<closure>";
    case Type::Builtin: return "#<builtin>";
    case Type::Pair: {
      std::string s = "(";
      const Value *p = v;
      for (int n = 0; p->type == Type::Pair && n < 1000; p = p->cdr, ++n) {
        if (p != v) s += ' ';
        s += show(p->car);
      }
      if (p->type != Type::Nil) s += " . " + show(p);
      return s + ")";
    }
  }
  return "?";
}

}  // namespace
}  // namespace lisp

// Evaluates every expression of a program and writes the printed value of the last one (or
// "error: ...") into out. Returns the number of evaluation steps, or -1 on error.
extern "C" long lisp_run(const char *program, char *out, std::size_t cap) {
  lisp::Interp in;
  const char *p = program;
  lisp::Value *last = in.nil();
  for (;;) {
    lisp::skip_space(p);
    if (!*p || in.failed()) break;
    lisp::Value *expr = in.read(p);
    if (in.failed()) break;
    last = in.eval(expr, in.global(), 0);
  }
  std::string text = in.failed() ? "error: " + in.error() : in.show(last);
  if (cap) {
    std::size_t n = text.size() < cap - 1 ? text.size() : cap - 1;
    std::memcpy(out, text.data(), n);
    out[n] = '\0';
  }
  return in.failed() ? -1 : in.steps();
}

// Runs a built-in benchmark program (recursive fib, list building, higher-order map) for n.
extern "C" long lisp_benchmark(int n, char *out, std::size_t cap) {
  char program[1024];
  std::snprintf(program, sizeof program,
                "(define (fib n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))\n"
                "(define (range a b) (if (> a b) '() (cons a (range (+ a 1) b))))\n"
                "(define (map f xs) (if (null? xs) '() (cons (f (car xs)) (map f (cdr xs)))))\n"
                "(define (sum xs) (let ((acc 0)) (if (null? xs) 0 (+ (car xs) (sum (cdr xs))))))\n"
                "(list (fib %d) (sum (map (lambda (x) (* x x)) (range 1 %d))))\n",
                n < 0 ? 0 : n > 22 ? 22 : n, n < 0 ? 0 : n > 300 ? 300 : n * 10);
  return lisp_run(program, out, cap);
}
