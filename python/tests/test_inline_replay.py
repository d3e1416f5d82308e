"""Replay keys and lines (mlgo_env.tuning.ir_sites, replay_lines, inline_replay): no clang here; the
real compiler's side is tests/python/test_tune.py (a build with the file gives the tuned
objects). The compile lookup: test_compile_entries.py."""
import dataclasses
import json

import pytest

from mlgo_env.tuning import inline_replay as ir
from mlgo_env.tuning import ir_sites
from mlgo_env import elf
from mlgo_env.tuning import replay_lines as rl

RECORD = """--- !Passed
Pass:            inline
Name:            Inlined
Function:        f
Args:
  - Callee:          g
...
--- !Missed
Pass:            inline-ml
Name:            IniningNotAttempted
DebugLoc:        { File: 'src/a.c', Line: 61,
                   Column: 12 }
Function:        rc_price
Args:
  - Callee:          'bit''s'
  - callee_users:    '4'
  - inlining_default: '1'
  - ShouldInline:    'false'
...
--- !Passed
Pass:            inline-ml
Name:            InliningAttempted
DebugLoc:        { File: a.h, Line: 3, Column: 5 }
Function:        main
Args:
  - Callee:          helper
  - inlining_default: '0'
  - ShouldInline:    'true'
...
--- !Analysis
Pass:            inline-ml
Name:            Other
Function:        main
Args:
  - Callee:          helper
...
"""

# f (line 10) calls g at 12:7 inside a lexical block; h (line 20) was inlined into f at
# 14:3, and h's call of k at 22:9 now sits in f with that chain; a C++ caller with a
# linkage name; an intrinsic and an indirect call are not sites.
IR = """define dso_local i32 @f(i32 %0) !dbg !10 {
  %2 = call i32 @g(i32 %0), !dbg !30
  %3 = tail call fastcc i32 @k(ptr @table, i32 %2) #4, !dbg !32
  call void @llvm.lifetime.start.p0(ptr %p), !dbg !30
  %4 = call i32 %fp(i32 1), !dbg !30
  ret i32 %3, !dbg !30
}

define linkonce_odr void @"_ZN1S3runEv"(ptr %this) !dbg !40 {
  invoke void @_Z4workv()
          to label %ok unwind label %bad, !dbg !41
}
!1 = !DIFile(filename: "src/a.c", directory: "/w")
!2 = !DIFile(filename: "src/a.h", directory: "/w")
!10 = distinct !DISubprogram(name: "f", scope: !1, file: !1, line: 10, type: !5, unit: !0)
!11 = distinct !DILexicalBlock(scope: !10, file: !1, line: 11, column: 3)
!12 = !DILexicalBlockFile(scope: !11, file: !2, discriminator: 0)
!20 = distinct !DISubprogram(name: "h", scope: !2, file: !2, line: 20, type: !5, unit: !0)
!30 = !DILocation(line: 12, column: 7, scope: !11)
!31 = !DILocation(line: 14, column: 3, scope: !10)
!32 = !DILocation(line: 22, column: 9, scope: !20, inlinedAt: !31)
!40 = distinct !DISubprogram(name: "run", linkageName: "_ZN1S3runEv", scope: !2, file: !2, line: 5, unit: !0)
!41 = !DILocation(line: 4, column: 2, scope: !40)
"""


def test_records_are_the_inline_ml_decisions_in_order():
    got = ir_sites.parse_records(RECORD)
    assert got == [
        ir_sites.Decision("rc_price", "bit's", "src/a.c", 61, 12, False, True),
        ir_sites.Decision("main", "helper", "a.h", 3, 5, True, False)]


def test_a_decision_record_without_a_location_is_refused():
    text = RECORD.replace("DebugLoc:        { File: a.h, Line: 3, Column: 5 }\n", "")
    with pytest.raises(ValueError, match="gline-tables-only"):
        ir_sites.parse_records(text)


def test_calls_carry_their_whole_inlined_at_chain():
    calls = ir_sites.parse_calls(IR)
    assert [(c.caller, c.callee, c.key) for c in calls] == [
        ("f", "g", "f:2:7"),
        ("f", "k", "h:2:9 @ f:4:3"),
        ("_ZN1S3runEv", "_Z4workv", "_ZN1S3runEv:4294967295:2")]  # line 4 < 5: modulo 2**32
    assert calls[0].site == ("f", "g", "src/a.c", 12, 7)
    assert calls[1].file == "src/a.h"


def test_a_location_whose_scope_leads_nowhere_is_an_error():
    with pytest.raises(ValueError, match="subprogram"):
        ir_sites.parse_calls(IR.replace("scope: !11)\n!31", "scope: !99)\n!31"))


def test_lines_are_the_format_clang_reads():
    assert ir_sites.replay_line("g", "f", "h:2:9 @ f:4:3", True) == (
        "mlgo-env:1:1: remark: 'g' inlined into 'f' with (cost=0, threshold=0) "
        "at callsite h:2:9 @ f:4:3;")
    assert ir_sites.replay_line("g", "f", "f:2:7", False) == (
        "mlgo-env:1:1: remark: 'g' will not be inlined into 'f' at callsite f:2:7;")


def test_executable_bytes_refuses_what_is_not_elf(tmp_path):
    (tmp_path / "x.o").write_bytes(b"not an object")
    with pytest.raises(ValueError, match="x.o is not an object file"):
        elf.executable_bytes(str(tmp_path / "x.o"))


def test_ir_strings_are_hex_escaped_utf8():
    ir = IR.replace('@"_ZN1S3runEv"', '@"caf\\C3\\A9"').replace(
        'linkageName: "_ZN1S3runEv"', 'linkageName: "caf\\C3\\A9"')
    assert ir_sites.parse_calls(ir)[2].caller == "caf\u00e9"
    assert ir_sites.parse_calls(ir)[2].key.startswith("caf\u00e9:")


def test_one_callee_and_key_answered_both_ways_by_two_callers_is_a_conflict():
    # -gline-tables-only gives A::get and B::get one frame name: clang keys by callee + key
    a = ir.ModuleLines("a.o", 10.0, {("_ZN1A3getEv", "g", "get:1:2"): True})
    b = ir.ModuleLines("b.o", 50.0, {("_ZN1B3getEv", "g", "get:1:2"): False})
    m = ir.merge([a, b])
    assert m.lines == {("_ZN1B3getEv", "g", "get:1:2"): False} and m.conflicts == 1


def test_merge_keeps_the_answer_of_the_module_that_saves_more():
    a = ir.ModuleLines("a.o", 10.0, {("f", "g", "f:1:2"): True, ("f", "h", "f:3:4"): False})
    b = ir.ModuleLines("b.o", 50.0, {("f", "g", "f:1:2"): False})
    m = ir.merge([a, b])
    assert m.lines == {("f", "g", "f:1:2"): False, ("f", "h", "f:3:4"): False}
    assert m.conflicts == 1
    assert m.owners[("f", "g", "f:1:2")] == {"b.o"}


def test_lines_that_make_another_module_larger_are_dropped_only_if_the_total_shrinks():
    owner = ir.ModuleLines("a.o", 30.0, {("inl", "g", "inl:1:2"): False}, {"inl", "f"},
                           exact_alone=True, tuned=b"x" * 70, replayed=70)
    other = ir.ModuleLines("b.o", 0.0, {}, {"inl", "main"}, exact_alone=True,
                           tuned=b"x" * 40, replayed=45)
    merged = ir.merge([owner, other])

    def costly_drop():  # without the line, a.o loses more than b.o gains
        owner.replayed = 100 if ("inl", "g", "inl:1:2") not in merged.lines else 70
        other.replayed = 40 if ("inl", "g", "inl:1:2") not in merged.lines else 45

    assert ir._drop_spoilers(merged, [owner, other], costly_drop) == 0
    assert ("inl", "g", "inl:1:2") in merged.lines and other.replayed == 45

    def cheap_drop():
        owner.replayed = 72 if ("inl", "g", "inl:1:2") not in merged.lines else 70
        other.replayed = 40 if ("inl", "g", "inl:1:2") not in merged.lines else 45

    assert ir._drop_spoilers(merged, [owner, other], cheap_drop) == 1
    assert merged.lines == {} and other.replayed == 40


FRONT = """define internal i32 @h(i32 %0) !dbg !20 {
  ret i32 0
}
define dso_local i32 @f(i32 %0) !dbg !10 {
  ret i32 0
}
!1 = !DIFile(filename: "src/a.c", directory: "/w")
!10 = distinct !DISubprogram(name: "f", scope: !1, file: !1, line: 10, unit: !0)
!20 = distinct !DISubprogram(name: "h", scope: !1, file: !1, line: 20, unit: !0)
"""


def test_a_call_in_its_callers_own_code_is_keyed_from_the_callers_first_line():
    subs = ir_sites.subprograms(FRONT)
    assert {(s["function"], s["line"], s["file"]) for s in subs} == {
        ("f", 10, "src/a.c"), ("h", 20, "src/a.c")}
    own = ir_sites.Decision("f", "g", "src/a.c", 12, 7, True, False)
    assert ir_sites.own_site_key(own, subs) == "f:2:7"
    # past h's first line, or in another file, the call came from elsewhere: no guess
    assert ir_sites.own_site_key(dataclasses.replace(own, line=22), subs) is None
    assert ir_sites.own_site_key(dataclasses.replace(own, file="src/a.h"), subs) is None


def write_json(path, value):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))


def test_status_names_a_replay_file_that_is_not_the_one_written(tmp_path):
    from mlgo_env.tuning.table import TableError
    rl.write_lines(str(tmp_path / "inline-replay.txt"), {("f", "g", "f:2:7"): False})
    r = rl.ModuleLines("a.o", 1.0, {("f", "g", "f:2:7"): False}, tuned=b"x", replayed=1,
                       exact=True, exact_alone=True)
    ir._report(str(tmp_path), str(tmp_path / "inline-replay.txt"), [r],
               ir.merge([r]), 0, lambda line: None)
    assert ir.check_replay_file(str(tmp_path))["lines"] == 1
    write_json(tmp_path / "modules" / "0123456789abcdef.json", {"entries": []})
    with pytest.raises(TableError, match="made from another table"):
        ir.check_replay_file(str(tmp_path))
    ir._report(str(tmp_path), str(tmp_path / "inline-replay.txt"), [r],
               ir.merge([r]), 0, lambda line: None)
    assert ir.check_replay_file(str(tmp_path))["lines"] == 1
    with open(tmp_path / "inline-replay.txt", "r+") as f:
        f.truncate(50)
    with pytest.raises(TableError, match="inline-replay.txt is not the file tune wrote"):
        ir.check_replay_file(str(tmp_path))
