#!/usr/bin/env python3
"""Checks the relative links and image paths of README.md and docs/*.md.

Every relative target must name a file or folder of the repository (never one outside it), and a
`#anchor` must be a heading of the target page as GitHub renders it (lower case, punctuation and
symbols dropped, spaces to hyphens, -1, -2, ... for repeated headings) or an explicit
<a id="..."> / <a name="...">. Links inside code (fenced blocks, indented blocks, `spans`) are not
links and are skipped; absolute URLs (http:, mailto:, ...) are not fetched.

usage: check_doc_links.py [REPO_ROOT]   (default: the parent of this script's folder)
Prints one line per broken link and a summary; exits 1 when any link is broken.
"""
import os
import re
import sys
import unicodedata

FENCE = re.compile(r"^\s{0,3}(```|~~~)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HTML_TARGET = re.compile(r"<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*\"([^\"]*)\"", re.IGNORECASE)
HTML_ANCHOR = re.compile(r"<a\b[^>]*?\b(?:id|name)\s*=\s*\"([^\"]+)\"", re.IGNORECASE)
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose_lines(text):
    """(line number, line) of the lines outside fenced and indented code blocks."""
    out, fenced, previous_blank = [], False, True
    for number, line in enumerate(text.split("\n"), 1):
        if FENCE.match(line):
            fenced = not fenced
            previous_blank = False
            continue
        if fenced:
            continue
        indented = line.startswith("    ") or line.startswith("\t")
        if indented and previous_blank and not line.lstrip().startswith(("-", "*", "|")):
            continue  # an indented code block (it keeps previous_blank: the block goes on)
        previous_blank = not line.strip()
        out.append((number, line))
    return out


def heading_text(raw):
    """The text GitHub renders for a heading's markdown: links and images by their text, code
    spans by their content, emphasis markers dropped (they are punctuation to the slug anyway)."""
    text = re.sub(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\([^)]*\)", r"\1", raw)
    text = CODE_SPAN.sub(lambda m: m.group(2), text)
    return re.sub(r"<[^>]+>", "", text)


def slug(text):
    """GitHub's heading anchor: lower case; letters, marks, decimal and letter numbers, '-', '_'
    and spaces kept (superscripts such as ² are dropped, like punctuation and symbols); each space
    becomes '-'."""
    kept = []
    for ch in heading_text(text).lower():
        category = unicodedata.category(ch)
        if ch in " -_" or category[0] in "LM" or category in ("Nd", "Nl"):
            kept.append(ch)
    return "".join(kept).replace(" ", "-")


def anchors_of(path, cache={}):
    if path not in cache:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        found, counts = set(), {}
        for _, line in prose_lines(text):
            for name in HTML_ANCHOR.findall(line):
                found.add(name)
            m = HEADING.match(line)
            if not m:
                continue
            base = slug(m.group(2))
            n = counts.get(base, 0)
            counts[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
        cache[path] = found
    return cache[path]


def targets(text):
    """(line number, target) of every link, image and reference definition in prose."""
    for number, line in prose_lines(text):
        bare = CODE_SPAN.sub("", line)
        for m in INLINE_LINK.finditer(bare):
            yield number, m.group(1)
        m = REFERENCE_DEF.match(bare)
        if m:
            yield number, m.group(1)
        for m in HTML_TARGET.finditer(bare):
            yield number, m.group(1)


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    pages = ["README.md"] + sorted(
        os.path.join("docs", name) for name in os.listdir(os.path.join(root, "docs"))
        if name.endswith(".md"))
    errors, links, anchors = [], 0, 0
    for page in pages:
        page_path = os.path.join(root, page)
        with open(page_path, encoding="utf-8") as f:
            text = f.read()
        for number, target in targets(text):
            if not target or SCHEME.match(target):
                continue
            links += 1
            where = f"{page}:{number}: {target}"
            path_part, _, anchor = target.partition("#")
            resolved = (os.path.normpath(os.path.join(os.path.dirname(page_path), path_part))
                        if path_part else page_path)
            if os.path.commonpath([root, resolved]) != root:
                errors.append(f"{where}: points outside the repository")
                continue
            if not os.path.exists(resolved):
                errors.append(f"{where}: no such file")
                continue
            if anchor:
                anchors += 1
                if not resolved.endswith(".md") or os.path.isdir(resolved):
                    errors.append(f"{where}: an anchor into a file that is not markdown")
                elif anchor not in anchors_of(resolved):
                    errors.append(f"{where}: no heading or anchor '#{anchor}' in "
                                  f"{os.path.relpath(resolved, root)}")
    for e in errors:
        print(e)
    print(f"{len(pages)} pages, {links} relative links and image paths "
          f"({anchors} with an anchor): {len(errors)} broken")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
