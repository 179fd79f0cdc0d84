#!/usr/bin/env python3
"""The call graph among the C files of one folder, and its circles.

A file uses another when it names a function or variable the other defines with external
linkage (calls, and taking an address, as a table of ops does). The graph must have no circle:
in src/ui the loop (app.c) uses the modules and the modules use the models, never the way
back, so a file can be read, changed and tested knowing only what it uses.

    call_graph.py DIR          TAP: one line per check; fails on a circle and names it
    call_graph.py --dot DIR    the graph, for reading

Read from the sources (comments, strings and preprocessor lines left out), so it needs no
build and no tool beyond Python.
"""
import os
import re
import sys

STRIP = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
PREPROC = re.compile(r'^[ \t]*#(?:[^\n]*\\\n)*[^\n]*', re.M)
FUNC = re.compile(r'(\w+)\s*\((?:[^()]|\([^()]*\))*\)\s*(?:__attribute__\s*\(\(.*\)\)\s*)?\{\}$',
                  re.S)
VAR = re.compile(r'(\w+)\s*(?:\[[^\]]*\]\s*)*(?:=|$)', re.S)
SKIP = re.compile(r'^(?:static|typedef|extern)\b|^(?:struct|enum|union)\s+\w*\s*(?:\{\})?$')


def code_of(path):
    with open(path, encoding='utf-8') as f:
        text = f.read()
    text = STRIP.sub(lambda m: '""' if m.group(0)[0] in '"\'' else ' ', text)
    return PREPROC.sub('', text)


def top_level(code):
    """The file's text at brace depth 0, each body collapsed to {}; a function's body ends its
    statement (a struct's or an initializer's does not)."""
    out, depth, body = [], 0, False
    for ch in code:
        if ch == '{':
            if depth == 0:
                body = ''.join(out).rstrip().endswith(')')
                out.append('{')
            depth += 1
        elif ch == '}':
            depth -= 1
            if depth == 0:
                out.append('}\n;' if body else '}')
        elif depth == 0:
            out.append(ch)
    return ''.join(out)


def definitions(code):
    names = set()
    for stmt in top_level(code).split(';'):
        s = ' '.join(stmt.split())
        if not s or SKIP.search(s):
            continue
        m = FUNC.search(s)
        if m:
            names.add(m.group(1))
            continue
        if s.endswith(')') and '=' not in s:  # a prototype
            continue
        m = VAR.search(s.split('=')[0].strip() + ('=' if '=' in s else ''))
        if m:
            names.add(m.group(1))
    return names


MACRO = re.compile(r'^[ \t]*#[ \t]*define[ \t]+(\w+)((?:[^\n]*\\\n)*[^\n]*)', re.M)
WORD = re.compile(r'\b[A-Za-z_]\w*\b')


def macros(folder, names):
    """The words each macro of the folder's files stands for: a table written as an X-macro
    (a row per view naming its ops) uses what its rows name."""
    out = {}
    for f in names:
        with open(os.path.join(folder, f), encoding='utf-8') as fp:
            text = STRIP.sub(' ', fp.read())
        for m in MACRO.finditer(text):
            out[m.group(1)] = set(WORD.findall(m.group(2)))
    return out


def words_of(code, defs):
    words, todo = set(), list(WORD.findall(code))
    while todo:
        w = todo.pop()
        if w in words:
            continue
        words.add(w)
        todo.extend(defs.get(w, ()))
    return words


def graph(folder):
    names = sorted(os.listdir(folder))
    files = [f for f in names if f.endswith('.c')]
    defs = macros(folder, [f for f in names if f.endswith(('.c', '.h'))])
    code = {f: code_of(os.path.join(folder, f)) for f in files}
    owner = {}
    for f in files:
        for name in definitions(code[f]):
            owner.setdefault(name, f)
    edges = {f: {} for f in files}
    for f in files:
        for word in words_of(code[f], defs):
            g = owner.get(word)
            if g and g != f:
                edges[f].setdefault(g, word)
    return files, edges


def circles(files, edges):
    """Tarjan's strongly connected components of more than one file (or a file using itself)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in files:
        if v not in index:
            visit(v)
    return out


def one_circle(comp, edges):
    """A path round the component, each step with the name that makes it."""
    start, path, seen = comp[0], [comp[0]], {comp[0]}
    while True:
        nxt = [w for w in sorted(edges[path[-1]]) if w in comp]
        back = [w for w in nxt if w == start]
        if back and len(path) > 1:
            path.append(start)
            break
        fresh = [w for w in nxt if w not in seen]
        if not fresh:
            w = nxt[0]
            path = path[path.index(w):] + [w] if w in path else path + [w]
            break
        seen.add(fresh[0])
        path.append(fresh[0])
    return ' -> '.join('%s (%s)' % (path[i], edges[path[i]][path[i + 1]])
                       for i in range(len(path) - 1)) + ' -> ' + path[-1]


def main(argv):
    if len(argv) == 3 and argv[1] == '--dot':
        files, edges = graph(argv[2])
        print('digraph ui {')
        for f in files:
            for g, name in sorted(edges[f].items()):
                print('  "%s" -> "%s" [label="%s"];' % (f, g, name))
        print('}')
        return 0
    if len(argv) != 2:
        sys.stderr.write('usage: call_graph.py [--dot] DIR\n')
        return 64
    files, edges = graph(argv[1])
    found = circles(files, edges)
    nedges = sum(len(e) for e in edges.values())
    print('1..1')
    if not files:
        print('not ok 1 - no C files in %s' % argv[1])
        return 1
    if found:
        print('not ok 1 - call circles among %d files of %s' % (len(files), argv[1]))
        for comp in found:
            print('# tangled: ' + ' '.join(comp))
            print('# circle: ' + one_circle(comp, edges))
        return 1
    print('ok 1 - no call circle among %d files (%d uses)' % (len(files), nedges))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
