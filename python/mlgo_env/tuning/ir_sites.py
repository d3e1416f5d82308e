"""Call sites as clang's inline-replay advisor names them, read from what clang writes.

- The optimisation record of a compile whose inliner was driven through the interactive
  channel (`-fsave-optimization-record -foptimization-record-passes=inline-ml`): one record
  per decision, in order, naming the caller, the callee, the call's innermost source
  location, the answer given (`ShouldInline`) and clang's own (`inlining_default`).
- The compile's final IR in text (`-c -emit-llvm`, then `llvm-dis`), with debug locations
  (`-gline-tables-only`): every call still there, with its whole location chain.
- The optimisation record of a stock compile (pass `inline`): clang's own inliner's remarks,
  in order; an inlined call's remark spells its key (`at callsite`), a call left alone's
  does not, and a "no" a replay file gave leaves no remark.

A replay key is what LLVM's `formatCallSiteLocation` makes of a call's debug location with
the `LineColumn` format: one `name:line-offset:column` frame per inlined-at level, innermost
first, joined by " @ "; the name is the frame's subprogram's linkage name (its name when it
has none), the offset is the location's line minus the subprogram's first line, taken
modulo 2**32 as LLVM does. The replay advisor looks a call up by callee name + key.

Pure functions over text; no clang here. Errors: ValueError naming what is malformed.
"""

from __future__ import annotations

import dataclasses
import re


@dataclasses.dataclass(frozen=True)
class Decision:
    """One `inline-ml` record: a decision of the compile, in stream order."""
    caller: str
    callee: str
    file: str
    line: int
    column: int
    inline: bool      # the answer the compile was given
    default: bool     # clang's own advice at that point

    @property
    def site(self) -> tuple[str, str, str, int, int]:
        """What a record says of its call site: caller, callee, innermost location."""
        return (self.caller, self.callee, self.file, self.line, self.column)


@dataclasses.dataclass(frozen=True)
class Call:
    """A call left in the final IR."""
    caller: str
    callee: str
    file: str
    line: int
    column: int
    key: str          # the replay key of its location
    #: per frame of the key, the function it is in: (name, first line, file)
    functions: tuple[tuple[str, int, str], ...] = ()

    @property
    def site(self) -> tuple[str, str, str, int, int]:
        return (self.caller, self.callee, self.file, self.line, self.column)


_DOC = re.compile(r"^--- !\w+\s*$", re.M)
_LOC = re.compile(r"DebugLoc:\s*\{\s*File:\s*('(?:[^']|'')*'|\"(?:[^\"\\]|\\.)*\"|[^,]+),"
                  r"\s*Line:\s*(\d+),\s*Column:\s*(\d+)\s*\}")


def _scalar(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1].replace("''", "'")
    if len(text) >= 2 and text[0] == text[-1] == '"':  # YAML's escapes, UTF-8 kept
        return re.sub(r'\\(["\\/])', r"\1", text[1:-1])
    return text


def _field(doc: str, name: str, indent: str) -> str | None:
    m = re.search(rf"^{indent}{re.escape(name)}:[ \t]*(.*)$", doc, re.M)
    return _scalar(m.group(1)) if m else None


def parse_records(text: str) -> list[Decision]:
    """The decisions of an optimisation record (YAML), in order. Records of other passes
    and records without `ShouldInline` are not decisions and are skipped; a decision
    record without a location or a name is a ValueError (compile with locations)."""
    out = []
    starts = [m.end() for m in _DOC.finditer(text)]
    ends = [m.start() for m in _DOC.finditer(text)][1:] + [len(text)]
    for start, end in zip(starts, ends):
        doc = text[start:end]
        if _field(doc, "Pass", "") != "inline-ml":
            continue
        should = _field(doc, "- ShouldInline", r"\s+")
        if should is None:
            continue
        default = _field(doc, "- inlining_default", r"\s+")
        caller = _field(doc, "Function", "")
        callee = _field(doc, "- Callee", r"\s+")
        loc = _LOC.search(doc)
        if loc is None or not caller or not callee or default is None:
            raise ValueError("an inline-ml record lacks its location, caller, callee or "
                             "inlining_default (was the compile given -gline-tables-only?)")
        out.append(Decision(caller, callee, _scalar(loc.group(1)), int(loc.group(2)),
                            int(loc.group(3)), should == "true", default not in ("0", "false")))
    return out


_MD = re.compile(r"^!(\d+) = (?:distinct )?!(\w+)\((.*)\)\s*$", re.M)
_MD_FIELD = re.compile(r"(\w+): (\"(?:[^\"\\]|\\.)*\"|[^,]+)")
_DEFINE = re.compile(r"^define [^@]*@(\"(?:[^\"\\]|\\.)*\"|[-\w.$]+)\(")
_CALL = re.compile(r"\b(?:call|invoke)\b[^@]*?@(\"(?:[^\"\\]|\\.)*\"|[-\w.$]+)\(.*!dbg !(\d+)")


def _ir_string(token: str) -> str:
    """An LLVM IR quoted string: "\\XX" is the byte 0xXX, "\\\\" a backslash; UTF-8."""
    body = token[1:-1] if len(token) >= 2 and token[0] == token[-1] == '"' else token
    raw = re.sub(rb"\\([0-9A-Fa-f]{2}|\\)",
                 lambda m: b"\\" if m.group(1) == b"\\" else bytes([int(m.group(1), 16)]),
                 body.encode("utf-8"))
    return raw.decode("utf-8", errors="replace")


def _name(token: str) -> str:
    return _ir_string(token) if token.startswith('"') else token


class _Metadata:
    def __init__(self, text: str):
        self.nodes: dict[str, tuple[str, dict[str, str]]] = {}
        for m in _MD.finditer(text):
            fields = {k: v.strip() for k, v in _MD_FIELD.findall(m.group(3))}
            self.nodes[m.group(1)] = (m.group(2), fields)

    def _node(self, ref: str, kinds: tuple[str, ...]) -> dict[str, str]:
        node = self.nodes.get(ref.lstrip("!"))
        if node is None or node[0] not in kinds:
            raise ValueError(f"IR metadata !{ref.lstrip('!')} is not one of {', '.join(kinds)}")
        return node[1]

    def subprogram(self, scope: str) -> dict[str, str]:
        for _ in range(10000):
            kind, fields = self.nodes.get(scope.lstrip("!"), ("", {}))
            if kind == "DISubprogram":
                return fields
            if kind not in ("DILexicalBlock", "DILexicalBlockFile") or "scope" not in fields:
                break
            scope = fields["scope"]
        raise ValueError(f"IR metadata scope {scope} does not lead to a subprogram")

    def file_of(self, scope: str) -> str:
        kind, fields = self.nodes.get(scope.lstrip("!"), ("", {}))
        if "file" not in fields:
            raise ValueError(f"IR metadata scope {scope} names no file")
        return _ir_string(self._node(fields["file"], ("DIFile",))["filename"])

    def key(self, loc: str) -> tuple[str, str, int, int, tuple]:
        """(replay key, innermost file, line, column, functions) of the DILocation `loc`;
        functions: per frame, (name, first line, file) of its subprogram."""
        frames, functions, first = [], [], None
        ref: str | None = loc
        while ref is not None:
            fields = self._node(ref, ("DILocation",))
            sp = self.subprogram(fields["scope"])
            name = _ir_string(sp.get("linkageName") or sp.get("name", '""'))
            line, column = int(fields.get("line", "0")), int(fields.get("column", "0"))
            start = int(sp.get("line", "0"))
            frames.append(f"{name}:{(line - start) % 2**32}:{column}")
            file = _ir_string(self._node(sp["file"], ("DIFile",))["filename"]) if "file" in sp \
                else ""
            functions.append((name, start, file))
            if first is None:
                first = (self.file_of(fields["scope"]), line, column)
            ref = fields.get("inlinedAt")
        assert first is not None
        return (" @ ".join(frames), *first, tuple(functions))


def parse_calls(text: str) -> list[Call]:
    """The direct calls with a debug location left in an IR module's text (intrinsics
    left out), in the order they appear."""
    md = _Metadata(text)
    out, caller = [], None
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("define "):
            m = _DEFINE.match(line)
            caller = _name(m.group(1)) if m else None
            continue
        if line.startswith("}"):
            caller = None
            continue
        if caller is None:
            continue
        if " invoke " in line and i + 1 < len(lines) and "to label" in lines[i + 1]:
            line += lines[i + 1]  # an invoke's location is on its second line
        if "!dbg" not in line:
            continue
        m = _CALL.search(line)
        if m is None:
            continue
        callee = _name(m.group(1))
        if callee.startswith("llvm."):
            continue
        key, file, lineno, column, functions = md.key(m.group(2))
        out.append(Call(caller, callee, file, lineno, column, key, functions))
    return out


_DEFINE_DBG = re.compile(r"^define [^@]*@(\"(?:[^\"\\]|\\.)*\"|[-\w.$]+)\(.*!dbg !(\d+)",
                         re.M)


def subprograms(text: str) -> list[dict]:
    """The IR's DISubprograms: [{"name", "linkage", "line", "file", "function"}], the
    last the IR name of the function defined with it ("" if none is)."""
    md = _Metadata(text)
    defined = {m.group(2): _name(m.group(1)) for m in _DEFINE_DBG.finditer(text)}
    out = []
    for ref, (kind, fields) in md.nodes.items():
        if kind == "DISubprogram":
            file = fields.get("file")
            out.append({"function": defined.get(ref, ""),
                        "name": _ir_string(fields.get("name", '""')),
                        "linkage": _ir_string(fields.get("linkageName", '""')),
                        "line": int(fields.get("line", "0")),
                        "file": _ir_string(md.nodes.get(file.lstrip("!"), ("", {}))[1].get(
                            "filename", '""')) if file else ""})
    return out


def own_site_key(d: Decision, subs: list[dict]) -> str | None:
    """The key of a decision if its call is in its caller's own code (no inlined-at chain):
    the caller's subprogram (`subs` of an IR where the caller is defined) is in the
    location's file, at or above its line, and no other subprogram of that file starts
    between the two. None when that does not hold."""
    own = [s for s in subs if s["function"] == d.caller]
    if len(own) != 1 or own[0]["file"] != d.file or own[0]["line"] > d.line:
        return None
    sp = own[0]
    if any(s["file"] == d.file and sp["line"] < s["line"] <= d.line for s in subs):
        return None
    return f"{sp['linkage'] or sp['name']}:{d.line - sp['line']}:{d.column}"


def replay_line(callee: str, caller: str, key: str, inline: bool) -> str:
    """One line of a replay file clang-22 reads (docs/tuning-format.md)."""
    if inline:
        return (f"mlgo-env:1:1: remark: '{callee}' inlined into '{caller}' with "
                f"(cost=0, threshold=0) at callsite {key};")
    return f"mlgo-env:1:1: remark: '{callee}' will not be inlined into '{caller}' at callsite {key};"


@dataclasses.dataclass(frozen=True)
class Remark:
    """One remark of clang's own inliner (pass `inline`): what a compile with stock clang
    (and a replay file) did at a call site, in order."""
    name: str         # Inlined, AlwaysInline, TooCostly, NeverInline, NoDefinition, ...
    caller: str
    callee: str
    file: str
    line: int
    column: int
    inlined: bool
    #: an inlined call's replay key (the remark's `at callsite`, discriminators left out);
    #: "" for a call left alone: clang gives no key then
    key: str
    #: an answer of the advisor, as the tuned compile's record has one for each: not a
    #: call without a body, nor a mandatory answer (alwaysinline, noinline, not viable)
    asked: bool

    @property
    def site(self) -> tuple[str, str, str, int, int]:
        return (self.caller, self.callee, self.file, self.line, self.column)


_ARG = re.compile(r"^\s+- (\w+):[ \t]*(.*)$", re.M)
#: a replay file's "yes" is an AlwaysInline remark with this reason
_REPLAYED = "previously inlined"


def _callsite_key(args: list[tuple[str, str]]) -> str:
    """The key an inlined remark's arguments spell after ' at callsite ', up to ';'."""
    words = [(k, _scalar(v)) for k, v in args]
    starts = [i for i, (k, v) in enumerate(words) if k == "String" and v == " at callsite "]
    if not starts:
        return ""
    out: list[str] = []
    for k, v in words[starts[0] + 1:]:
        if k == "String" and v == ";":
            break
        if k == "Disc":  # ".N": the LineColumn key has no discriminator
            out.pop()
            continue
        out.append(v)
    return "".join(out)


def parse_inline_remarks(text: str) -> list[Remark]:
    """The remarks of pass `inline` in an optimisation record (YAML), in order. A remark
    without a location (a call in a function the compiler made, such as C++'s
    __clang_call_terminate) has file "" and line 0: no decision's site."""
    out = []
    starts = [m.end() for m in _DOC.finditer(text)]
    ends = [m.start() for m in _DOC.finditer(text)][1:] + [len(text)]
    for start, end in zip(starts, ends):
        doc = text[start:end]
        if _field(doc, "Pass", "") != "inline":
            continue
        name, caller = _field(doc, "Name", "") or "", _field(doc, "Function", "") or ""
        callee = _field(doc, "- Callee", r"\s+") or ""
        loc = _LOC.search(doc)
        where = (_scalar(loc.group(1)), int(loc.group(2)), int(loc.group(3))) if loc \
            else ("", 0, 0)
        args = _ARG.findall(doc)
        replayed = any(k == "Reason" and _scalar(v) == _REPLAYED for k, v in args)
        inlined = name in ("Inlined", "AlwaysInline")
        asked = name not in ("NoDefinition", "NeverInline", "AlwaysInline") or replayed
        out.append(Remark(name, caller, callee, *where, inlined,
                          _callsite_key(args) if inlined and loc else "", asked))
    return out
