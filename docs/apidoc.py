"""The API reference's docstring renderer: numpydoc-style docstrings, as dpcd writes them, to reStructuredText.

dpcd's docstrings are written to be read in a terminal (``help(dpcd.discover)``): their formulas are plain text
(``|X|``, ``σ*``, ``T_ab``), their parameter lines read ``name : what it is`` (a description where numpydoc puts a
type) and a section may end with free paragraphs (``Privacy: …``). Sphinx's napoleon reads those paragraphs as
parameters and reStructuredText reads ``|X|`` as a substitution, so the reference renders them here instead:

* underlined headings become rubrics; ``Parameters``, ``Attributes``, ``Returns``, ``Raises`` and ``Other
  Parameters`` become field lists (``name : text`` entries with their indented continuation lines); the first
  line that is not an entry ends the field list, and what follows is prose again;
* prose is escaped (``|``, backslashes, a trailing ``_``) outside ````code```` and roles; doctest blocks and
  literal blocks are left as they are; a line indented under a plain line is read as its continuation; a
  reference (``.. [DR14] …``) is a paragraph of its own (the same label appears in several modules);
* :func:`render` returns the text and whether it parses without a docutils warning; the build shows a docstring
  that does not verbatim instead (:func:`literal`), and ``tests/test_docs.py`` holds the list of those to none
  (modules, functions and classes); a table that does not parse is shown as a literal block within its docstring.
"""

from __future__ import annotations

import io
import re

from docutils.core import publish_doctree
from docutils.parsers.rst import directives, roles

_DOCUTILS_LOOKUP = (roles.role, directives.directive)  # taken when the build's configuration imports this module

FIELD_SECTIONS = {"Parameters": "param", "Other Parameters": "param", "Attributes": "ivar", "Returns": "returns",
                  "Yields": "returns", "Raises": "raises"}
_UNDERLINE = re.compile(r"^\s*([-=~^])\1{2,}\s*$")
_ENTRY = re.compile(r"^(\*{0,2}[A-Za-z_][\w.]*(?:\s*,\s*\*{0,2}[A-Za-z_][\w.]*)*)\s+:(?:\s+(.*))?$")
_CODE = re.compile(r"(``.+?``|:[a-z:]+:`[^`]+`|`[^`]+`_?)")
_TABLE_BORDER = re.compile(r"^\s*=+(\s+=+)+\s*$")
_BULLET = re.compile(r"^([*\-•]|\d+\.|\(\w\))\s+")


def _escape(line: str) -> str:
    parts = _CODE.split(line)
    for i in range(0, len(parts), 2):
        text = parts[i].replace("\\", "\\\\").replace("|", "\\|")
        parts[i] = re.sub(r"(?<=\w)_(?=\W|$)", r"\\_", text)
    return "".join(parts)


def _text_indent(line: str) -> int:
    stripped = line.lstrip()
    bullet = _BULLET.match(stripped)
    return len(line) - len(stripped) + (bullet.end() if bullet else 0)


def _prose(lines: list[str]) -> list[str]:
    """Prose lines escaped; doctest and literal blocks kept; a line indented under a plain one dedented onto it."""
    out: list[str] = []
    doctest = in_literal = False
    literal_indent = paragraph_indent = 0
    in_paragraph = False
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        stripped = line.lstrip()
        width = len(line) - len(stripped)
        if _TABLE_BORDER.match(line) and not (in_paragraph or in_literal or doctest):  # a simple table, as written
            end = i
            while end < len(lines) and not (_TABLE_BORDER.match(lines[end]) and
                                            (end + 1 == len(lines) or not lines[end + 1].strip())):
                end += 1
            table = lines[i - 1:end + 1]
            out += table if parses("\n".join(table)) else literal("\n".join(table)).splitlines()
            i = end + 1
            continue
        if stripped and not (in_paragraph or in_literal or doctest):
            block = _line_block(lines, i - 1)
            if block:
                out += block[0]
                i = block[1]
                continue
        if not stripped:
            doctest = in_paragraph = False
            out.append("")
            continue
        if in_literal and width > literal_indent:
            out.append(line)
            continue
        in_literal = False
        if stripped.startswith(">>>") and not doctest:
            if in_paragraph:
                out.append("")
            doctest = True
        if doctest:
            out.append(line)
            continue
        if stripped.startswith(".. ["):  # a reference: its own paragraph, plain text (a label is no citation target)
            if in_paragraph:
                out.append("")
            stripped, in_paragraph = stripped[3:], False
        if in_paragraph and width > paragraph_indent:  # a hanging indent: the same paragraph in plain text
            width = paragraph_indent
        elif not in_paragraph or _BULLET.match(stripped):
            paragraph_indent = _text_indent(" " * width + stripped)
        in_paragraph = True
        out.append(" " * width + _escape(stripped))
        if stripped.endswith("::"):
            in_literal, literal_indent, in_paragraph = True, width, False
    return out


def _line_block(lines: list[str], start: int) -> tuple[list[str], int] | None:
    """A paragraph written as a list of ``name`` lines (two or more lines opening with a code span, at the
    paragraph's indent) as a reST line block, one line each, with the lines that do not open so joined to the line
    before; and where the paragraph ends. ``None`` for any other paragraph."""
    end = start
    while end < len(lines) and lines[end].strip():
        end += 1
    paragraph = lines[start:end]
    indent = len(paragraph[0]) - len(paragraph[0].lstrip())
    opens = [line.startswith(" " * indent + "``") for line in paragraph]
    if not opens[0] or sum(opens) < 2 or any(l.lstrip().startswith(">>>") for l in paragraph):
        return None
    out: list[str] = []
    for line, first in zip(paragraph, opens):
        if first:
            out.append(" " * indent + "| " + _escape(line.strip()))
        else:
            out[-1] += " " + _escape(line.strip())
    return out, end


def _fields(kind: str, lines: list[str]) -> tuple[list[str], list[str]]:
    """A field section's entries as a reST field list, and the prose lines after its last entry."""
    out: list[str] = []
    base = min((len(l) - len(l.lstrip()) for l in lines if l.strip()), default=0)
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        indent = len(line) - len(line.lstrip())
        entry = _ENTRY.match(line.strip()) if indent == base else None
        if indent == base and entry is None:  # prose after the entries (or a section written as prose)
            break
        names, text = (entry.group(1), entry.group(2) or "") if entry else ("", line.strip())
        more = _continuation(lines, i + 1, base)
        body = [text] + [l.strip() for l in more]
        i += 1 + len(more)
        joined = " ".join(_escape(b) for b in body if b)
        if kind == "returns":
            out.append(f":returns: {_escape(names) + ' — ' if names else ''}{joined}")
        elif kind == "raises":
            out.append(f":raises {names}: {joined}")
        else:
            for name in (n.strip() for n in names.split(",")):
                out.append(f":{kind} {name.replace('*', '')}: {joined}")
    return out, lines[i:]


def _continuation(lines: list[str], start: int, base: int) -> list[str]:
    more = []
    for line in lines[start:]:
        if not line.strip() or len(line) - len(line.lstrip()) <= base:
            break
        more.append(line)
    return more


def _sections(doc: str) -> list[tuple[str | None, list[str]]]:
    lines = doc.splitlines()
    parts: list[tuple[str | None, list[str]]] = [(None, [])]
    i = 0
    while i < len(lines):
        if i + 1 < len(lines) and lines[i].strip() and _UNDERLINE.match(lines[i + 1]) \
                and not _UNDERLINE.match(lines[i]):
            parts.append((lines[i].strip(), []))
            i += 2
            continue
        parts[-1][1].append(lines[i])
        i += 1
    return parts


def to_rst(doc: str) -> str:
    """``doc`` (a docstring as :func:`inspect.getdoc` returns it) as reStructuredText.

    >>> print(to_rst("Counts |X| cells.\\n\\nParameters\\n----------\\nx : the table.\\n    More on it.\\n\\nPrivacy: none."))
    Counts \\|X\\| cells.
    <BLANKLINE>
    :param x: the table. More on it.
    <BLANKLINE>
    Privacy: none.
    """
    out: list[str] = []
    for title, lines in _sections(doc):
        if title is not None:
            kind = FIELD_SECTIONS.get(title)
            if kind is not None:
                fields, lines = _fields(kind, lines)
                if fields:
                    out += ["", *fields, ""]
                else:
                    out += ["", f".. rubric:: {title}", ""]
            else:
                out += ["", f".. rubric:: {_escape(title)}", ""]
        out += _prose(lines)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip("\n")


def parses(rst: str) -> bool:
    """Whether docutils reads ``rst`` without a warning (Sphinx's own roles and directives aside)."""
    stream = io.StringIO()
    # during a build Sphinx looks roles and directives up in its own registry, whose entries need its environment:
    # this check parses with docutils' own lookup and registry
    saved = roles.role, directives.directive, roles._roles, directives._directives
    roles.role, directives.directive, roles._roles, directives._directives = _DOCUTILS_LOOKUP + ({}, {})
    try:
        publish_doctree(rst, settings_overrides={"warning_stream": stream, "report_level": 2, "halt_level": 5})
    finally:
        roles.role, directives.directive, roles._roles, directives._directives = saved
    return not any(("(WARNING" in line or "(ERROR" in line or "(SEVERE" in line)
                   and "Unknown interpreted text role" not in line and "Unknown directive type" not in line
                   and 'No role entry for' not in line and 'No directive entry for' not in line
                   for line in stream.getvalue().splitlines())


def literal(doc: str) -> str:
    """``doc`` as a reST literal block, verbatim."""
    return "::\n\n" + "\n".join("    " + line if line.strip() else "" for line in doc.splitlines())


def render(doc: str) -> tuple[str, bool]:
    """``doc`` as reStructuredText if it parses cleanly, else verbatim; and whether it rendered."""
    rst = to_rst(doc)
    return (rst, True) if parses(rst) else (literal(doc), False)
