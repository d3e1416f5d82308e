"""research/line_shifts.py: where a release moves the call lines of the functions it keeps."""
import research_paths  # noqa: F401
from line_shifts import functions, shifts, summary, tree_shifts

OLD = """#include <stdio.h>

static int
helper(int x)
{
  return abs(x) + 1;
}

int main(void)
{
  int a = helper(1);
  printf("%d\\n", a);
  return 0;
}
""".splitlines()
#: two lines added above main's calls; helper unchanged
NEW = OLD[:10] + ["  int b = 2;", "  b++;"] + OLD[10:]


def test_definitions_in_gnu_and_one_line_layouts_are_found():
    assert functions(OLD) == [(4, "helper"), (9, "main")]
    assert functions(["int f(void);", "static int g(int);"]) == []


def test_moved_calls_are_measured_from_their_functions_first_line():
    got = shifts(OLD, NEW)
    assert sorted(got) == [(2, 0), (2, 2), (3, 2)]  # helper's call kept, main's two moved
    s = summary(got, (-1, 1))
    assert s["lines"] == len(got) and 0 < s["moved"] < 1
    assert s["within"] == 0.0 and s["down"] == 1.0
    assert summary(got, (-16, 64))["within"] == 1.0


def test_trees_compare_the_files_both_have(tmp_path):
    for name, text in (("old", OLD), ("new", NEW)):
        (tmp_path / name / "src").mkdir(parents=True)
        (tmp_path / name / "src" / "a.c").write_text("\n".join(text))
    (tmp_path / "old" / "src" / "gone.c").write_text("\n".join(OLD))
    assert sorted(tree_shifts(str(tmp_path / "old"), str(tmp_path / "new"))) == \
        sorted(shifts(OLD, NEW))


def test_a_function_defined_twice_in_a_file_is_left_out():
    twice = OLD + ["#if 0"] + OLD[8:] + ["#endif"]  # main defined again under #if
    assert [s for s in shifts(twice, twice) if s[0] in (2, 3)] == [(2, 0)]  # helper's only
