#!/usr/bin/env python3
"""Check the relative links of README.md and docs/**/*.md.

Usage: check_links.py [REPO_ROOT]

Every markdown link or image whose target is not a URL must name a file or directory that
exists (relative to the page that links it), and a #fragment must match a heading of the
target page as GitHub spells its anchors (lowercase, punctuation dropped, spaces as hyphens,
-1, -2, ... for repeats). Links inside fenced code blocks and inline code are not links.
Exits 1 and prints one line per broken link (FILE:LINE: target: why), 0 when all resolve.
Standard library only.
"""

import os
import re
import sys
import unicodedata

FENCE = re.compile(r"^ {0,3}(```+|~~~+)")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
# [text](target) and ![alt](target); text may hold one level of brackets (an image in a link).
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)(?:\s+[\"'(][^)]*)?\s*\)")
REFERENCE_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")


def markdown_lines(text):
    """Yields (line number, line) outside fenced code blocks."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        match = FENCE.match(line)
        if fence is None:
            if match:
                fence = match.group(1)[0] * len(match.group(1))
                continue
            yield number, line
        elif match and match.group(1).startswith(fence) and line.strip().strip(fence[0]) == "":
            fence = None


def heading_text(raw):
    """The text GitHub renders for a heading: code spans unwrapped, links as their text."""
    text = CODE_SPAN.sub(lambda m: m.group(2), raw)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    return text


def slug(text):
    """GitHub's anchor for a heading text, before the -N suffix of repeats."""
    out = []
    for char in text.lower():
        if char in " -_":
            out.append("-" if char == " " else char)
        elif unicodedata.category(char)[0] in ("L", "N", "M"):
            out.append(char)
    return "".join(out)


def anchors(path, cache={}):
    if path not in cache:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        seen = {}
        found = set()
        for _, line in markdown_lines(text):
            match = HEADING.match(line)
            if match:
                base = slug(heading_text(match.group(2)))
                count = seen.get(base, 0)
                seen[base] = count + 1
                found.add(base if count == 0 else f"{base}-{count}")
            for name in HTML_ANCHOR.findall(line):
                found.add(name)
        cache[path] = found
    return cache[path]


def targets(text):
    """Yields (line number, link target) of every link outside code."""
    for number, line in markdown_lines(text):
        stripped = CODE_SPAN.sub("", line)
        for match in INLINE_LINK.finditer(stripped):
            yield number, match.group(1)
        match = REFERENCE_DEF.match(stripped)
        if match:
            yield number, match.group(1)


def check_file(root, path):
    errors = []
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for number, target in targets(text):
        target = target.strip("<>")
        if not target or SCHEME.match(target) or target.startswith("//"):
            continue
        file_part, _, fragment = target.partition("#")
        if file_part:
            resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part))
            if not os.path.exists(resolved):
                errors.append(f"{os.path.relpath(path, root)}:{number}: {target}: no such file")
                continue
        else:
            resolved = path
        if fragment and resolved.endswith(".md") and os.path.isfile(resolved):
            if fragment not in anchors(resolved):
                errors.append(f"{os.path.relpath(path, root)}:{number}: {target}: "
                              f"no heading with the anchor #{fragment} in "
                              f"{os.path.relpath(resolved, root)}")
    return errors


def pages(root):
    readme = os.path.join(root, "README.md")
    if os.path.isfile(readme):
        yield readme
    for directory, subdirs, files in os.walk(os.path.join(root, "docs")):
        subdirs.sort()
        for name in sorted(files):
            if name.endswith(".md"):
                yield os.path.join(directory, name)


def main(argv):
    root = os.path.abspath(argv[1] if len(argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    checked = list(pages(root))
    if not checked:
        print(f"check_links: no README.md or docs/*.md under {root}", file=sys.stderr)
        return 2
    errors = []
    for path in checked:
        errors.extend(check_file(root, path))
    for error in errors:
        print(error)
    print(f"check_links: {len(checked)} pages, {len(errors)} broken link(s)",
          file=sys.stderr if errors else sys.stdout)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
