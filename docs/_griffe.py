"""A griffe extension for the API reference: ftorch's docstrings are written
for ``help()`` and doctest (reST-flavoured, with bare ``>>>`` examples);
this turns them into the Markdown mkdocstrings renders.

- a run of ``>>>`` lines (prompts, continuations and expected output, up to
  a blank line) becomes a fenced ``pycon`` block;
- ``.. math::`` blocks and ``:math:`...``` roles become arithmatex math;
- continuation lines of an ``Args:``/``Returns:``/``Raises:`` entry indented
  by fewer than 4 more spaces than the entry (valid for ``help()``) are
  indented by 4, as the Google-style parser requires;
- reST's ``literal`` (double backticks) stays as it is: it is valid Markdown.

It also drops class members that only point outside ftorch (a ``Protocol``'s
``__init__`` is ``typing``'s), which the reference has nothing to say about.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_MATH_ROLE = re.compile(r":math:`([^`]+)`")
_SECTION = re.compile(r"^(\s*)(Args|Arguments|Returns|Raises|Yields|Attributes):\s*$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _fix_sections(lines: list[str]) -> list[str]:
    out: list[str] = []
    section: int | None = None  # the indentation of the current section's entries
    for line in lines:
        match = _SECTION.match(line)
        if match:
            section = len(match.group(1)) + 4
            out.append(line)
            continue
        if section is not None and line.strip():
            depth = _indent(line)
            if depth < section:
                section = None
            elif section < depth < section + 4:
                line = " " * (section + 4) + line.lstrip()
        out.append(line)
    return out


def to_markdown(text: str) -> str:
    """The Markdown form of one (dedented) docstring."""
    lines = _fix_sections(text.splitlines())
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        if stripped.startswith(">>>"):
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
                i += 1
            if out and out[-1].strip():
                out.append("")
            out += [indent + "```pycon", *(indent + b for b in block), indent + "```"]
            continue
        if stripped.startswith(".. math::"):
            body = [stripped[len(".. math::"):].strip()]
            i += 1
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith(indent + " ")):
                body.append(lines[i].strip())
                i += 1
            body = [b for b in body if b]
            out += [indent + "$$", *(indent + b for b in body), indent + "$$", ""]
            continue
        out.append(_MATH_ROLE.sub(lambda m: "$" + m.group(1) + "$", line))
        i += 1
    return "\n".join(out)


class DocstringsToMarkdown(griffe.Extension):
    """Rewrites every docstring as it is loaded (see the module docstring)."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = to_markdown(obj.docstring.value)

    def on_class_members(self, *, cls: griffe.Class, **kwargs: Any) -> None:
        for name, member in list(cls.members.items()):
            if member.is_alias and not member.target_path.startswith("ftorch"):
                del cls.members[name]
