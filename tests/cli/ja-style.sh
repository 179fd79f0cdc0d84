#!/bin/bash
# The Japanese catalogue's style, printed as TAP: every line of the Japanese --help (of oomfix
# and of each subcommand, with LANGUAGE=ja LANG=C.UTF-8) fits an 80-column terminal, measured in
# display cells, and so does every line of the English --help (LANGUAGE empty, LANG=C.UTF-8) of
# oomfix and of every subcommand of src/cli/main.c's table, and the usage line for an unknown
# option; and no term of the table in ja-terms.tsv appears in po/ja.po or README.ja.md in
# a form other than the chosen one; parentheses in Japanese text are full-width; every entry's
# msgid is still in the sources (xgettext), and po/POTFILES lists every file with messages.
set -u
OOMFIX=${OOMFIX:?set OOMFIX to the built binary}
SOURCE_ROOT=${SOURCE_ROOT:?set SOURCE_ROOT to the source tree}
TESTS_DIR=${TESTS_DIR:?set TESTS_DIR to the tests folder}
PO=$SOURCE_ROOT/po/ja.po
TERMS=$TESTS_DIR/cli/ja-terms.tsv
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export NO_COLOR=1 HOME=$WORK/home
unset LC_ALL LC_MESSAGES LANGUAGE

PY=$(command -v python3 || true)
if [ -z "$PY" ]; then
	echo "1..0 # SKIP python3 is needed to measure cells and read po/ja.po"
	exit 0
fi

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); echo "not ok $n - $1"; }

# cells.py FILE [en]: prints every line wider than 80 cells (East Asian Wide and Fullwidth count
# 2), the widest first, and fails then; without `en`, fails too when the text has no Japanese (the
# catalogue was not used).
cat > "$WORK/cells.py" << 'PYEOF'
import sys, unicodedata
text = open(sys.argv[1], encoding='utf-8').read()
def cells(s):
    return sum(0 if unicodedata.combining(c) else
               2 if unicodedata.east_asian_width(c) in 'WF' else 1 for c in s)
bad = 0
for i, line in sorted(enumerate(text.split('\n'), 1), key=lambda l: -cells(l[1])):
    if cells(line) > 80:
        print('line %d is %d cells: %s' % (i, cells(line), line))
        bad += 1
if sys.argv[2:] != ['en'] and not any('\u3040' <= c <= '\u30ff' for c in text):
    print('no Japanese in the output')
    bad += 1
sys.exit(1 if bad else 0)
PYEOF

# The subcommands, from the English main help ("  oomfix NAME ...").
cmds=$(LANGUAGE= LANG=C.UTF-8 "$OOMFIX" --help | sed -n 's/^  oomfix \([a-z][a-z-]*\).*/\1/p' | sort -u)
[ -n "$cmds" ] || { notok "the main --help lists the subcommands"; }
for c in "" $cmds; do
	name="oomfix${c:+ $c} --help"
	if ! LANGUAGE=ja LANG=C.UTF-8 "$OOMFIX" $c --help > "$WORK/help" 2>&1; then
		notok "$name under LANGUAGE=ja exits 0"
		sed 's/^/# /' "$WORK/help"
		continue
	fi
	if "$PY" "$WORK/cells.py" "$WORK/help" > "$WORK/why" 2>&1; then
		ok "$name under LANGUAGE=ja: every line within 80 cells"
	else
		notok "$name under LANGUAGE=ja: every line within 80 cells"
		sed 's/^/# /' "$WORK/why"
	fi
done

# The English --help of oomfix and of every subcommand of main.c's table (not only those the main
# help names) fits 80 cells too: users run it over SSH in an 80x24 terminal.
en_cmds=$(sed -n 's/^[[:space:]]*{ "\([a-z][a-z-]*\)", cmd_[a-z_]* },.*/\1/p' "$SOURCE_ROOT/src/cli/main.c")
if [ -z "$en_cmds" ]; then
	notok "the subcommands are read from src/cli/main.c's table"
fi
for c in "" $en_cmds; do
	name="oomfix${c:+ $c} --help"
	if ! LANGUAGE= LANG=C.UTF-8 "$OOMFIX" $c --help > "$WORK/help" 2>&1; then
		notok "$name in English exits 0"
		sed 's/^/# /' "$WORK/help"
		continue
	fi
	if "$PY" "$WORK/cells.py" "$WORK/help" en > "$WORK/why" 2>&1; then
		ok "$name in English: every line within 80 cells"
	else
		notok "$name in English: every line within 80 cells ($(head -n 1 "$WORK/why"))"
		sed 's/^/# /' "$WORK/why"
	fi
done
# The usage line the terminal UI prints for an option it does not know (as for `oomfix follow
# --help`, follow not being a subcommand) fits too.
LANGUAGE= LANG=C.UTF-8 "$OOMFIX" --no-such-option > "$WORK/help" 2>&1
if "$PY" "$WORK/cells.py" "$WORK/help" en > "$WORK/why" 2>&1 && grep -q '^usage: oomfix' "$WORK/help"; then
	ok "oomfix's usage line for an unknown option in English: within 80 cells"
else
	notok "oomfix's usage line for an unknown option in English: within 80 cells ($(head -n 1 "$WORK/why"))"
	sed 's/^/# /' "$WORK/help" "$WORK/why"
fi

# terms.py PO TSV: one failure line per msgstr holding a form the table forbids.
cat > "$WORK/terms.py" << 'PYEOF'
import re, sys
def unq(s):
    return re.sub(r'\\(.)', lambda m: {'n': '\n', 't': '\t'}.get(m.group(1), m.group(1)),
                  s.strip()[1:-1])
entries, cur, key = [], None, None
for line in open(sys.argv[1], encoding='utf-8'):
    if line.startswith('msgid '):
        if cur: entries.append(cur)
        cur, key = {'msgid': unq(line[6:]), 'msgstr': ''}, 'msgid'
    elif line.startswith('msgstr '):
        cur['msgstr'], key = unq(line[7:]), 'msgstr'
    elif line.startswith('"') and cur:
        cur[key] += unq(line)
if cur: entries.append(cur)
rows = [l.rstrip('\n').split('\t') for l in open(sys.argv[2], encoding='utf-8')
        if l.strip() and not l.startswith('#')]
bad = 0
for concept, chosen, forbidden in rows:
    rx = re.compile(forbidden, re.M)
    for e in entries:
        if e['msgid'] and e['msgstr'] != e['msgid'] and rx.search(e['msgstr']):
            m = rx.search(e['msgstr'])
            print('%s: write %s, not %r in: %s' % (concept, chosen, m.group(0),
                  e['msgstr'].replace('\n', ' ')[:100]))
            bad += 1
# Parentheses around a remark in Japanese text are full-width, （…）, as around ASCII in it
# (（%s）, （aitk:NAME）); a half-width one stays only where it is part of a name (oomfix(1)).
for e in entries:
    if not e['msgid'] or not re.search(r'[\u3040-\u30ff\u4e00-\u9fff]', e['msgstr']):
        continue
    for m in re.finditer(r'(?<![A-Za-z0-9_])\(', e['msgstr']):
        print('half-width parenthesis in Japanese text, write （…）: %s'
              % e['msgstr'][max(0, m.start() - 30):m.start() + 30].replace('\n', ' '))
        bad += 1
# The Japanese README uses the same words.
readme = sys.argv[3] if len(sys.argv) > 3 else None
if readme:
    for i, line in enumerate(open(readme, encoding='utf-8'), 1):
        for concept, chosen, forbidden in rows:
            m = re.search(forbidden, line)
            if m:
                print('%s:%d: %s: write %s, not %r' % (readme, i, concept, chosen, m.group(0)))
                bad += 1
print('%d terms checked in %d entries' % (len(rows), len(entries)))
sys.exit(1 if bad or len(rows) < 10 or len(entries) < 100 else 0)
PYEOF
if "$PY" "$WORK/terms.py" "$PO" "$TERMS" "$SOURCE_ROOT/README.ja.md" > "$WORK/why" 2>&1; then
	ok "po/ja.po and README.ja.md use one form per term of ja-terms.tsv; （…） in Japanese text"
else
	notok "po/ja.po and README.ja.md use one form per term of ja-terms.tsv; （…） in Japanese text"
	sed 's/^/# /' "$WORK/why"
fi
# E20 (review 4): README.ja.md covers this release's features as README.md does
readme_ja_covers() {
	local f="$SOURCE_ROOT/README.ja.md" w
	for w in "oomfix estimate" "--vram" "--apply" "oomfix measurements" "--probe" \
		"restore --first" "oomfix runs" "フィット行" "きわどい"; do
		grep -qF -- "$w" "$f" || { echo "# README.ja.md does not mention: $w"; return 1; }
	done
}
if readme_ja_covers; then
	ok "E20: README.ja.md covers the estimate, the fit line, the card, the probe and the trail"
else
	notok "E20: README.ja.md covers the estimate, the fit line, the card, the probe and the trail"
fi

# The catalogue holds what the sources say: every file with a _( is in po/POTFILES, and no live
# entry of po/ja.po has a msgid that xgettext (as po/meson.build runs it) no longer finds there;
# such entries are marked obsolete (#~).
if command -v xgettext >/dev/null; then
	(cd "$SOURCE_ROOT" && grep -l '_("' src/*/*.c | sort) >"$WORK/with_msgs"
	sort "$SOURCE_ROOT/po/POTFILES" >"$WORK/potfiles"
	missing=$(comm -23 "$WORK/with_msgs" "$WORK/potfiles")
	if [ -z "$missing" ]; then
		ok "po/POTFILES lists every source file with a translated message"
	else
		notok "po/POTFILES lists every source file with a translated message"
		echo "$missing" | sed 's/^/# missing: /'
	fi
	(cd "$SOURCE_ROOT" && xgettext --from-code=UTF-8 --keyword=_ --keyword=N_ \
		--keyword=C_:1c,2 --keyword=NC_:1c,2 -f po/POTFILES -o "$WORK/now.pot")
	cat > "$WORK/stale.py" << 'PYEOF'
import ast, sys
def ids(path):
    out, cur, key = set(), None, None
    for line in open(path, encoding='utf-8'):
        if line.startswith('msgid '):
            if cur is not None: out.add(cur)
            cur, key = ast.literal_eval(line[6:]), 'id'
        elif line.startswith('msgstr') or line.startswith('msgid_plural '):
            key = 'str'  # a plural's second form and the translations are not its id
        elif line.startswith('"') and key == 'id':
            cur += ast.literal_eval(line)
    if cur is not None: out.add(cur)
    return out
now, po = ids(sys.argv[1]), ids(sys.argv[2])
stale = sorted(i for i in po if i and i not in now)
for i in stale:
    print('no longer in the sources: %r' % i[:100])
print('%d entries, %d messages in the sources' % (len(po), len(now)))
sys.exit(1 if stale or len(now) < 100 else 0)
PYEOF
	if "$PY" "$WORK/stale.py" "$WORK/now.pot" "$PO" >"$WORK/why" 2>&1; then
		ok "po/ja.po has no live entry the sources no longer have"
	else
		notok "po/ja.po has no live entry the sources no longer have"
		sed 's/^/# /' "$WORK/why"
	fi
else
	ok "po/ja.po against the sources # SKIP xgettext (gettext) is not installed"
fi
echo "1..$n"
