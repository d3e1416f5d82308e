"""bench/regalloc_marks.py and bench/regalloc_limit.py: the assembly's spill and reload
comments become marks, callgrind files are read exactly, register copies are told from
other moves, compiles are turned into -S compiles; and, with the real clang-22 and valgrind,
a small program (its hot function in a shared library, spilling in a loop) built through
the recorder gets its marks placed on stack accesses of the linked files and counted as
often as the loop runs."""
import os
import re
import subprocess
import sys

import pytest

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH)
import regalloc_limit as rl  # noqa: E402
import regalloc_marks as rm  # noqa: E402

ASSEMBLY = """\
\t.text
\t.globl\tf
f:                                      # @f
# %bb.0:
\tpushq\t%rbx
\tmovq\t%rdi, 8(%rsp)                   # 8-byte Spill
\tmovl\t%esi, %ebx
.LBB0_1:                                # =>This Inner Loop Header: Depth=1
\tmovq\t8(%rsp), %rax                   # 8-byte Reload
\taddq\t16(%rsp), %rax                  # 8-byte Folded Reload
\tmovq\t%rax, 24(%rsp)
\t                                      # 4-byte Folded Spill
\t# kill: def $eax killed $eax killed $rax
\tretq
.Lfunc_end0:
\t.size\tf, .Lfunc_end0-f
"""


def test_marks_go_before_the_commented_instructions():
    text, marks = rm.mark_assembly(ASSEMBLY)
    assert [k for _, k in marks] == ["spill", "reload", "folded-reload", "folded-spill"]
    lines = text.split("\n")
    for label, kind in marks:
        at = lines.index(f"{label}:")
        assert rm.is_instruction_line(lines[at + 1]), lines[at + 1]
        assert rm.mark_kind(label) == kind
    # the comment on a line of its own belongs to the store above it
    assert lines[lines.index(f"{marks[3][0]}:") + 1].startswith("\tmovq\t%rax, 24(%rsp)")
    assert "\n".join(x for x in lines if not x.startswith(rm.MARK_PREFIX)) == ASSEMBLY
    assert rm.mark_kind("f") is None and rm.spill_kind("# kill: def $eax") is None
    assert rm.spill_kind("# Unknown-size Folded Reload") == "folded-reload"


CALLGRIND = """\
# callgrind format
version: 1
positions: instr line
events: Ir
summary: 23

ob=(1) /bin/prog
fl=(1) a.c
fn=(1) main
0x1000 3 2
+4 * 5
cob=(2) /lib/libx.so
cfn=(2) work
calls=1 0x2000 7
* * 100
-2 +1 1
ob=(2)
fn=(2)
0x2000 7 10
+3 0 5
"""


def test_callgrind_counts_per_instruction_without_call_costs():
    counts, total = rm.read_callgrind(CALLGRIND)
    assert total == 23
    assert counts == {"/bin/prog": {0x1000: 2, 0x1004: 5, 0x1002: 1},
                      "/lib/libx.so": {0x2000: 10, 0x2003: 5}}


def test_callgrind_refuses_what_it_cannot_read():
    with pytest.raises(ValueError, match="says 24"):
        rm.read_callgrind(CALLGRIND.replace("summary: 23", "summary: 24"))
    with pytest.raises(ValueError, match="dump-instr"):
        rm.read_callgrind(CALLGRIND.replace("positions: instr line", "positions: line"))
    with pytest.raises(ValueError, match=r"\(3\) used before"):
        rm.read_callgrind(CALLGRIND.replace("ob=(2)\n", "ob=(3)\n"))


def test_register_copies():
    assert rm.is_register_copy("movq", "%rsi, %rbx")
    assert rm.is_register_copy("movaps", "%xmm1, %xmm0")
    assert rm.is_register_copy("movq", "%xmm0, %rax")
    assert not rm.is_register_copy("movl", "%eax, %eax")  # zero-extends, not a copy
    assert not rm.is_register_copy("movq", "8(%rsp), %rax")
    assert not rm.is_register_copy("movl", "$0x1, %eax")
    assert not rm.is_register_copy("movss", "%xmm1, %xmm0")  # merges
    assert not rm.is_register_copy("movzbl", "%al, %eax")
    assert rm.is_push_or_pop("pushq", "%rbx") and not rm.is_push_or_pop("pushq", "$0x1")
    assert rm.is_stack_access("movq", "0x8(%rsp), %rax")
    assert rm.is_stack_access("addl", "0x10(%rsp,%rcx,4), %eax")
    assert not rm.is_stack_access("leaq", "0x8(%rsp), %rdi")
    assert not rm.is_stack_access("movq", "0x8(%rbx), %rax")
    dump = ("\nx.so:\tfile format elf64-x86-64\n\n0000000000001100 <work>:\n"
            "    1100:      \tmovl\t%esi, %eax\n    1102:      \tjle\t0x1114 <work+0x14>\n"
            "    1104:      \tandl\t$0xff, %edx       # imm = 0xFF\n")
    assert rm.read_objdump(dump) == [(0x1100, "movl", "%esi, %eax"),
                                     (0x1102, "jle", "0x1114 <work+0x14>"),
                                     (0x1104, "andl", "$0xff, %edx")]


def test_asm_commands_drop_object_and_dependency_output():
    argv = ["clang-22", "-O2", "-MT", "x.lo", "-MD", "-MP", "-MF", ".deps/x.Tpo", "-c",
            "x.c", "-Wp,-MD,.deps/y.d", "-fPIC", "-o", ".libs/x.o"]
    assert rl.asm_commands(argv) == [(["clang-22", "-O2", "x.c", "-fPIC", "-S", "-o",
                                       ".libs/x.o.rl.s"], ".libs/x.o")]
    # several sources: each to its own name in the working directory
    assert rl.asm_commands(["clang-22", "-c", "-x", "c", "a/p.c", "q.c", "-I", "r.c"]) == [
        (["clang-22", "-x", "c", "a/p.c", "-I", "r.c", "-S", "-o", "p.o.rl.s"], "p.o"),
        (["clang-22", "-x", "c", "q.c", "-I", "r.c", "-S", "-o", "q.o.rl.s"], "q.o")]
    assert rl.asm_commands(["clang-22", "x.o", "-o", "prog"]) == []  # a link
    assert rl.asm_commands(["clang-22", "x.c", "-o", "prog"]) == []  # compile and link
    assert rl.asm_commands(["clang-22", "-c", "x.c", "-o", "x.obj"]) == []


HOT = """\
long step(long x);
long hot(long n) {
  long a0 = 1, a1 = 2, a2 = 3, a3 = 4, a4 = 5, a5 = 6, a6 = 7, a7 = 8, a8 = 9, a9 = 10;
  for (long i = 0; i < n; i++) {
    a0 += step(a9); a1 += step(a0); a2 += step(a1); a3 += step(a2); a4 += step(a3);
    a5 += step(a4); a6 += step(a5); a7 += step(a6); a8 += step(a7); a9 += step(a8);
  }
  return a0 ^ a1 ^ a2 ^ a3 ^ a4 ^ a5 ^ a6 ^ a7 ^ a8 ^ a9;
}
"""
STEP = "long step(long x) { return x * 3 + (x >> 7); }\n"
MAIN = ('#include <stdio.h>\nlong hot(long n);\n'
        'int main(void) { printf("%ld\\n", hot(1000)); return 0; }\n')


def build_through_recorder(where):
    log = os.path.join(where, "compiles.log")
    cc = [sys.executable, os.path.join(BENCH, "regalloc_limit.py"), "--record", log, "--",
          rl.CLANG]
    for name, text in (("hot.c", HOT), ("step.c", STEP), ("main.c", MAIN)):
        with open(os.path.join(where, name), "w") as f:
            f.write(text)
    # the library's two sources in one compile (each to its own object), the program's alone
    subprocess.run(cc + ["-O2", "-fPIC", "-c", "hot.c", "step.c"], cwd=where, check=True)
    subprocess.run(cc + ["-O2", "-MD", "-c", "main.c", "-o", "main.o"], cwd=where, check=True)
    subprocess.run(cc + ["-shared", "hot.o", "step.o", "-o", "libhot.so"], cwd=where, check=True)
    subprocess.run(cc + ["main.o", "-L.", "-lhot", "-o", "prog"], cwd=where, check=True)
    return log


def test_a_real_build_counts_its_reloads_as_often_as_they_run(tmp_path):
    where = str(tmp_path)
    objects = rl.mark_build(build_through_recorder(where), 2)
    assert sorted(os.path.basename(o["object"]) for o in objects) == ["hot.o", "main.o", "step.o"]
    assert all("error" not in o for o in objects), objects
    marked = {os.path.basename(o["object"]): o["marks"] for o in objects}
    assert marked["hot.o"] > 0  # ten values live across calls: six callee-saved registers
    binaries = {}
    env = dict(os.environ, LD_LIBRARY_PATH=where)
    fig = rl.measure([os.path.join(where, "prog")], env, os.path.join(where, "cg.out"), where,
                     binaries, objects)
    lib = binaries[os.path.realpath(os.path.join(where, "libhot.so"))]
    assert lib.objects == 2 and len(lib.marks) == marked["hot.o"]
    # each mark sits on an instruction of the linked library that touches a stack slot
    text = {a: (m, o) for a, m, o in lib.instructions}
    for addr in lib.marks:
        assert re.search(r"\((%rsp|%rbp)\)", text[addr][1]), text[addr]
    assert set(lib.marks) <= lib.stack  # no frame pointer at -O2: every one on %rsp
    # the loop runs 1000 times; every reload in it runs each time
    assert fig["reload"] + fig["folded-reload"] >= 1000
    assert fig["files"] == {"libhot.so": 2, "prog": 1}
    assert 0 < fig["package"] < fig["total"]
    assert fig["static reload"] + fig["static folded-reload"] + fig["static spill"] \
        + fig["static folded-spill"] == marked["hot.o"]


def test_an_object_not_in_the_linked_file_is_not_placed(tmp_path):
    where = str(tmp_path)
    objects = rl.mark_build(build_through_recorder(where), 2)
    with open(os.path.join(where, "prog"), "rb") as f:
        prog = rm.read_elf(f.read())
    for o in objects:
        with open(o["marked"], "rb") as f:
            obj = rm.read_elf(f.read())
        placed = rm.place_sections(obj, prog)
        assert bool(placed) == (os.path.basename(o["object"]) == "main.o")


def test_the_same_code_linked_twice_is_placed_twice(tmp_path):
    """Two sources with the same static function (same name, same bytes): each copy in the
    program belongs to one of them, so both are package code."""
    where = str(tmp_path)
    log = os.path.join(where, "compiles.log")
    cc = [sys.executable, os.path.join(BENCH, "regalloc_limit.py"), "--record", log, "--",
          rl.CLANG]
    helper = "__attribute__((noinline)) static long helper(long x) { return x * 7 + 3; }\n"
    sources = {"a.c": helper + "long fa(long x) { return helper(x) + 1; }\n",
               "b.c": helper + "long fb(long x) { return helper(x) + 2; }\n",
               "main.c": "long fa(long); long fb(long);\n"
                         "int main(int c, char **v) { return (int)(fa(c) + fb(c)); }\n"}
    for name, text in sources.items():
        with open(os.path.join(where, name), "w") as f:
            f.write(text)
    # each function its own section: the two helpers are the same section, byte for byte
    subprocess.run(cc + ["-O2", "-ffunction-sections", "-c", "a.c", "b.c", "main.c"],
                   cwd=where, check=True)
    subprocess.run([rl.CLANG, "a.o", "b.o", "main.o", "-o", "prog"], cwd=where, check=True)
    objects = rl.mark_build(log, 2)
    assert all("error" not in o for o in objects), objects
    prog = rl.Binary(os.path.join(where, "prog"), objects)
    with open(os.path.join(where, "prog"), "rb") as f:
        copies = [s.value for s in rm.read_elf(f.read()).symbols if s.name == "helper"]
    assert len(copies) == 2 and all(prog.inside(a) for a in copies)
    assert prog.objects == 3
