"""Executable sections of objects through the core (mlgo_env.elf over
`_core.executable_sections`, the corpus layer's reader that also scores size; its exactness
against llvm-readelf: corpus/executable_sections_clang_test.cc). Real clang-22."""
import os
import subprocess

import pytest

import mlgo_env
from mlgo_env import elf

SOURCE = """int table[4] = {1, 2, 3, 4};
int f(int x) { return table[x & 3] * x; }
int g(int x) { return f(x) + f(x + 1); }
__attribute__((section(".text.custom"))) int h(int x) { return x * 7 + 1; }
"""


@pytest.fixture(scope="module")
def clang():
    return next(o["default"] for o in mlgo_env.environment_options() if o["keyword"] == "clang")


def compile_source(clang, tmp_path, *flags):
    (tmp_path / "s.c").write_text(SOURCE)
    subprocess.run([clang, "-O2", *flags, "-c", str(tmp_path / "s.c"), "-o",
                    str(tmp_path / "s.o")], check=True)
    return tmp_path / "s.o"


def test_sections_in_file_order_with_the_bytes_objcopy_dumps(clang, tmp_path):
    obj = compile_source(clang, tmp_path, "-ffunction-sections")
    sections = elf.executable_sections(obj)
    assert [name for name, _ in sections] == [".text", ".text.f", ".text.g", ".text.custom"]
    objcopy = os.path.join(os.path.dirname(clang), "llvm-objcopy")
    for name, contents in sections:
        dumped = tmp_path / (name + ".bin")
        subprocess.run([objcopy, f"--dump-section={name}={dumped}", str(obj),
                        str(tmp_path / "copy.o")], check=True)
        assert contents == dumped.read_bytes(), name
    assert sections[0][1] == b"" and sections[1][1]  # .text is empty, f's code is not
    assert elf.executable_bytes(str(obj)) == b"".join(c for _, c in sections)


def test_refusals_name_the_file(clang, tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.o"):
        elf.executable_sections(tmp_path / "missing.o")
    (tmp_path / "x.o").write_bytes(b"not an object")
    with pytest.raises(ValueError, match="x.o is not an object file"):
        elf.executable_bytes(tmp_path / "x.o")
    cut = tmp_path / "cut.o"
    cut.write_bytes(compile_source(clang, tmp_path).read_bytes()[:200])
    with pytest.raises(ValueError, match="cut.o"):
        elf.executable_sections(cut)
