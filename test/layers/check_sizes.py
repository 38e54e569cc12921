#!/usr/bin/env python3
"""check_sizes: no function over --max-function lines and no file over --max-file lines.

Reads the C++ sources below the given roots (lib/ by default) and lists every function body
longer than the limit (from the line of its name to its closing brace, lambdas counted in the
function that holds them) and every file longer than its limit. Exit 1 when anything is
listed, 0 otherwise; --report prints the longest functions either way.

The scanner is lexical: comments, string and character literals are blanked, then each '{'
whose preceding text ends like a function head (`) [qualifiers] {`, `) : inits {`, `-> T {`)
and is not a control statement, a lambda or an initialiser starts a function, which ends at
its matching '}'. Nested functions (local classes' members) count toward the outer one.
"""
import argparse
import pathlib
import re
import sys

CONTROL = re.compile(r"\b(if|for|while|switch|catch|do|else|try)\s*$")
HEAD_END = re.compile(
    r"\)\s*(const|noexcept(\([^()]*\))?|override|final|mutable|&|&&|\s)*"
    r"(->\s*[\w:<>,\s*&]+)?\s*$")
NAME = re.compile(r"([~\w:]+|operator\s*\S+)\s*\($")


def blank(text: str) -> str:
    """Comments and literals become spaces (newlines kept, so line numbers hold)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and (text[i - 1].isalnum()):  # digit separator 1'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def head_before(code: str, pos: int) -> str:
    """The text between the last ';', '{' or '}' before pos and pos."""
    k = max(code.rfind(";", 0, pos), code.rfind("{", 0, pos), code.rfind("}", 0, pos))
    return code[k + 1:pos]


def is_function_head(head: str) -> bool:
    h = " ".join(head.split())
    if not h or h.startswith("#"):
        return False
    # constructor initialiser lists: `X::X(a) : m(a), n{b} {` -- take the part before ' : '
    if re.search(r"\)\s*:\s*[\w:]+\s*[({]", h):
        h = h[: re.search(r"\)\s*:\s*[\w:]+\s*[({]", h).start() + 1]
    if not HEAD_END.search(h):
        return False
    # find the '(' matching the last ')'
    depth, k = 0, len(h.rstrip()) - 1
    while k >= 0 and h[k] != ")":
        k -= 1
    while k >= 0:
        if h[k] == ")":
            depth += 1
        elif h[k] == "(":
            depth -= 1
            if depth == 0:
                break
        k -= 1
    before = h[:k].rstrip()
    if not before or CONTROL.search(before) or before.endswith("]") or before.endswith(">"):
        return before.endswith(">") and bool(re.search(r"operator\s*[<>]+$", before))
    if re.search(r"\b(return|throw|new|sizeof|decltype|alignof|static_assert)$", before):
        return False
    if before.endswith(("=", ",", "(", "?", ":", "&&", "||", "return")):
        return False
    return bool(NAME.search(before + "("))


def functions(path: pathlib.Path):
    code = blank(path.read_text(errors="replace"))
    line_of = lambda p: code.count("\n", 0, p) + 1  # noqa: E731
    stack = []  # (is_function_start, start_line, name)
    depth_fn = 0
    for m in re.finditer(r"[{}]", code):
        p = m.start()
        if m.group() == "{":
            head = head_before(code, p)
            fn = depth_fn == 0 and is_function_head(head)
            if fn:
                first = p - len(head) + (len(head) - len(head.lstrip()))
                name = NAME.search(" ".join(head.split()).split("(")[0] + "(")
                stack.append((True, line_of(first), name.group(1) if name else "?"))
                depth_fn += 1
            else:
                stack.append((False, 0, ""))
        elif stack:
            fn, start, name = stack.pop()
            if fn:
                depth_fn -= 1
                yield name, start, line_of(p)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("roots", nargs="*", default=["lib"])
    ap.add_argument("--max-function", type=int, default=60)
    ap.add_argument("--max-file", type=int, default=400)
    ap.add_argument("--report", type=int, default=0, metavar="N",
                    help="also print the N longest functions")
    a = ap.parse_args()
    files = sorted(f for r in a.roots for f in pathlib.Path(r).rglob("*")
                   if f.suffix in (".cpp", ".hpp", ".h", ".cc"))
    bad, all_fns = [], []
    for f in files:
        n = f.read_text(errors="replace").count("\n")
        if n > a.max_file:
            bad.append(f"{f}: {n} lines (file limit {a.max_file})")
        for name, s, e in functions(f):
            all_fns.append((e - s + 1, f"{f}:{s}-{e} {name}"))
            if e - s + 1 > a.max_function:
                bad.append(f"{f}:{s}-{e}: {name} is {e - s + 1} lines "
                           f"(function limit {a.max_function})")
    for b in bad:
        print(b)
    if a.report:
        for n, w in sorted(all_fns, reverse=True)[: a.report]:
            print(f"{n:5d} {w}")
    print(f"check_sizes: {len(files)} files, {len(all_fns)} functions, {len(bad)} over the limits")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
