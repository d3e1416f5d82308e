/* Stack-based bytecode virtual machine with a text assembler, locals, calls and a heap array. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>

enum Op {
  OP_HALT, OP_PUSH, OP_POP, OP_DUP, OP_SWAP, OP_OVER,
  OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_NEG,
  OP_AND, OP_OR, OP_XOR, OP_SHL, OP_SHR,
  OP_EQ, OP_LT, OP_GT, OP_NOT,
  OP_JMP, OP_JZ, OP_JNZ,
  OP_LOAD, OP_STORE, OP_INC,
  OP_ALOAD, OP_ASTORE,
  OP_CALL, OP_RET, OP_PRINT,
  OP_COUNT
};

static const char *const kMnemonics[OP_COUNT] = {
    "halt", "push", "pop", "dup", "swap", "over", "add", "sub", "mul", "div", "mod",
    "neg", "and", "or", "xor", "shl", "shr", "eq", "lt", "gt", "not", "jmp", "jz",
    "jnz", "load", "store", "inc", "aload", "astore", "call", "ret", "print"};

#define VM_STACK 256
#define VM_FRAMES 64
#define VM_LOCALS 16
#define VM_HEAP 1024
#define VM_CODE 1024

typedef struct {
  int32_t code[VM_CODE];
  int len;
} Program;

typedef struct {
  int ret_pc;
  int64_t locals[VM_LOCALS];
} Frame;

typedef struct {
  int64_t stack[VM_STACK];
  int sp;
  Frame frames[VM_FRAMES];
  int fp;
  int64_t heap[VM_HEAP];
  uint64_t output_hash;
  long steps;
} Vm;

static int has_operand(int op) {
  return op == OP_PUSH || op == OP_JMP || op == OP_JZ || op == OP_JNZ || op == OP_LOAD ||
         op == OP_STORE || op == OP_INC || op == OP_CALL;
}

static int lookup_mnemonic(const char *w, size_t n) {
  for (int i = 0; i < OP_COUNT; ++i)
    if (strlen(kMnemonics[i]) == n && memcmp(kMnemonics[i], w, n) == 0) return i;
  return -1;
}

static const char *next_word(const char *s, size_t *n) {
  while (*s == ' ' || *s == '\n' || *s == '\t' || *s == ';') ++s;
  const char *start = s;
  while (*s && *s != ' ' && *s != '\n' && *s != '\t' && *s != ';') ++s;
  *n = (size_t)(s - start);
  return start;
}

static int emit(Program *p, int32_t word) {
  if (p->len >= VM_CODE) return 0;
  p->code[p->len++] = word;
  return 1;
}

typedef struct {
  char name[16];
  int addr;
} Label;

typedef struct {
  Label defs[64];
  int ndefs;
  Label uses[128]; /* addr = code slot to patch */
  int nuses;
} LabelTable;

static int copy_name(char *dst, const char *w, size_t n) {
  if (n == 0 || n >= 16) return 0;
  memcpy(dst, w, n);
  dst[n] = '\0';
  return 1;
}

static int find_label(const LabelTable *t, const char *name) {
  for (int i = 0; i < t->ndefs; ++i)
    if (strcmp(t->defs[i].name, name) == 0) return t->defs[i].addr;
  return -1;
}

static int resolve_labels(Program *p, const LabelTable *t) {
  for (int i = 0; i < t->nuses; ++i) {
    int addr = find_label(t, t->uses[i].name);
    if (addr < 0) return 0;
    p->code[t->uses[i].addr] = addr;
  }
  return 1;
}

/* Assembles "top: push 3 push 4 add print jmp @top"; "name:" defines a label at the next
   instruction and "@name" refers to one; plain numbers are literal operands. */
static int assemble(const char *src, Program *p) {
  static LabelTable labels;
  labels.ndefs = labels.nuses = 0;
  p->len = 0;
  size_t n;
  const char *w = next_word(src, &n);
  while (n) {
    if (w[n - 1] == ':') {
      if (labels.ndefs >= 64 || !copy_name(labels.defs[labels.ndefs].name, w, n - 1)) return 0;
      labels.defs[labels.ndefs++].addr = p->len;
      w = next_word(w + n, &n);
      continue;
    }
    int op = lookup_mnemonic(w, n);
    if (op < 0 || !emit(p, op)) return 0;
    w = next_word(w + n, &n);
    if (has_operand(op)) {
      if (!n) return 0;
      if (w[0] == '@') {
        if (labels.nuses >= 128 || !copy_name(labels.uses[labels.nuses].name, w + 1, n - 1)) return 0;
        labels.uses[labels.nuses++].addr = p->len;
        if (!emit(p, 0)) return 0;
      } else {
        char buf[24];
        if (n >= sizeof buf) return 0;
        memcpy(buf, w, n);
        buf[n] = '\0';
        if (!emit(p, (int32_t)strtol(buf, NULL, 10))) return 0;
      }
      w = next_word(w + n, &n);
    }
  }
  return resolve_labels(p, &labels);
}

static int push(Vm *vm, int64_t v) {
  if (vm->sp >= VM_STACK) return 0;
  vm->stack[vm->sp++] = v;
  return 1;
}

static int pop(Vm *vm, int64_t *v) {
  if (vm->sp <= 0) return 0;
  *v = vm->stack[--vm->sp];
  return 1;
}

static uint64_t wrap_add(int64_t a, int64_t b) { return (uint64_t)a + (uint64_t)b; }

static int64_t to_signed(uint64_t u) {
  return u <= (uint64_t)INT64_MAX ? (int64_t)u : -(int64_t)(~u) - 1;
}

static int binary_op(Vm *vm, int op) {
  int64_t b, a;
  if (!pop(vm, &b) || !pop(vm, &a)) return 0;
  int64_t r;
  switch (op) {
    case OP_ADD: r = to_signed(wrap_add(a, b)); break;
    case OP_SUB: r = to_signed((uint64_t)a - (uint64_t)b); break;
    case OP_MUL: r = to_signed((uint64_t)a * (uint64_t)b); break;
    case OP_DIV:
      if (b == 0 || (a == INT64_MIN && b == -1)) return 0;
      r = a / b;
      break;
    case OP_MOD:
      if (b == 0 || (a == INT64_MIN && b == -1)) return 0;
      r = a % b;
      break;
    case OP_AND: r = a & b; break;
    case OP_OR: r = a | b; break;
    case OP_XOR: r = a ^ b; break;
    case OP_SHL: r = to_signed((uint64_t)a << (b & 63)); break;
    case OP_SHR: r = to_signed((uint64_t)a >> (b & 63)); break;
    case OP_EQ: r = a == b; break;
    case OP_LT: r = a < b; break;
    case OP_GT: r = a > b; break;
    default: return 0;
  }
  return push(vm, r);
}

static int valid_target(const Program *p, int32_t t) { return t >= 0 && t < p->len; }

/* Executes until halt; returns 0 on success, -1 on a fault, -2 if the step budget ran out. */
static int execute(Vm *vm, const Program *p, long budget) {
  int pc = 0;
  int64_t a, b;
  Frame *f = &vm->frames[0];
  vm->fp = 0;
  while (pc >= 0 && pc < p->len) {
    if (++vm->steps > budget) return -2;
    int op = p->code[pc++];
    int32_t arg = 0;
    if (has_operand(op)) {
      if (pc >= p->len) return -1;
      arg = p->code[pc++];
    }
    switch (op) {
      case OP_HALT: return 0;
      case OP_PUSH: if (!push(vm, arg)) return -1; break;
      case OP_POP: if (!pop(vm, &a)) return -1; break;
      case OP_DUP:
        if (!pop(vm, &a) || !push(vm, a) || !push(vm, a)) return -1;
        break;
      case OP_SWAP:
        if (!pop(vm, &b) || !pop(vm, &a) || !push(vm, b) || !push(vm, a)) return -1;
        break;
      case OP_OVER:
        if (vm->sp < 2 || !push(vm, vm->stack[vm->sp - 2])) return -1;
        break;
      case OP_NEG:
        if (!pop(vm, &a) || !push(vm, to_signed(0u - (uint64_t)a))) return -1;
        break;
      case OP_NOT:
        if (!pop(vm, &a) || !push(vm, !a)) return -1;
        break;
      case OP_JMP:
        if (!valid_target(p, arg)) return -1;
        pc = arg;
        break;
      case OP_JZ:
      case OP_JNZ:
        if (!pop(vm, &a) || !valid_target(p, arg)) return -1;
        if ((op == OP_JZ) == (a == 0)) pc = arg;
        break;
      case OP_LOAD:
        if (arg < 0 || arg >= VM_LOCALS || !push(vm, f->locals[arg])) return -1;
        break;
      case OP_STORE:
        if (arg < 0 || arg >= VM_LOCALS || !pop(vm, &a)) return -1;
        f->locals[arg] = a;
        break;
      case OP_INC:
        if (arg < 0 || arg >= VM_LOCALS) return -1;
        f->locals[arg] = to_signed(wrap_add(f->locals[arg], 1));
        break;
      case OP_ALOAD:
        if (!pop(vm, &a) || a < 0 || a >= VM_HEAP || !push(vm, vm->heap[a])) return -1;
        break;
      case OP_ASTORE:
        if (!pop(vm, &b) || !pop(vm, &a) || a < 0 || a >= VM_HEAP) return -1;
        vm->heap[a] = b;
        break;
      case OP_CALL:
        if (!valid_target(p, arg) || vm->fp + 1 >= VM_FRAMES) return -1;
        f = &vm->frames[++vm->fp];
        memset(f->locals, 0, sizeof f->locals);
        f->ret_pc = pc;
        if (!pop(vm, &a)) return -1;
        f->locals[0] = a;
        pc = arg;
        break;
      case OP_RET:
        if (vm->fp == 0) return 0;
        pc = f->ret_pc;
        f = &vm->frames[--vm->fp];
        break;
      case OP_PRINT:
        if (!pop(vm, &a)) return -1;
        vm->output_hash = (vm->output_hash ^ (uint64_t)a) * 0x100000001b3ull;
        break;
      default:
        if (!binary_op(vm, op)) return -1;
        break;
    }
  }
  return -1;
}

static void vm_reset(Vm *vm) {
  memset(vm, 0, sizeof *vm);
  vm->output_hash = 0xcbf29ce484222325ull;
}

/* Assembles and runs a program; returns the hash of printed values (or 0 on error)
   and stores the top of stack (or 0) in *top and the status in *status. */
uint64_t vm_run_source(const char *src, long budget, int64_t *top, int *status) {
  static Program prog;
  Vm *vm = malloc(sizeof *vm);
  if (!vm) {
    *status = -3;
    return 0;
  }
  vm_reset(vm);
  *status = assemble(src, &prog) ? execute(vm, &prog, budget) : -4;
  *top = vm->sp ? vm->stack[vm->sp - 1] : 0;
  uint64_t h = *status == 0 ? vm->output_hash : 0;
  free(vm);
  return h;
}

/* Built-in sample: iterative sieve of Eratosthenes over the VM heap, counting primes < limit. */
int64_t vm_count_primes(int limit) {
  static const char kSieve[] =
      "push 2 store 1 "
      "outer: load 1 load 0 lt jz @count "
      "load 1 aload jnz @next "
      "load 1 load 1 mul store 2 "
      "mark: load 2 load 0 lt jz @next "
      "load 2 push 1 astore load 2 load 1 add store 2 jmp @mark "
      "next: inc 1 jmp @outer "
      "count: push 0 store 3 push 2 store 1 "
      "scan: load 1 load 0 lt jz @done load 1 aload jnz @skip inc 3 "
      "skip: inc 1 jmp @scan "
      "done: load 3 print load 3 halt";
  Program prog;
  if (limit < 0 || limit > VM_HEAP || !assemble(kSieve, &prog)) return -1;
  Vm *vm = malloc(sizeof *vm);
  if (!vm) return -1;
  vm_reset(vm);
  vm->frames[0].locals[0] = limit;
  int st = execute(vm, &prog, 10000000);
  int64_t r = st == 0 && vm->sp ? vm->stack[vm->sp - 1] : -1;
  free(vm);
  return r;
}
