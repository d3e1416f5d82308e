"""The one registry style (mlgo_env.registry), for the tuners and the training methods (no
clang): lookups by name, a second class under one name refused, and every variant's module
in its list (a module missing there would never register)."""
import os
import pkgutil

import pytest

from mlgo_env import registry
from mlgo_env.training import method, methods
from mlgo_env.tuning import tuner, tuners


def test_a_registry_files_classes_by_key_and_refuses_a_second_under_one():
    r = registry.Registry("thing", lambda cls: cls.name)

    @r.register
    class A:
        name = "a"

    assert r.register(A) is A and r.find("a") is A and r.find("b") is None
    with pytest.raises(ValueError, match="two things for 'a'"):
        r.register(type("B", (), {"name": "a"}))
    assert r.classes() == [A]


def test_tuners_are_found_by_problem_and_every_tuner_module_is_listed():
    assert tuners.tuner_class("inlining").__name__ == "InliningTuner"
    assert tuners.tuner_class("regalloc").problem == "regalloc"
    with pytest.raises(ValueError, match=r"no tuner for problem 'x' \(known: inlining, regalloc\)"):
        tuners.tuner_class("x")
    listed = {cls.__module__ for cls in tuner.TUNERS.classes()}
    on_disk = {f"mlgo_env.tuning.{i.name}" for i in pkgutil.iter_modules(
        [os.path.dirname(tuner.__file__)]) if i.name.endswith("_tuner")}
    assert on_disk and on_disk == listed


def test_every_module_of_the_methods_package_registers_a_method():
    listed = {cls.__module__ for cls in method.METHODS.classes()}
    on_disk = {f"{methods.__name__}.{i.name}" for i in pkgutil.iter_modules(methods.__path__)}
    assert on_disk and on_disk == listed
    assert all(issubclass(cls, method.Method) for cls in method.METHODS.classes())
