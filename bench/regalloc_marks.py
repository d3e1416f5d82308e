"""The pieces bench/regalloc_limit.py joins: where clang's register allocator left spills,
reloads and register copies in a linked program, and how often a workload ran each.

- Spills and reloads: clang's assembly printer marks each one with a comment
  (`# 8-byte Spill`, `# 4-byte Reload`, `# 8-byte Folded Reload`, `# 4-byte Folded Spill`,
  `Unknown-size Folded ...`; a reload that also stores reads "Reload" only).
  `mark_assembly` puts a label of its own before each such instruction; assembled, the
  labels say where each one sits in the object, and the object's executable bytes must
  equal the build's object (so the marks are exact, not matched by guess).
- Placement: `place_sections` finds where an object's executable sections landed in a
  linked executable or shared library (by its function symbols, checked byte for byte
  outside the fields the linker relocates or relaxes).
- Counts: `read_callgrind` reads a `valgrind --tool=callgrind --dump-instr=yes` file into
  executions per instruction, per object file. Callgrind writes addresses as the file's
  own link-time addresses (it subtracts each object's load bias), so they are comparable
  with the file's symbols and disassembly as they are.
- Copies: `is_register_copy` tells a register-to-register move in `llvm-objdump -d` output
  (AT&T); it cannot tell a copy the allocator could have coalesced from one the calling
  convention needs.

Everything here is pure computation on text and bytes (no processes); errors are
ValueError naming what was malformed.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field

#: the asm printer's comment on a spill or reload (one per instruction)
SPILL_COMMENT = re.compile(r"#\s*(?:\d+-byte|Unknown-size) (Folded )?(Spill|Reload)\b")
KINDS = ("spill", "reload", "folded-spill", "folded-reload")
MARK_PREFIX = "__regalloc_limit_"
_DIRECTIVE_OR_LABEL = re.compile(r"^\s*(?:\.|[^\s#]+:|#|$)")


def spill_kind(comment_line: str) -> str | None:
    """"spill", "reload", "folded-spill", "folded-reload", or None for a line without such
    a comment."""
    m = SPILL_COMMENT.search(comment_line)
    if m is None:
        return None
    return ("folded-" if m.group(1) else "") + m.group(2).lower()


def is_instruction_line(line: str) -> bool:
    """Whether an assembly line holds an instruction (not a directive, label, comment or
    blank line)."""
    return _DIRECTIVE_OR_LABEL.match(line) is None


def mark_assembly(text: str) -> tuple[str, list[tuple[str, str]]]:
    """The assembly with a label `MARK_PREFIX<kind>_<n>` before each instruction clang
    commented as a spill or reload, and [(label, kind)] in order. A comment on a line of its
    own (the printer's second comment line) belongs to the instruction above it."""
    lines = text.split("\n")
    kinds: dict[int, str] = {}
    owner = None  # the instruction a comment-only line below it belongs to
    for i, line in enumerate(lines):
        stripped = line.strip()
        if is_instruction_line(line):
            owner = i
            kind = spill_kind(line[line.index("#"):]) if "#" in line else None
            if kind:
                kinds[i] = kind
        elif stripped.startswith("#"):
            kind = spill_kind(stripped)
            if kind and owner is not None and owner not in kinds:
                kinds[owner] = kind
        else:
            owner = None
    out, marks = [], []
    for i, line in enumerate(lines):
        if i in kinds:
            label = f"{MARK_PREFIX}{kinds[i].replace('-', '_')}_{len(marks)}"
            out.append(f"{label}:")
            marks.append((label, kinds[i]))
        out.append(line)
    return "\n".join(out), marks


def mark_kind(symbol: str) -> str | None:
    """The kind a marker label names, or None for another symbol."""
    if not symbol.startswith(MARK_PREFIX):
        return None
    return symbol[len(MARK_PREFIX):].rsplit("_", 1)[0].replace("_", "-")


# ---- ELF (64-bit little-endian: what x86-64 Linux builds are) -------------------------

SHF_EXECINSTR, SHT_SYMTAB, SHT_RELA, SHT_NOBITS, STT_FUNC = 0x4, 2, 4, 8, 2
#: x86-64 relocation type -> (bytes before the field the linker may rewrite, field size)
_RELOC_SPAN = {1: (0, 8), 2: (0, 4), 3: (0, 4), 4: (0, 4), 9: (3, 4), 10: (0, 4),
               11: (0, 4), 12: (0, 2), 13: (0, 2), 14: (0, 1), 15: (0, 1), 17: (0, 8),
               18: (0, 8), 19: (4, 16), 20: (3, 16), 21: (0, 4), 22: (3, 4), 23: (0, 4),
               24: (0, 8), 25: (0, 8), 26: (0, 4), 34: (3, 4), 36: (4, 4), 41: (3, 4),
               42: (3, 4)}


@dataclass
class Section:
    name: str
    flags: int
    addr: int
    data: bytes
    relocated: set[int] = field(default_factory=set)  # offsets the linker may rewrite


@dataclass
class Symbol:
    name: str
    value: int
    size: int
    kind: int  # STT_*
    section: int  # index, 0 for undefined


@dataclass
class Elf:
    kind: int  # e_type: 1 relocatable, 2 executable, 3 shared object
    sections: list[Section]
    symbols: list[Symbol]

    def executable(self) -> dict[int, Section]:
        return {i: s for i, s in enumerate(self.sections) if s.flags & SHF_EXECINSTR}

    def read(self, addr: int, size: int) -> bytes | None:
        """`size` bytes at virtual address `addr` of a linked file, or None outside its
        executable sections."""
        for s in self.sections:
            if s.flags & SHF_EXECINSTR and s.addr <= addr and addr + size <= s.addr + len(s.data):
                return s.data[addr - s.addr:addr - s.addr + size]
        return None


def read_elf(data: bytes, name: str = "ELF file") -> Elf:
    """Sections (executable contents only), symbols and, for objects, which bytes of each
    executable section relocations cover. ValueError naming `name` if it is not a 64-bit
    little-endian ELF file or is cut short."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError(f"{name}: not a 64-bit little-endian ELF file")
    try:
        e_type = struct.unpack_from("<H", data, 16)[0]
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
        headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
                   for i in range(shnum)]
        strtab = headers[shstrndx]
        names = data[strtab[4]:strtab[4] + strtab[5]]
        sections = []
        for h in headers:
            keep = h[2] & SHF_EXECINSTR and h[1] != SHT_NOBITS
            sections.append(Section(_cstr(names, h[0]), h[2], h[3],
                                    data[h[4]:h[4] + h[5]] if keep else b""))
        symbols = []
        for h in headers:
            if h[1] == SHT_SYMTAB:
                symbols += _symbols(data, h, headers[h[6]])
            elif h[1] == SHT_RELA and sections[h[7]].flags & SHF_EXECINSTR:
                _note_relocations(data, h, sections[h[7]], name)
    except (struct.error, IndexError) as e:
        raise ValueError(f"{name}: cut short or malformed ({e})") from None
    return Elf(e_type, sections, symbols)


def _cstr(table: bytes, offset: int) -> str:
    end = table.index(b"\0", offset)
    return table[offset:end].decode("utf-8", "replace")


def _symbols(data: bytes, symtab: tuple, strtab: tuple) -> list[Symbol]:
    names = data[strtab[4]:strtab[4] + strtab[5]]
    out = []
    for off in range(symtab[4], symtab[4] + symtab[5], 24):
        st_name, st_info, _, st_shndx, st_value, st_size = struct.unpack_from("<IBBHQQ", data, off)
        out.append(Symbol(_cstr(names, st_name), st_value, st_size, st_info & 0xF, st_shndx))
    return out


def _note_relocations(data: bytes, rela: tuple, target: Section, name: str) -> None:
    for off in range(rela[4], rela[4] + rela[5], 24):
        r_offset, r_info = struct.unpack_from("<QQ", data, off)
        span = _RELOC_SPAN.get(r_info & 0xFFFFFFFF)
        if span is None:
            raise ValueError(f"{name}: relocation type {r_info & 0xFFFFFFFF} in "
                             f"{target.name} is not one this reader knows")
        before, size = span
        target.relocated.update(range(max(0, r_offset - before), r_offset + size))


def function_index(linked: Elf) -> dict[str, list[Symbol]]:
    """{name: the defined function symbols of that name} of a linked file."""
    by_name: dict[str, list[Symbol]] = {}
    for s in linked.symbols:
        if s.kind == STT_FUNC and s.section:
            by_name.setdefault(s.name, []).append(s)
    return by_name


def place_sections(obj: Elf, linked: Elf,
                   by_name: dict[str, list[Symbol]] | None = None) -> dict[int, list[int]]:
    """{object section index: the addresses in `linked` where it sits, lowest first} for
    each executable section of the object with function symbols found in the linked file: a
    candidate address from each function whose name and size the linked file has, accepted
    when every byte outside the relocated fields equals the linked file's there (several
    when the same code, under the same names, was linked more than once). `by_name`:
    `function_index(linked)`, if made."""
    by_name = function_index(linked) if by_name is None else by_name
    placed = {}
    for index, section in obj.executable().items():
        candidates = set()
        for f in obj.symbols:
            if f.kind == STT_FUNC and f.section == index:
                candidates.update(s.value - f.value for s in by_name.get(f.name, [])
                                  if s.size == f.size)
        found = [addr for addr in sorted(candidates)
                 if (there := linked.read(addr, len(section.data))) is not None
                 and _same_code(section, there)]
        if found:
            placed[index] = found
    return placed


def _same_code(section: Section, there: bytes) -> bool:
    return all(a == b or i in section.relocated
               for i, (a, b) in enumerate(zip(section.data, there)))


def marks_of(obj: Elf) -> list[tuple[int, int, str]]:
    """[(section index, offset, kind)] of the marker labels in an assembled object."""
    out = []
    for s in obj.symbols:
        kind = mark_kind(s.name)
        if kind is not None:
            out.append((s.section, s.value, kind))
    return out


# ---- callgrind ------------------------------------------------------------------------

def read_callgrind(text: str) -> tuple[dict[str, dict[int, int]], int]:
    """({object file: {address: instructions executed there}}, the file's total), from a
    callgrind output file written with --dump-instr=yes (first event: Ir). The inclusive
    cost lines after `calls=` are not counted (they are the callee's). ValueError if the
    file has no instruction positions, uses jump lines, or its counts do not add up to its
    `summary:`/`totals:`."""
    positions, names = None, {}
    counts: dict[str, dict[int, int]] = {}
    current, last, skip_next, expect = None, None, False, None
    for number, line in enumerate(text.split("\n"), 1):
        if not line or line.startswith("#"):
            continue
        c = line[0]
        if c.isdigit() or c in "+-*" or line.startswith("0x"):
            if positions is None:
                raise ValueError("callgrind file: cost line before 'positions:'")
            fields = line.split()
            addr = _position(fields[0], last, number)
            last = addr
            cost = int(fields[positions]) if len(fields) > positions else 0
            if skip_next:
                skip_next = False
                continue
            if current is None:
                raise ValueError(f"callgrind file line {number}: cost before any 'ob='")
            table = counts.setdefault(current, {})
            table[addr] = table.get(addr, 0) + cost
        elif line.startswith(("ob=", "cob=")):
            key, value = line.split("=", 1)
            name = _compressed(names, value)
            if key == "ob":
                current = name
        elif line.startswith("calls="):
            skip_next = True
        elif line.startswith(("jump=", "jcnd=")):
            raise ValueError("callgrind file: jump lines (--collect-jumps) are not read")
        elif line.startswith("positions:"):
            kinds = line.split(":", 1)[1].split()
            if "instr" not in kinds:
                raise ValueError("callgrind file: no instruction positions "
                                 "(run callgrind with --dump-instr=yes)")
            if kinds[0] != "instr":
                raise ValueError(f"callgrind file: positions {kinds}: instr must be first")
            positions = len(kinds)
        elif line.startswith("events:"):
            if line.split(":", 1)[1].split()[:1] != ["Ir"]:
                raise ValueError("callgrind file: the first event is not Ir")
        elif line.startswith(("summary:", "totals:")):
            expect = int(line.split(":", 1)[1].split()[0])
    total = sum(sum(t.values()) for t in counts.values())
    if expect is None or total != expect:
        raise ValueError(f"callgrind file: counted {total} instructions, the file says {expect}")
    return counts, total


def _position(field_: str, last: int | None, number: int) -> int:
    if field_.startswith("0x"):
        return int(field_, 16)
    if last is None:
        raise ValueError(f"callgrind file line {number}: relative position with no previous")
    if field_ == "*":
        return last
    return last + int(field_)  # "+N" / "-N", decimal


def _compressed(table: dict[str, str], value: str) -> str:
    """A name given as "(id) name", "(id)" (seen before) or plainly."""
    m = re.match(r"\((\d+)\)\s*(.*)$", value)
    if m is None:
        return value
    if m.group(2):
        table[m.group(1)] = m.group(2)
        return m.group(2)
    if m.group(1) not in table:
        raise ValueError(f"callgrind file: name ({m.group(1)}) used before it is defined")
    return table[m.group(1)]


# ---- disassembly ------------------------------------------------------------------------

_OBJDUMP_LINE = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*?)\s*$")
_REGISTER = re.compile(r"^%[a-z][a-z0-9]*$")
#: moves whose register-to-register form copies a value (movss/movsd merge, so are not)
COPY_MNEMONICS = {"movb", "movw", "movl", "movq", "movd", "movaps", "movapd", "movups",
                  "movupd", "movdqa", "movdqu", "vmovaps", "vmovapd", "vmovups", "vmovupd",
                  "vmovdqa", "vmovdqu", "vmovdqa32", "vmovdqa64", "vmovdqu32", "vmovdqu64",
                  "vmovq", "vmovd", "kmovw", "kmovq", "kmovd", "kmovb"}


def read_objdump(text: str) -> list[tuple[int, str, str]]:
    """[(address, mnemonic, operands)] of the instructions in `llvm-objdump -d
    --no-show-raw-insn` output (AT&T), the trailing `# ...` comment dropped."""
    out = []
    for line in text.split("\n"):
        m = _OBJDUMP_LINE.match(line)
        if m and "file format" not in line:
            operands = m.group(3).split("#", 1)[0].strip()
            out.append((int(m.group(1), 16), m.group(2), operands))
    return out


def is_register_copy(mnemonic: str, operands: str) -> bool:
    """A move from one register to another (`movq %rsi, %rbx`, `movaps %xmm1, %xmm0`,
    `movq %xmm0, %rax`); a move onto itself is not counted (`movl %eax, %eax` zero-extends)."""
    if mnemonic not in COPY_MNEMONICS:
        return False
    parts = [p.strip() for p in operands.split(",")]
    return (len(parts) == 2 and all(_REGISTER.match(p) for p in parts)
            and parts[0] != parts[1])


def is_push_or_pop(mnemonic: str, operands: str) -> bool:
    """`pushq %reg` / `popq %reg`: at -O2 the saves and restores of callee-saved registers
    (and the odd stack alignment push)."""
    return mnemonic in ("pushq", "popq") and _REGISTER.match(operands) is not None


def is_stack_access(mnemonic: str, operands: str) -> bool:
    """An instruction reading or writing memory at an offset from %rsp (lea computes an
    address only; push, pop, call and ret are not counted). Without a frame pointer (-O2)
    every spill and reload is one; so are the other stack slots' loads and stores, whose
    number register allocation does not change."""
    return "(%rsp" in operands and not mnemonic.startswith("lea")
