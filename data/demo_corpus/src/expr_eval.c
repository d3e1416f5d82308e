/* Arithmetic expression parser (precedence climbing) with constant folding, RPN compilation and evaluation. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

typedef enum {
  E_NUM, E_VAR, E_NEG, E_ADD, E_SUB, E_MUL, E_DIV, E_POW, E_MOD,
  E_SIN, E_COS, E_SQRT, E_EXP, E_LOG, E_ABS, E_MIN, E_MAX
} EKind;

typedef struct {
  EKind kind;
  int lhs, rhs;
  double value;
  int var;
} ENode;

typedef struct {
  const char *s;
  size_t pos;
  ENode nodes[256];
  int count;
  int depth;
  int failed;
} EParser;

typedef struct {
  EKind op;
  double value;
  int var;
} RpnOp;

static int add_node(EParser *p, EKind k, int lhs, int rhs) {
  if (p->count >= 256) {
    p->failed = 1;
    return 0;
  }
  ENode *n = &p->nodes[p->count];
  n->kind = k;
  n->lhs = lhs;
  n->rhs = rhs;
  n->value = 0;
  n->var = 0;
  return p->count++;
}

static void skip_spaces(EParser *p) {
  while (p->s[p->pos] == ' ' || p->s[p->pos] == '\t') p->pos++;
}

static int accept(EParser *p, char c) {
  skip_spaces(p);
  if (p->s[p->pos] == c) {
    p->pos++;
    return 1;
  }
  return 0;
}

static int is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int parse_expr(EParser *p, int min_prec);

static int binary_prec(char c, EKind *kind, int *right_assoc) {
  *right_assoc = 0;
  switch (c) {
    case '+': *kind = E_ADD; return 1;
    case '-': *kind = E_SUB; return 1;
    case '*': *kind = E_MUL; return 2;
    case '/': *kind = E_DIV; return 2;
    case '%': *kind = E_MOD; return 2;
    case '^': *kind = E_POW; *right_assoc = 1; return 4;
    default: return -1;
  }
}

static int function_kind(const char *name, size_t n, EKind *kind, int *arity) {
  static const struct { const char *name; EKind kind; int arity; } table[] = {
      {"sin", E_SIN, 1}, {"cos", E_COS, 1}, {"sqrt", E_SQRT, 1}, {"exp", E_EXP, 1},
      {"log", E_LOG, 1}, {"abs", E_ABS, 1}, {"min", E_MIN, 2},   {"max", E_MAX, 2}};
  for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i)
    if (strlen(table[i].name) == n && memcmp(table[i].name, name, n) == 0) {
      *kind = table[i].kind;
      *arity = table[i].arity;
      return 1;
    }
  return 0;
}

static int parse_primary(EParser *p) {
  skip_spaces(p);
  char c = p->s[p->pos];
  if (accept(p, '(')) {
    int e = parse_expr(p, 1);
    if (!accept(p, ')')) p->failed = 1;
    return e;
  }
  if (accept(p, '-')) return add_node(p, E_NEG, parse_expr(p, 3), -1);
  if (is_digit(c) || c == '.') {
    char *end = NULL;
    double v = strtod(p->s + p->pos, &end);
    p->pos = (size_t)(end - p->s);
    int id = add_node(p, E_NUM, -1, -1);
    p->nodes[id].value = v;
    return id;
  }
  if (is_alpha(c)) {
    size_t start = p->pos;
    while (is_alpha(p->s[p->pos]) || is_digit(p->s[p->pos])) p->pos++;
    size_t n = p->pos - start;
    EKind k;
    int arity;
    if (function_kind(p->s + start, n, &k, &arity)) {
      if (!accept(p, '(')) {
        p->failed = 1;
        return 0;
      }
      int a = parse_expr(p, 1), b = -1;
      if (arity == 2 && !accept(p, ',')) p->failed = 1;
      if (arity == 2) b = parse_expr(p, 1);
      if (!accept(p, ')')) p->failed = 1;
      return add_node(p, k, a, b);
    }
    if (n != 1 || p->s[start] < 'a' || p->s[start] > 'z') {
      p->failed = 1;
      return 0;
    }
    int id = add_node(p, E_VAR, -1, -1);
    p->nodes[id].var = p->s[start] - 'a';
    return id;
  }
  p->failed = 1;
  return 0;
}

static int parse_expr(EParser *p, int min_prec) {
  if (++p->depth > 100) {
    p->failed = 1;
    return 0;
  }
  int lhs = parse_primary(p);
  while (!p->failed) {
    skip_spaces(p);
    EKind k;
    int right;
    int prec = binary_prec(p->s[p->pos], &k, &right);
    if (prec < min_prec) break;
    p->pos++;
    int rhs = parse_expr(p, right ? prec : prec + 1);
    lhs = add_node(p, k, lhs, rhs);
  }
  p->depth--;
  return lhs;
}

static double apply_binary(EKind k, double a, double b) {
  switch (k) {
    case E_ADD: return a + b;
    case E_SUB: return a - b;
    case E_MUL: return a * b;
    case E_DIV: return b != 0.0 ? a / b : 0.0;
    case E_MOD: return b != 0.0 ? fmod(a, b) : 0.0;
    case E_POW: return pow(a, b);
    case E_MIN: return a < b ? a : b;
    case E_MAX: return a > b ? a : b;
    default: return 0.0;
  }
}

static double apply_unary(EKind k, double a) {
  switch (k) {
    case E_NEG: return -a;
    case E_SIN: return sin(a);
    case E_COS: return cos(a);
    case E_SQRT: return a >= 0 ? sqrt(a) : 0.0;
    case E_EXP: return exp(a < 700 ? a : 700);
    case E_LOG: return a > 0 ? log(a) : 0.0;
    case E_ABS: return fabs(a);
    default: return 0.0;
  }
}

static int is_binary(EKind k) {
  return k == E_ADD || k == E_SUB || k == E_MUL || k == E_DIV || k == E_MOD || k == E_POW ||
         k == E_MIN || k == E_MAX;
}

static int fold_constants(EParser *p, int id) {
  ENode *n = &p->nodes[id];
  if (n->kind == E_NUM) return 1;
  if (n->kind == E_VAR) return 0;
  int lc = fold_constants(p, n->lhs);
  int rc = is_binary(n->kind) ? fold_constants(p, n->rhs) : 1;
  if (!lc || !rc) return 0;
  double v = is_binary(n->kind) ? apply_binary(n->kind, p->nodes[n->lhs].value, p->nodes[n->rhs].value)
                                : apply_unary(n->kind, p->nodes[n->lhs].value);
  n->kind = E_NUM;
  n->value = v;
  return 1;
}

static double eval_tree(const EParser *p, int id, const double *vars) {
  const ENode *n = &p->nodes[id];
  switch (n->kind) {
    case E_NUM: return n->value;
    case E_VAR: return vars[n->var];
    default: break;
  }
  double a = eval_tree(p, n->lhs, vars);
  if (!is_binary(n->kind)) return apply_unary(n->kind, a);
  return apply_binary(n->kind, a, eval_tree(p, n->rhs, vars));
}

static int emit_rpn(const EParser *p, int id, RpnOp *out, int len) {
  const ENode *n = &p->nodes[id];
  if (n->kind != E_NUM && n->kind != E_VAR) {
    len = emit_rpn(p, n->lhs, out, len);
    if (is_binary(n->kind)) len = emit_rpn(p, n->rhs, out, len);
  }
  out[len].op = n->kind;
  out[len].value = n->value;
  out[len].var = n->var;
  return len + 1;
}

static double run_rpn(const RpnOp *code, int len, const double *vars) {
  double stack[256];
  int sp = 0;
  for (int i = 0; i < len; ++i) {
    const RpnOp *op = &code[i];
    switch (op->op) {
      case E_NUM: stack[sp++] = op->value; break;
      case E_VAR: stack[sp++] = vars[op->var]; break;
      case E_NEG: case E_SIN: case E_COS: case E_SQRT: case E_EXP: case E_LOG: case E_ABS:
        stack[sp - 1] = apply_unary(op->op, stack[sp - 1]);
        break;
      default:
        --sp;
        stack[sp - 1] = apply_binary(op->op, stack[sp - 1], stack[sp]);
        break;
    }
  }
  return sp ? stack[sp - 1] : 0.0;
}

static int parse_all(EParser *p, const char *text) {
  p->s = text;
  p->pos = 0;
  p->count = 0;
  p->depth = 0;
  p->failed = 0;
  int root = parse_expr(p, 1);
  skip_spaces(p);
  if (p->s[p->pos] != '\0') p->failed = 1;
  return p->failed ? -1 : root;
}

/* Evaluates text with variables a..z taken from vars[0..25]. Returns 0 on success. */
int expr_evaluate(const char *text, const double *vars, double *result) {
  EParser p;
  int root = parse_all(&p, text);
  if (root < 0) return -1;
  *result = eval_tree(&p, root, vars);
  return 0;
}

/* Samples f(x) (variable x) at n points in [lo, hi] after folding constants and compiling to
   RPN; returns the trapezoidal integral, or NAN on a parse error. Both evaluation paths are
   cross-checked; *mismatches counts samples where they disagree. */
double expr_integrate(const char *text, double lo, double hi, int n, int *mismatches) {
  EParser p;
  RpnOp code[256];
  double vars[26] = {0};
  int root = parse_all(&p, text);
  *mismatches = 0;
  if (root < 0 || n < 2) return NAN;
  fold_constants(&p, root);
  int len = emit_rpn(&p, root, code, 0);
  double h = (hi - lo) / (n - 1), acc = 0.0;
  for (int i = 0; i < n; ++i) {
    vars['x' - 'a'] = lo + h * i;
    double y = run_rpn(code, len, vars);
    double z = eval_tree(&p, root, vars);
    if (fabs(y - z) > 1e-9 * (1.0 + fabs(z))) ++*mismatches;
    acc += (i == 0 || i == n - 1) ? 0.5 * y : y;
  }
  return acc * h;
}
