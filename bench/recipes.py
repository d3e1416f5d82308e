"""The Debian source packages the benchmarks build (bench/tune.py, tune_pgo.py, drift.py,
regalloc_limit.py): how each is configured, tested and, where it has one, what its workload
runs; the packages reserved for evaluation, which every benchmark refuses."""
from __future__ import annotations

import os

RESERVED = {"lua5.4", "libzstd", "bzip2", "ninja-build", "re2"}

#: per package: configure command, test command, workload [(name, argv with {build}/{data};
#: a literal brace doubled, as str.format reads it)]
RECIPES = {
    "zlib": {"configure": ["./configure"], "check": ["make", "check"],
             "workload": [("compress", ["{build}/minigzip", "-c", "{data}"])]},
    "xz-utils": {"configure": ["./configure", "--disable-doc", "--disable-nls"],
                 "check": ["make", "check"],
                 "workload": [("compress", ["{build}/src/xz/.libs/xz", "-6", "-c", "-k",
                                            "-T1", "{data}"]),
                              ("decompress", ["{build}/src/xz/.libs/xz", "-d", "-c",
                                              "{data}.xz"])],
                 "libs": ["src/liblzma/.libs"]},
    # pcre2grep's matcher (the interpreter: --disable-jit) on four patterns: a backreference,
    # case-insensitive alternatives, a character class repeat, a quoted string
    "pcre2": {"configure": ["./configure", "--disable-jit"], "check": ["make", "check"],
              "workload": [("match", ["{build}/.libs/pcre2grep", "--binary-files=text", "-c",
                                      "-e", r"\b(\w+)\s*=\s*\1\b",
                                      "-e", r"(?i)\b(?:static|inline|const)\s+[a-z_]\w*\s*\(",
                                      "-e", "[A-Z][A-Z0-9_]{{5,}}",
                                      "-e", r'"(?:[^"\\]|\\.)*"', "{data}"])],
              "libs": [".libs"]},
    # MAKEINFO=true: a patched gzip.texi would otherwise need makeinfo (not installed)
    "gzip": {"configure": ["./configure", "MAKEINFO=true"], "check": ["make", "check"],
             "workload": [("compress", ["{build}/gzip", "-6", "-c", "{data}"]),
                          ("decompress", ["{build}/gzip", "-d", "-c", "{data}.gz"])]},
    "sed": {"configure": ["./configure", "--disable-nls"], "check": ["make", "check"],
            "workload": []},
    "expat": {"configure": ["./configure", "--without-docbook"], "check": ["make", "check"],
              "workload": [], "subdir": "expat"},
    # C++ shared libraries with ThinLTO (CMake; lld's backends through the launcher with
    # Distributed ThinLTO, docs/tuning.md)
    "double-conversion": {"kind": "cmake-thinlto", "check": ["ctest", "-j2"], "workload": []},
    # C with ThinLTO by its own configure and make (lld as the linker)
    "xz-utils-thinlto": {"kind": "make-thinlto", "source": "xz-utils",
                         "configure": ["./configure", "--disable-doc", "--disable-nls",
                                       "--disable-static"],
                         "check": ["make", "check"], "workload": []},
    "pcre2-thinlto": {"kind": "make-thinlto", "source": "pcre2",
                      "configure": ["./configure", "--disable-jit", "--disable-static"],
                      "check": ["make", "check"], "workload": []},
    "lz4": {"configure": None, "check": ["make", "-C", "tests", "test-lz4-basic"],
            "workload": [("compress", ["{build}/programs/lz4", "-9", "-c", "{data}"]),
                         ("decompress", ["{build}/programs/lz4", "-d", "-c", "{data}.lz4"])]},
}


def compressed_suffix(program: str) -> str:
    """What the workload's compressor `program` (a path) appends to its output: by the
    program's own name (a build or work directory may name another compressor)."""
    name = os.path.basename(program)
    return ".xz" if "xz" in name else ".lz4" if "lz4" in name else ".gz"
