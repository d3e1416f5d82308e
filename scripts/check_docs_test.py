#!/usr/bin/python3
"""The test of scripts/check_docs.py: a small repository with one mistake of each kind
beside the same things done right; every mistake must be reported, and nothing else.
Exit 0 when that holds, else 1 naming what was missed or reported wrongly."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_docs  # noqa: E402

FILES = {
    "include/mlgo/policy/default_eviction.h":
        'constexpr auto kDefaultEvictionPolicyName = "host-emulation-v3";\n'
        "/// Earlier: host-emulation-v2.\n",
    "include/mlgo/policy/policy_file.h":
        'inline constexpr std::string_view kFormat = "mlgo-env-policy";\n'
        "inline constexpr int kNewestVersion = 3;\n",
    "include/mlgo/server/dispatcher.h": "inline constexpr int kProtocolVersion = 1;\n",
    "include/mlgo/table/tuning_table.h":
        'inline constexpr int64_t kVersion = 2; // "mlgo-env-tuning"\n',
    "python/mlgo_env/__init__.py": "def make(): pass\n",
    "python/mlgo_env/tune/__main__.py": "",
    "bench/tune.py": "",
    "tests/corpus_layouts_a.cc": "",
    "README.md": "See [docs](docs/a.md#good-heading) and `bench/tune.py --x 1`.\n",
    "docs/a.md": "# Good heading\n\n"
                 "`bench/tune.py` and `mlgo_env/tune/__main__.py`, `tests/corpus_layouts_*`\n"
                 "`bench/gone.py`\n"
                 "`gone_file.h`\n"
                 "[b](b.md) [c](a.md#no-heading) [d](https://example.org/x)\n"
                 "`python -m mlgo_env.tune`, `mlgo_env.make`, `mlgo_env.nothing`\n"
                 "`mlgo-env-policy`, `mlgo-env-nothing`\n"
                 "`host-emulation-v3`, `host-emulation-v2`\n"
                 "measured with host-emulation-v2, host-emulation-v1\n"
                 "policies: format `mlgo-env-policy`, versions 1-3; version 4\n"
                 "    build/src/mlgo-env --corpus=/tmp/x <key>.json DIR/modules src/a.c\n"
                 "\n`src/lapi.o`, `xzdec.c`, Debian clang version 22.1.8, COPY-OF-mlgo-env-x\n",
    "docs/tuning-format.md": "# The table (format version 2)\n",
    "docs/training-log.md": "`mlgo_env.removed` [e](gone.md) `mlgo-env-gone`\n",
    "docs/c.md": "[r](../README.md) and ../../outside/x.md, `../elsewhere/`\n",
}
WANT = [
    "docs/a.md:4: no such file or folder: bench/gone.py",
    "docs/a.md:5: no such file or folder: gone_file.h",
    "docs/a.md:6: link to a missing file: b.md",
    "docs/a.md:6: link to a missing heading: a.md#no-heading",
    "docs/a.md:7: no such module: mlgo_env.nothing",
    "docs/a.md:8: mlgo-env-nothing: named nowhere in the code",
    "docs/a.md:9: `host-emulation-v2`: the code writes host-emulation-v3",
    "docs/a.md:10: host-emulation-v1: no such version in the code",
    "docs/a.md:11: policy version 4",
    "docs/c.md:1: a path outside the repository: ../../outside/x.md",
    "docs/c.md:1: no such file or folder: ../elsewhere/",
    "docs/training-log.md:1: link to a missing file: gone.md",
    "docs/training-log.md:1: mlgo-env-gone: named nowhere in the code",
]


def main():
    with tempfile.TemporaryDirectory() as root:
        for path, text in FILES.items():
            os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as f:
                f.write(text)
        problems = check_docs.check(root)
        # the code's version made 1, the tuning format's page (version 2) is held to it
        with open(os.path.join(root, "include/mlgo/table/tuning_table.h"), "w") as f:
            f.write("inline constexpr int64_t kVersion = 1;\n")
        agreed = [p for p in check_docs.check(root) if "tuning" in p]
        # a version defined twice (C++ and Python) that disagrees
        os.makedirs(os.path.join(root, "python/mlgo_env/policies"))
        with open(os.path.join(root, "python/mlgo_env/policies/policy_runner.py"), "w") as f:
            f.write('EMULATION_FEATURE = "host-emulation-v2"\n')
        disagreeing = [p for p in check_docs.check(root) if "disagrees" in p]
    ok = True
    for want in WANT:
        if not any(p.startswith(want) for p in problems):
            print(f"check_docs test: not reported: {want}", file=sys.stderr)
            ok = False
    for p in problems:
        if not any(p.startswith(want) for want in WANT):
            print(f"check_docs test: reported wrongly: {p}", file=sys.stderr)
            ok = False
    if [p.split(" (")[0] for p in agreed] != ["docs/tuning-format.md:1: tuning version 2"]:
        print(f"check_docs test: with the code at version 1, reported {agreed}", file=sys.stderr)
        ok = False
    if [p.split(":")[0] for p in disagreeing] != ["host-emulation version"]:
        print(f"check_docs test: with disagreeing definitions, reported {disagreeing}",
              file=sys.stderr)
        ok = False
    print("check_docs test: " + ("ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
