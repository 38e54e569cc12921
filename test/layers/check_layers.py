#!/usr/bin/env python3
"""Data flows down: a layer of lib/ includes only its own headers and those of the layers below it.

check_layers.py LAYERS_TXT LIB_DIR

LAYERS_TXT is what fabench_add_layer (cmake/FabenchLayers.cmake) writes at configure time,
one "layer: dep..." line per layer, naming the layers it links or sees (INCLUDE_LAYERS). Every
file under LIB_DIR/src/<layer>/ and LIB_DIR/include/fabench/<layer>/ is scanned for
#include "fabench/<other>/..." (or <...>); <other> must be the layer itself or reachable down
its deps. Also a failure: a directory of src/ or include/fabench/ that is not a layer, a layer
naming an unknown layer, a cycle. Prints each violation as file:line and exits 1.
"""
import re
import sys
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]fabench/([^/">]+)/')


def read_graph(path):
    graph = {}
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        line = line.split('#', 1)[0].strip()
        if not line:
            continue
        layer, sep, deps = line.partition(':')
        if not sep or not layer.strip():
            sys.exit(f'{path}:{n}: expected "layer: dep...", got {line!r}')
        graph[layer.strip()] = deps.split()
    return graph


def below(graph, layer, problems):
    """The layer and every layer reachable from it through its deps."""
    seen, path = set(), []

    def visit(name):
        if name in path:
            problems.append(f'layers: cycle {" -> ".join(path[path.index(name):] + [name])}')
            return
        if name in seen:
            return
        seen.add(name)
        path.append(name)
        for dep in graph.get(name, []):
            if dep not in graph:
                problems.append(f'layers: {name} names {dep}, which is not a layer')
                continue
            visit(dep)
        path.pop()

    visit(layer)
    return seen


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    graph = read_graph(argv[1])
    lib = Path(argv[2])
    problems = []
    dirs = [lib / 'src', lib / 'include' / 'fabench']
    for d in dirs:
        for sub in sorted(p for p in d.iterdir() if p.is_dir()):
            if sub.name not in graph:
                problems.append(f'{sub}: not a layer '
                                f'(no fabench_add_layer(NAME {sub.name}) in lib/CMakeLists.txt)')
    files = 0
    for layer in sorted(graph):
        allowed = below(graph, layer, problems)
        for d in dirs:
            for f in sorted((d / layer).rglob('*')):
                if not f.is_file() or f.suffix not in ('.hpp', '.cpp', '.h', '.cc', '.ipp', '.inl'):
                    continue
                files += 1
                for n, text in enumerate(f.read_text(errors='replace').splitlines(), 1):
                    m = INCLUDE.match(text)
                    if m and m.group(1) not in allowed:
                        other = m.group(1)
                        where = 'a layer above or beside it' if other in graph else 'not a layer'
                        problems.append(f'{f}:{n}: {layer} includes fabench/{other}/ ({where}; '
                                        f'{layer} sees {", ".join(sorted(allowed))})')
    for p in dict.fromkeys(problems):
        print(p)
    if problems:
        print(f'layers: {len(set(problems))} violation(s) of "data flows down"', file=sys.stderr)
        return 1
    print(f'layers: {len(graph)} layers, {files} files, every #include "fabench/..." goes down')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
