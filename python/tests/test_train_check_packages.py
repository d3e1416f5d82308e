"""--check-packages: the check modules come from the named packages only, and those
packages are never searched nor explored (selection then measures transfer)."""

from types import SimpleNamespace

import pytest

from mlgo_env.training.module_sets import choose_modules, package_of
from mlgo_env.training.train import Trainer, parse_args


def trainer(*extra):
    return Trainer(parse_args(["--problem=inlining", "--corpus=c", "--output=o",
                               "--minutes=1", *extra]))


def cache_of(modules, deciding):
    decided = SimpleNamespace(actions=[0, 1])
    return SimpleNamespace(trajectories={m: [decided] for m in modules if m in deciding})


MODULES = [f"{p}/m{i}.o" for p in ("zlib", "lz4", "pcre2", "xz") for i in range(6)]


def test_check_modules_come_only_from_the_named_packages():
    t = trainer("--check-packages=pcre2,xz", "--check-modules=5")
    traced = set(MODULES[::2])  # the trace saw half of each package
    search, check = t.choose_modules(cache_of(MODULES, traced), MODULES)
    assert len(check) == 5 and {package_of(m) for m in check} <= {"pcre2", "xz"}
    assert {package_of(m) for m in search} == {"zlib", "lz4"}
    searched = {m for m in traced if package_of(m) in ("zlib", "lz4")}
    assert set(search) | set(t.holdout) == searched and not set(search) & set(t.holdout)


def test_without_the_flag_check_modules_are_drawn_from_every_package():
    sets = choose_modules(cache_of(MODULES, set(MODULES)).trajectories, MODULES, 0, 200, 4,
                          set(), 0.0)
    search, check = sets.search, sets.check
    assert len(check) == 4 and not set(check) & set(search)
    assert len(search) == len(MODULES) - 4


def test_an_unknown_or_exhausting_package_list_is_refused():
    with pytest.raises(ValueError, match="no training module of nosuch"):
        trainer("--check-packages=nosuch").choose_modules(cache_of(MODULES, set(MODULES)),
                                                          MODULES)
    every = "--check-packages=zlib,lz4,pcre2,xz"
    with pytest.raises(ValueError, match="leaves no deciding module"):
        trainer(every).choose_modules(cache_of(MODULES, set(MODULES)), MODULES)


def test_held_out_modules_come_from_the_searched_packages_only():
    t = trainer("--check-packages=pcre2,xz", "--check-modules=5")  # a quarter held out
    search, check = t.choose_modules(cache_of(MODULES, set(MODULES)), MODULES)
    assert len(t.holdout) == 3  # a quarter of the 12 deciding zlib and lz4 modules
    assert {package_of(m) for m in t.holdout} <= {"zlib", "lz4"}
    assert not set(t.holdout) & (set(search) | set(check))
    assert len(search) == 9
    # Share 0 leaves the search as it was before the held-out set existed.
    traced = cache_of(MODULES, set(MODULES)).trajectories
    t0 = choose_modules(traced, MODULES, 0, 200, 5, {"pcre2", "xz"}, 0.0)
    assert t0.holdout == [] and t0.search[:9] == search
    with pytest.raises(ValueError, match="held-out share"):
        choose_modules(traced, MODULES, 0, 200, 5, set(), 1.0)
