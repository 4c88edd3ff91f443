#!/usr/bin/env python3
"""md2man.py - docs/cli.md as the man page odebench.1 (roff, man macros).

Knows the markdown docs/cli.md uses: '#' headings (the first is the
title, '##' become .SH and '###' .SS), paragraphs, ``` blocks (.nf/.fi),
'- ' lists, tables (each row a .TP entry: the first cell the tag, the other
cells the text), `code` (bold) and **bold**. Anything else passes as text.

Run: python3 tools/md2man.py docs/cli.md odebench.1 [VERSION]
"""
import re
import sys


def esc(text):
    """Roff-escapes text: backslashes, and a leading . or ' of a line."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return text


def inline(text):
    """Escapes text and turns `code` and **bold** into \\fB...\\fR."""
    out = []
    for i, part in enumerate(re.split(r"(`[^`]*`|\*\*[^*]+\*\*)", text)):
        if part.startswith("`") and part.endswith("`") and len(part) > 1:
            out.append("\\fB" + esc(part[1:-1]) + "\\fR")
        elif part.startswith("**") and part.endswith("**") and len(part) > 3:
            out.append("\\fB" + esc(part[2:-2]) + "\\fR")
        else:
            out.append(esc(part))
    return "".join(out).replace("…", "...")


def line_safe(text):
    """A text line must not start with . or ' (a request)."""
    return "\\&" + text if text[:1] in (".", "'") else text


def cells(row):
    """The cells of a table row; an escaped \\| stays in its cell."""
    row = row.strip().strip("|")
    parts = re.split(r"(?<!\\)\|", row)
    return [p.strip().replace("\\|", "|") for p in parts]


def convert(md, version):
    out = ['.TH ODEBENCH 1 "" "odebench %s" "User Commands"' % version,
           ".SH NAME", "odebench \\- run Lua scenarios against the odebench "
           "engine of ODE solvers, sparse and dense kernels and their tuners"]
    lines = md.splitlines()
    i = 0
    para = []

    def flush():
        if para:
            out.append(".PP")
            out.extend(line_safe(inline(p)) for p in para)
            para.clear()

    first_heading = True
    synopsis_next = False
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            flush()
            i += 1
            if synopsis_next:
                out.append(".SH SYNOPSIS")
                synopsis_next = False
            out.extend([".PP", ".nf", ".RS 4"])
            while i < len(lines) and not lines[i].startswith("```"):
                out.append(line_safe(esc(lines[i])))
                i += 1
            out.extend([".RE", ".fi"])
        elif line.startswith("#"):
            flush()
            level = len(line) - len(line.lstrip("#"))
            title = line.lstrip("#").strip()
            if first_heading:
                first_heading = False
                synopsis_next = True
            elif level <= 2:
                out.append('.SH "%s"' % inline(title).upper()
                           .replace('"', ""))
            else:
                out.append('.SS "%s"' % inline(title).replace('"', ""))
        elif line.startswith("|"):
            flush()
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(cells(lines[i]))
                i += 1
            i -= 1
            for row in rows[2:]:          # the header and its rule go
                out.append(".TP")
                out.append(line_safe(inline(row[0])))
                out.append(line_safe(inline(" ".join(row[1:]))))
        elif line.startswith("- "):
            flush()
            item = [line[2:]]
            while i + 1 < len(lines) and lines[i + 1].startswith("  ") \
                    and lines[i + 1].strip():
                i += 1
                item.append(lines[i].strip())
            out.append(".IP \\(bu 2")
            out.extend(line_safe(inline(t)) for t in item)
        elif not line.strip():
            flush()
        else:
            para.append(line.strip())
        i += 1
    flush()
    out += [".SH SEE ALSO", "\\fBlua5.4\\fR(1); README.md and docs/ of the "
            "odebench sources"]
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) < 3:
        print("usage: md2man.py CLI.md OUT.1 [VERSION]", file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as fh:
        md = fh.read()
    version = sys.argv[3] if len(sys.argv) > 3 else ""
    with open(sys.argv[2], "w", encoding="utf-8") as fh:
        fh.write(convert(md, version))
    return 0


if __name__ == "__main__":
    sys.exit(main())
