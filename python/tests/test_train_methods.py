"""The training methods' registry and the command line it builds (no clang): each
problem's default method, the refusal of an unknown one, and --help listing only the
common options, the problem's and the chosen method's."""

import re

import pytest

from mlgo_env.training import methods
from mlgo_env.training.train import TRAINERS, main, parse_args


def test_each_problem_has_a_default_method_and_unknown_ones_are_named():
    for problem in TRAINERS:
        cls = methods.method_class(problem)
        assert cls.default and cls.problem == problem and methods.names(problem)[0] == cls.name
    with pytest.raises(ValueError, match="no training method 'nosuch' for inlining"):
        methods.method_class("inlining", "nosuch")
    with pytest.raises(ValueError, match="no training method for problem 'nosuch'"):
        methods.method_class("nosuch")


def test_a_method_brings_its_options_and_defaults():
    common = ["--corpus=c", "--output=o", "--minutes=1"]
    inlining = parse_args(["--problem=inlining", *common])
    regalloc = parse_args(["--problem=regalloc", *common])
    assert inlining.method == regalloc.method == "es"
    assert (inlining.sigma, regalloc.sigma) == (10.0, 0.05)
    assert (inlining.check_modules, regalloc.check_modules) == (100, 12)
    assert not hasattr(inlining, "start") and not hasattr(regalloc, "search_modules")


@pytest.mark.parametrize("problem", sorted(TRAINERS))
def test_help_lists_at_most_25_options(problem, capsys):
    with pytest.raises(SystemExit) as e:
        main([f"--problem={problem}", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    options = set(re.findall(r"^\s+(?:-h, )?(--[a-z-]+)", out, re.M))
    assert "--help" in options and "--method" in options and len(options) <= 25, options
    assert f"--problem={problem}:" in out and "--method=es:" in out


def test_an_unknown_method_is_refused_with_the_choices(capsys):
    with pytest.raises(SystemExit):
        parse_args(["--problem=inlining", "--method=classifier", "--corpus=c", "--output=o",
                    "--minutes=1"])
    assert "invalid choice: 'classifier' (choose from 'es')" in capsys.readouterr().err
