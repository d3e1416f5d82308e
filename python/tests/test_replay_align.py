"""Keying the tuned "no"s a replay compile still inlined (mlgo_env.tuning.replay_align) from
clang's own inliner remarks (ir_sites.parse_inline_remarks): no clang here; the real
compiler's side is tests/python/test_replay_copies.py."""
from mlgo_env.tuning import ir_sites
from mlgo_env.tuning.ir_sites import Decision, Remark
from mlgo_env.tuning.replay_align import inlined_noes

REMARKS = """--- !Passed
Pass:            inline
Name:            Inlined
DebugLoc:        { File: lz4hc.c, Line: 421, Column: 49 }
Function:        optimal
Args:
  - String:          ''''
  - Callee:          hashPtr
    DebugLoc:        { File: lz4hc.c, Line: 87, Column: 0 }
  - String:          ''' inlined into '''
  - Caller:          optimal
    DebugLoc:        { File: lz4hc.c, Line: 1341, Column: 0 }
  - String:          ' with '
  - String:          '(cost='
  - Cost:            '-30'
  - String:          ', threshold='
  - Threshold:       '5'
  - String:          ')'
  - String:          ' at callsite '
  - String:          'wider: match'
  - String:          ':'
  - Line:            '181'
  - String:          ':'
  - Column:          '49'
  - String:          '.'
  - Disc:            '2'
  - String:          ' @ '
  - String:          optimal
  - String:          ':'
  - Line:            '119'
  - String:          ':'
  - Column:          '29'
  - String:          ';'
...
--- !Missed
Pass:            inline
Name:            TooCostly
DebugLoc:        { File: 'a dir/x.c', Line: 7, Column: 3 }
Function:        f
Args:
  - Callee:          g
  - String:          ' because too costly to inline '
...
--- !Missed
Pass:            inline
Name:            NoDefinition
DebugLoc:        { File: x.c, Line: 9, Column: 5 }
Function:        f
Args:
  - Callee:          malloc
...
--- !Passed
Pass:            inline
Name:            AlwaysInline
DebugLoc:        { File: x.c, Line: 10, Column: 5 }
Function:        f
Args:
  - Callee:          forced
  - Reason:          always inline attribute
  - String:          ' at callsite '
  - String:          f
  - String:          ':'
  - Line:            '3'
  - String:          ':'
  - Column:          '5'
  - String:          ';'
...
--- !Passed
Pass:            inline
Name:            AlwaysInline
DebugLoc:        { File: x.c, Line: 11, Column: 5 }
Function:        f
Args:
  - Callee:          replayed
  - Reason:          previously inlined
  - String:          ' at callsite '
  - String:          f
  - String:          ':'
  - Line:            '4'
  - String:          ':'
  - Column:          '5'
  - String:          ';'
...
--- !Passed
Pass:            gvn
Name:            LoadElim
Function:        f
...
"""


def test_remarks_are_the_inliners_in_order_with_the_keys_of_inlined_calls():
    got = ir_sites.parse_inline_remarks(REMARKS)
    assert [r.name for r in got] == ["Inlined", "TooCostly", "NoDefinition", "AlwaysInline",
                                     "AlwaysInline"]
    first = got[0]
    assert first.site == ("optimal", "hashPtr", "lz4hc.c", 421, 49)
    assert first.inlined and first.asked
    # the discriminator is left out: the LineColumn key has none
    assert first.key == "wider: match:181:49 @ optimal:119:29"
    too_costly = got[1]
    assert too_costly.file == "a dir/x.c" and not too_costly.inlined and too_costly.key == ""
    assert [r.asked for r in got[1:]] == [True, False, False, True]
    assert got[4].key == "f:4:5"  # a replay file's "yes"


def test_a_remark_without_a_location_is_no_decisions_site():
    (got,) = ir_sites.parse_inline_remarks(
        "--- !Missed\nPass: inline\nName: NoDefinition\nFunction: __clang_call_terminate\n"
        "Args:\n  - Callee: __cxa_begin_catch\n...\n")
    assert got.site == ("__clang_call_terminate", "__cxa_begin_catch", "", 0, 0)
    assert not got.asked and got.key == ""
    tuned = [d("a", 1, False)]
    assert inlined_noes(tuned, [got, r("a", 1, True, "k")], set()) == [(tuned[0], "k")]


def d(callee, line, inline, default=True, caller="f"):
    return Decision(caller, callee, "x.c", line, 1, inline, default)


def r(callee, line, inlined, key="", caller="f", asked=True):
    return Remark("Inlined" if inlined else "TooCostly", caller, callee, "x.c", line, 1,
                  inlined, key, asked)


def test_a_tuned_no_the_replay_inlined_is_keyed_by_its_remark():
    tuned = [d("a", 1, True), d("b", 2, False), d("c", 3, True)]
    replay = [r("a", 1, True, "f:0:1"), r("b", 2, True, "g:1:1 @ f:1:1"), r("c", 3, True, "f:2:1")]
    assert inlined_noes(tuned, replay, set()) == [(tuned[1], "g:1:1 @ f:1:1")]


def test_a_no_the_file_answered_leaves_no_remark_and_is_passed_over():
    tuned = [d("a", 1, True), d("b", 2, False), d("c", 3, True)]
    replay = [r("a", 1, True, "k"), r("c", 3, True, "k3")]
    assert inlined_noes(tuned, replay, {("f", "b")}) == []


def test_copies_of_one_site_answered_both_ways_are_told_apart_by_what_follows():
    # Two copies of one site (one innermost location): the first "no", the second "yes".
    tuned = [d("s", 5, False), d("s", 5, True), d("t", 6, True)]
    # The file already answers the first copy: only the second's remark is left.
    keyed = [r("s", 5, True, "s2 @ f:9:1"), r("t", 6, True, "t")]
    assert inlined_noes(tuned, keyed, {("f", "s")}) == []
    # Nothing answers the first copy yet: the replay inlined both.
    unkeyed = [r("s", 5, True, "s1 @ f:8:1"), r("s", 5, True, "s2 @ f:9:1"), r("t", 6, True, "t")]
    assert inlined_noes(tuned, unkeyed, set()) == [(tuned[0], "s1 @ f:8:1")]


def test_mandatory_remarks_are_skipped_and_the_walk_stops_where_the_compiles_differ():
    tuned = [d("a", 1, True), d("b", 2, False), d("c", 3, True), d("e", 5, False)]
    replay = [r("forced", 9, True, "x", asked=False), r("a", 1, True, "k"),
              r("b", 2, True, "kb"), r("other", 4, True, "ko"), r("e", 5, True, "ke")]
    # b departs; then the replay inlines a call the tuned compile never saw: nothing after
    # that point is trusted (e's remark is not read as its answer).
    assert inlined_noes(tuned, replay, set()) == [(tuned[1], "kb")]
