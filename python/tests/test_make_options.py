"""make()'s keywords are env's option table (include/mlgo/env/environment_option_table.h), as
mlgo-env's environment flags are: every keyword the core lists is taken and converted by
the core, an unknown one is a TypeError, and each flag is the keyword's mlgo-env spelling
(no clang needed: every value here is refused before an environment is made)."""
import subprocess

import pytest

import mlgo_env
from conftest import MLGO_ENV

#: a value of the wrong kind, per kind
WRONG = {"text": 1, "path": 2, "count": "3", "seconds": "4", "switch": 1, "texts": "-g"}


def options():
    return mlgo_env.environment_options()


def test_every_keyword_of_the_table_is_converted_by_the_core():
    for o in options():
        if o["keyword"] in (None, "problem"):
            continue
        with pytest.raises(mlgo_env.InvalidParams, match=f"^invalid_params: {o['keyword']}: "):
            mlgo_env.make("inlining", **{o["keyword"]: WRONG[o["kind"]]})


def test_an_unknown_keyword_is_a_type_error_in_process_and_remote():
    for make in (mlgo_env.make, mlgo_env.make_vec):
        with pytest.raises(TypeError, match=r"unexpected options \['jbos'\]"):
            make("inlining", jbos=2)
        with pytest.raises(TypeError, match=r"unexpected options \['jbos'\]"):
            make("inlining", remote="unix:/nonexistent", jbos=2)
    with pytest.raises(mlgo_env.InvalidParams, match=r"\['jobs'\] configure an in-process"):
        mlgo_env.make("inlining", remote="unix:/nonexistent", jobs=2)


def test_the_flags_are_the_keywords_of_mlgo_env():
    helped = subprocess.run([MLGO_ENV, "serve", "--help"], capture_output=True, text=True,
                            check=True).stdout
    table = [o for o in options() if o["flag"]]
    assert len(table) >= 19
    for o in table:
        assert f"  {o['flag']}" in helped, o["flag"]
        assert o["help"].split(" (")[0].split(":")[0] in helped, o["flag"]
        if o["kind"] == "texts":   # --delete-flag (repeated) is delete_flags=[...]
            assert o["keyword"] == o["flag"][2:].replace("-", "_") + "s"
        elif o["flag"].startswith("--no-"):   # --no-disk-cache is disk_cache=False
            assert o["keyword"] == o["flag"][5:].replace("-", "_") and o["default"] is True
        else:
            assert o["keyword"] == o["flag"][2:].replace("-", "_")
