#!/usr/bin/env python3
"""Views see their environment, never the application.

A view (view_*.c, and the files that only views use: search.c, fitline.c, membar.c, views.c)
is given a struct ui_env (view.h); struct ui_app is defined in app.h. When no view reaches
app.h through its includes, the compiler itself refuses a view that reaches into the app: the
type is incomplete there. This check follows the quoted #includes of each view file, header to
header, and fails naming the chain when one reaches app.h.

    view_headers.py DIR        TAP: one line per view file
"""
import os
import re
import sys

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([^"]+)"', re.M)
VIEWS = re.compile(r'^(view_(?!table)\w+|search|fitline|membar|views)\.c$')


def includes(path):
    with open(path, encoding='utf-8') as f:
        return INCLUDE.findall(f.read())


def chain_to_app(folder, name, seen):
    """The chain of headers from name to app.h, or None."""
    for inc in includes(os.path.join(folder, name)):
        if inc == 'app.h':
            return [name, inc]
        path = os.path.join(folder, inc)
        if inc in seen or not os.path.exists(path):
            continue
        seen.add(inc)
        rest = chain_to_app(folder, inc, seen)
        if rest:
            return [name] + rest
    return None


def main():
    folder = sys.argv[1]
    views = sorted(f for f in os.listdir(folder) if VIEWS.match(f))
    if not views:
        print('1..0 # SKIP no view files in %s' % folder)
        return 0
    print('1..%d' % len(views))
    bad = 0
    for i, v in enumerate(views, 1):
        chain = chain_to_app(folder, v, set())
        if chain:
            bad += 1
            print('not ok %d - %s sees the application: %s' % (i, v, ' -> '.join(chain)))
        else:
            print('ok %d - %s sees only its environment' % (i, v))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
