#!/usr/bin/python3
"""Checks that the documentation names only things the repository has.

The documents: README.md, docs/*.md, python/README.md, research/README.md. In each, what
is quoted (`code spans`, indented or fenced code blocks) and what is linked
([text](target)) is read, and the check fails (exit 1), printing DOC:LINE and the
missing thing, when:

  1. a repository path is missing: a quoted token whose first component is a top-level
     entry of the repository (`docs/tuning.md`, `bench/tune.py --package P`), or under the
     package or the headers (`mlgo_env/tuning/table.py`, `mlgo/env/score.h`), or a bare
     file name of the project's own kinds (`policy_file.h`, `.cc`, `.md`: found anywhere
     in the repository; other kinds, `xzdec.c`, are as often another project's); a glob
     (`tests/corpus_layouts_*`) must match something. Generated and user paths are not
     repository paths: build/, absolute ones, objects (`.o`, `.bc`, ...), placeholders
     (<key>, $PWD, DIR, one-letter names such as `src/a.c`);
     A relative path that leaves the repository (`../elsewhere/`, quoted or not) is
     always a problem: a reader of the repository does not have it;
  2. a link's target file, or its #anchor (a heading of the target, as GitHub makes
     anchors), is missing; links to other sites are not followed;
  3. a `python -m mlgo_env.X` module (or `mlgo_env.X.Y` quoted) does not exist;
  4. an `mlgo-env-NAME` identifier (a format, a program) appears nowhere in the code;
  5. a version is not one the code has (VERSIONS below says where each is defined):
     - `host-emulation-vN`, the host's emulation of clang's default eviction: quoted, it
       must be the version the code writes; in prose an earlier version is allowed only
       if the code still names it (a version history in a header);
     - policy files (`mlgo-env-policy`): every version the reader reads, 1 to the newest;
     - tuning tables (`mlgo-env-tuning`, `mlgo-env-tuning-entries`): the version the
       readers read;
     - the agent protocol (`protocol_version`): the version the server sends.
     A version phrase (`version 2`, `versions 1-3`, `version-3`, `"version": 1`) belongs to
     the format its line names, else to the format of its document (policy-format.md,
     tuning-format.md, protocol.md), else to a format a word of the line suggests
     (policy, tuning table, protocol); other lines' versions are not checked.
  Where the code defines one version twice (C++ and Python), the two must agree.

A dated document (DATED: the training log) records what each run used on its day, so the
modules and paths it names are not required to exist still; its links and versions are
checked like any other document's.

Usage: scripts/check_docs.py [--root DIR]    (default: the repository)
Its test (a small repository with one mistake of each kind): scripts/check_docs_test.py.
"""
import argparse
import glob
import os
import re
import sys
import unicodedata

#: where each version is defined: (file, pattern whose group 1 is the version); the files
#: that exist and match must agree, and at least one must
VERSIONS = {
    "host-emulation": [
        ("include/mlgo/policy/default_eviction.h",
         r'kDefaultEvictionPolicyName\s*=\s*"host-emulation-v(\d+)"'),
        ("python/mlgo_env/policies/policy_runner.py",
         r'^EMULATION_FEATURE\s*=\s*"host-emulation-v(\d+)"')],
    "policy": [
        ("include/mlgo/policy/policy_file.h", r"\bkNewestVersion\s*=\s*(\d+)")],
    "tuning": [
        ("include/mlgo/table/tuning_table.h", r"\bkVersion\s*=\s*(\d+)")],
    "protocol": [
        ("include/mlgo/server/dispatcher.h", r"\bkProtocolVersion\s*=\s*(\d+)")],
}
#: policy readers read every version up to the newest; the others read one
READS_OLDER = {"policy"}
#: the format a document is about, for version phrases that name none
DOC_FORMAT = {"docs/policy-format.md": "policy", "docs/tuning-format.md": "tuning",
              "docs/protocol.md": "protocol"}
#: the format a line names, first match wins
LINE_FORMAT = [(re.compile(r"mlgo-env-policy"), "policy"),
               (re.compile(r"mlgo-env-tuning"), "tuning"),
               (re.compile(r"protocol_version"), "protocol")]
LINE_HINT = [(re.compile(r"\bpolic(y|ies)\b", re.I), "policy"),
             (re.compile(r"\btuning (table|directory|format)", re.I), "tuning"),
             (re.compile(r"\bprotocol\b", re.I), "protocol")]

CODE_DIRS = ["include", "support", "protocol", "corpus", "ir2vec", "policy", "env", "trace",
             "server", "launch", "src", "python", "scripts", "tests", "data", "bench"]
CODE_EXT = (".h", ".cc", ".py", ".sh", ".txt", ".cmake", ".toml", ".sbatch")
SOURCE_EXT = (".h", ".cc", ".c", ".cpp", ".py", ".sh", ".md", ".cmake", ".sbatch", ".toml")
#: bare file names checked: the kinds the project's own files are
BARE_EXT = (".h", ".cc", ".md")
#: files builds make, never in the repository
ARTIFACT_EXT = (".o", ".bc", ".so", ".a", ".log", ".csv", ".npz")
#: documents that record the past (see above)
DATED = {"docs/training-log.md"}
SKIP_DIRS = {".git", "__pycache__", ".pytest_cache"}

VERSION_PHRASE = re.compile(
    r'"version"\s*:\s*(\d+)'
    r"|(?<!clang )\bversions?[- ](\d+)(?![.\d])((?:\s*(?:-|to|,|and|or)\s*\d+)*)\+?", re.I)
EMULATION = re.compile(r"host-emulation-v(\d+)")
IDENT = re.compile(r"(?<![\w-])mlgo-env-[a-z][a-z0-9-]*[a-z0-9]")
MODULE = re.compile(r"\bmlgo_env(?:\.[A-Za-z_]\w*)+")
LINK = re.compile(r"\[(?:[^\]\\]|\\.)*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
SPAN = re.compile(r"(`+)(.+?)\1")
PLACEHOLDER = re.compile(r"[<>{}$…]|\.\.\.|\bDIR\b|\bFILE\b|\bPATH\b|\bNAME\b")


def is_build_dir(name):
    return name == "build" or name.startswith("build-")


class Repo:
    """The repository's files, for lookups by path, suffix and name."""

    def __init__(self, root):
        self.root = root
        self.files, self.dirs = set(), set()
        for base, dirs, files in os.walk(root):
            rel = os.path.relpath(base, root)
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and
                             not (rel == "." and (is_build_dir(d) or d.startswith("."))))
            rel = "" if rel == "." else rel + "/"
            self.dirs.update(rel + d for d in dirs)
            self.files.update(rel + f for f in files)
        self.top = {p.split("/")[0] for p in self.files | self.dirs}
        self.names = {p.rsplit("/", 1)[-1] for p in self.files}
        self._code = None

    def exists(self, rel):
        rel = os.path.normpath(rel).rstrip("/")
        return rel in self.files or rel in self.dirs

    def ends_with(self, suffix):
        suffix = "/" + suffix.strip("/")
        return any(("/" + p).endswith(suffix) for p in self.files | self.dirs)

    def glob(self, pattern):
        return glob.glob(os.path.join(self.root, pattern))

    def read(self, rel):
        with open(os.path.join(self.root, rel), encoding="utf-8", errors="replace") as f:
            return f.read()

    def code(self):
        """The text of every code file (not the documents), once."""
        if self._code is None:
            self._code = "\n".join(
                self.read(p) for p in sorted(self.files)
                if p.split("/")[0] in CODE_DIRS and p.endswith(CODE_EXT) or
                p == "CMakeLists.txt")
        return self._code


def documents(repo):
    docs = ["README.md", "python/README.md", "research/README.md"]
    docs += sorted(p for p in repo.files if re.fullmatch(r"docs/[^/]+\.md", p))
    return [d for d in docs if d in repo.files]


def code_versions(repo, problems):
    """{family: version} from the code, adding a problem where it cannot be found or the
    definitions disagree."""
    found = {}
    for family, sources in VERSIONS.items():
        values = []
        for path, pattern in sources:
            if path in repo.files:
                m = re.search(pattern, repo.read(path), re.M)
                if m:
                    values.append((path, int(m.group(1))))
        if not values:
            problems.append(f"{family} version: none of {', '.join(p for p, _ in sources)} "
                            "defines it (update VERSIONS in scripts/check_docs.py)")
        elif len({v for _, v in values}) > 1:
            problems.append(f"{family} version: the code disagrees: " +
                            ", ".join(f"{p} says {v}" for p, v in values))
        else:
            found[family] = values[0][1]
    return found


def slug(heading):
    """The anchor GitHub gives a heading: its text (links as their text) in lower case,
    without punctuation but `-` and `_`, spaces made `-`."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    return "".join("-" if ch == " " else ch for ch in text
                   if ch in " -_" or ch.isalnum() or unicodedata.category(ch).startswith("M"))


def anchors(text):
    seen, out = {}, set()
    in_fence = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        m = re.match(r"#{1,6}\s+(.*)$", line)
        if m:
            base = slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


def quoted(text):
    """(line number, text) of each quoted part of a document: code spans, code blocks."""
    out, in_fence = [], False
    lines = text.splitlines()
    for i, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence or (line.startswith("    ") and not line.lstrip().startswith(("-", "*"))
                        and (i == 1 or not lines[i - 2].strip() or
                             lines[i - 2].startswith("    "))):
            out.append((i, line))
            continue
        out.extend((i, m.group(2)) for m in SPAN.finditer(line))
    return out


def path_tokens(text):
    for token in re.split(r"[\s,;]+", text):
        token = token.strip("`'\"()[]").rstrip(":.")
        if token.startswith("-") and "=" in token:
            token = token.split("=", 1)[1]
        if token and "/" in token or token.endswith(SOURCE_EXT):
            yield token


def check_relative(repo, doc, token):
    """None when the `../` path `token`, read from `doc`'s folder, exists in the
    repository, else the problem."""
    rel = os.path.normpath(os.path.join(os.path.dirname(doc), token))
    if token.endswith(ARTIFACT_EXT) and not rel.startswith(".."):
        return None  # a build's output in an example (`-o ../obj/x.o`), not a repository path
    if rel.startswith(".."):
        return f"a path outside the repository: {token}"
    if PLACEHOLDER.search(token) or repo.exists(rel):
        return None
    return f"no such file or folder: {token}"


def check_path(repo, token):
    """None when `token` is no repository path or exists, else what is missing."""
    if PLACEHOLDER.search(token) or token.startswith(("/", "~", "http", "./", "../")) or \
            "://" in token:
        return None  # ../ paths: check_relative
    name = token.rstrip("/").rsplit("/", 1)[-1]
    if token.endswith(ARTIFACT_EXT) or re.fullmatch(r"[A-Za-z]\.\w+", name):
        return None
    first = token.split("/")[0]
    if "/" not in token:
        if token.endswith(BARE_EXT) and re.fullmatch(r"[\w.-]+", token) and \
                not token.startswith("."):
            return None if token in repo.names else token
        return None
    if is_build_dir(first) or first.startswith("."):
        return None
    if first in repo.top:
        candidates = [token]
    elif first in ("mlgo_env", "mlgo"):
        candidates = []
    else:
        return None
    if "*" in token or "?" in token:
        return None if any(repo.glob(c) for c in candidates) or repo.glob("*/" + token) or \
            repo.glob("*/*/" + token) else token
    if any(repo.exists(c) for c in candidates) or repo.ends_with(token):
        return None
    return token


def check_module(repo, name):
    """None when mlgo_env.X.Y is a module, a package or a name defined in one."""
    parts = name.split(".")
    base = "python/" + "/".join(parts)
    if repo.exists(base + ".py") or repo.exists(base):
        return None
    parent = "python/" + "/".join(parts[:-1])
    for f in (parent + ".py", parent + "/__init__.py"):
        if f in repo.files and re.search(rf"\b{re.escape(parts[-1])}\b", repo.read(f)):
            return None
    return name


def check_versions(doc, lineno, line, in_quote, versions, former, problems):
    for m in EMULATION.finditer(line):
        n = int(m.group(1))
        current = versions.get("host-emulation")
        if current is None or n == current:
            continue
        if in_quote(m.start()):
            problems.append(f"{doc}:{lineno}: `host-emulation-v{n}`: the code writes "
                            f"host-emulation-v{current}")
        elif n not in former:
            problems.append(f"{doc}:{lineno}: host-emulation-v{n}: no such version in the code "
                            f"(it writes host-emulation-v{current})")
    family = next((f for r, f in LINE_FORMAT if r.search(line)), None) or \
        DOC_FORMAT.get(doc) or next((f for r, f in LINE_HINT if r.search(line)), None)
    if family is None or family not in versions:
        return
    newest = versions[family]
    valid = set(range(1, newest + 1)) if family in READS_OLDER else {newest}
    for m in VERSION_PHRASE.finditer(line):
        numbers = [int(m.group(1))] if m.group(1) else \
            [int(m.group(2))] + [int(x) for x in re.findall(r"\d+", m.group(3) or "")]
        bad = [n for n in numbers if n not in valid]
        if bad:
            problems.append(f"{doc}:{lineno}: {family} version {bad[0]} ({m.group(0).strip()!r}): "
                            f"the code reads {', '.join(map(str, sorted(valid)))}")


def check_quoted(repo, doc, text, problems):
    """Paths, modules and mlgo-env-NAME identifiers in the quoted parts of `doc`."""
    code_text = None
    for lineno, part in quoted(text):
        for m in IDENT.finditer(part):
            code_text = code_text if code_text is not None else repo.code()
            if not re.search(rf"(?<![\w-]){re.escape(m.group(0))}(?![\w-])", code_text):
                problems.append(f"{doc}:{lineno}: {m.group(0)}: named nowhere in the code")
        if doc in DATED:
            continue
        for token in path_tokens(part):
            missing = check_path(repo, token)
            if missing:
                problems.append(f"{doc}:{lineno}: no such file or folder: {missing}")
        for m in MODULE.finditer(part):
            missing = check_module(repo, m.group(0))
            if missing:
                problems.append(f"{doc}:{lineno}: no such module: {missing}")


def check_lines(repo, doc, text, versions, former, problems):
    """`../` paths, versions and links on every line of `doc`."""
    for lineno, line in enumerate(text.splitlines(), 1):
        for m in re.finditer(r"(?<![\w./(])(?:\.\./)+[^\s`'\")\],;]*", line):
            problem = check_relative(repo, doc, m.group(0).rstrip(".:"))
            if problem:
                problems.append(f"{doc}:{lineno}: {problem}")
        spans = [(m.start(), m.end()) for m in SPAN.finditer(line)]
        block = line.startswith("    ") and not line.lstrip().startswith(("-", "*"))
        check_versions(doc, lineno, line,
                       lambda pos: block or any(a <= pos < b for a, b in spans),
                       versions, former, problems)
        for m in LINK.finditer(line):
            path, _, anchor = m.group(1).partition("#")
            rel = os.path.normpath(os.path.join(os.path.dirname(doc), path)) if path else doc
            if re.match(r"[a-z]+:", m.group(1)) or rel.startswith(".."):
                continue  # another site, or a path outside (reported above)
            if not repo.exists(rel):
                problems.append(f"{doc}:{lineno}: link to a missing file: {m.group(1)}")
            elif anchor and rel.endswith(".md") and anchor not in anchors(repo.read(rel)):
                problems.append(f"{doc}:{lineno}: link to a missing heading: {m.group(1)}")


def check(root):
    repo = Repo(root)
    problems = []
    versions = code_versions(repo, problems)
    current = versions.get("host-emulation")
    former = {int(n) for n in EMULATION.findall(repo.code())} - {current}
    for doc in documents(repo):
        text = repo.read(doc)
        check_quoted(repo, doc, text, problems)
        check_lines(repo, doc, text, versions, former, problems)

    def order(problem):
        m = re.match(r"([^:]+):(\d+): ", problem)
        return (m.group(1), int(m.group(2))) if m else ("", 0)
    return sorted(problems, key=order)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    args = parser.parse_args()
    problems = check(args.root)
    for p in problems:
        print(p)
    print(f"check_docs: {len(problems)} problem(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
