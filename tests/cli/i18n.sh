#!/bin/bash
# Japanese messages (po/ja.po) through the command line and the headless UI, printed as TAP.
#
# LANGUAGE=ja with LC_ALL=C.UTF-8 selects the Japanese catalog on machines that have no ja_JP
# locale (gettext reads LANGUAGE once the locale is not C). The expected texts are looked up in
# po/ja.po while the test runs, never copied here, so a new translation needs no test change.
set -u
OOMFIX=${OOMFIX:?set OOMFIX to the built binary}
SOURCE_ROOT=${SOURCE_ROOT:?set SOURCE_ROOT to the source tree}
PO=$SOURCE_ROOT/po/ja.po
EX=$SOURCE_ROOT/examples
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export NO_COLOR=1 LC_ALL=C.UTF-8 HOME=$WORK/home XDG_CONFIG_HOME=$WORK/home/.config
unset LANG LC_MESSAGES LANGUAGE ESCDELAY

PY=$(command -v python3 || true)
if [ -z "$PY" ]; then
	echo "1..0 # SKIP python3 is needed to read po/ja.po"
	exit 0
fi

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); echo "not ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
check() { # check DESCRIPTION COMMAND...: ok when the command succeeds
	local d=$1
	shift
	if "$@" > "$WORK/why" 2>&1; then ok "$d"; else notok "$d"; sed 's/^/# /' "$WORK/why"; fi
}

ja() { LANGUAGE=ja "$OOMFIX" "$@"; }
en() { "$OOMFIX" "$@"; }

# po.py: reads ja.po; `msgstr MSGID` prints the translation, `formats` compares the printf
# conversions of every entry, `wide FILE...` and `japanese FILE...` look at screen dumps.
cat > "$WORK/po.py" << 'EOF'
import re, sys, unicodedata

def entries(path):
    ents, cur, key = [], None, None
    for raw in open(path, encoding='utf-8'):
        line = raw.rstrip('\n')
        if line.startswith('#~'):
            continue
        m = re.match(r'(msgid|msgstr|msgctxt|msgid_plural|msgstr\[\d+\]) (".*")$', line)
        if m:
            if m.group(1) in ('msgid', 'msgctxt') and (cur is None or 'msgstr' in cur):
                cur = {}
                ents.append(cur)
            key = m.group(1)
            cur[key] = unq(m.group(2))
        elif line.startswith('"') and cur is not None:
            cur[key] += unq(line)
    return [e for e in ents if e.get('msgid')]

def unq(s):
    s = s[1:-1]
    return re.sub(r'\\(.)', lambda m: {'n': '\n', 't': '\t', '"': '"', '\\': '\\'}.get(m.group(1), '\\' + m.group(1)), s)

CONV = re.compile(r'%(?:\d+\$)?[-+ #0\']*(?:\*|\d+)?(?:\.(?:\*|\d+))?(?:hh|h|ll|l|z|j|t|L)?[diouxXcsfeEgGp%]')

def cells(s):
    return sum(2 if unicodedata.east_asian_width(c) in 'WF' else
               0 if unicodedata.combining(c) else 1 for c in s)

cmd = sys.argv[1]
if cmd == 'msgid':  # msgid PO PREFIX: the one msgid that starts with PREFIX (\n for newlines)
    pre = sys.argv[3].replace('\\n', '\n')
    found = [e['msgid'] for e in entries(sys.argv[2]) if e['msgid'].startswith(pre)]
    if len(found) != 1:
        sys.exit('%d msgids start with %r' % (len(found), pre))
    sys.stdout.write(found[0])
    sys.exit(0)
if cmd == 'msgstr':
    want = sys.argv[3]
    for e in entries(sys.argv[2]):
        if e['msgid'] == want and e.get('msgstr'):
            sys.stdout.write(e['msgstr'])
            sys.exit(0)
    sys.exit('no translation for: ' + want)
if cmd == 'formats':
    bad = 0
    for e in entries(sys.argv[2]):
        a, b = CONV.findall(e['msgid']), CONV.findall(e.get('msgstr', ''))
        if e.get('msgstr') and a != b:
            print('%r: %s in msgid, %s in msgstr' % (e['msgid'][:60], a, b))
            bad += 1
    sys.exit(1 if bad else 0)
if cmd == 'stats':
    ents = entries(sys.argv[2])
    empty = [e['msgid'][:60] for e in ents if not e.get('msgstr')]
    for m in empty:
        print('untranslated: %r' % m)
    sys.exit(1 if empty else 0)
if cmd == 'wide':  # wide COLS FILE...: no line wider than COLS cells, valid UTF-8, no U+FFFD
    bad = 0
    for f in sys.argv[3:]:
        try:
            text = open(f, 'rb').read().decode('utf-8')
        except UnicodeDecodeError as ex:
            print('%s: not UTF-8 (a character cut in half?): %s' % (f, ex))
            bad += 1
            continue
        for i, l in enumerate(text.split('\n'), 1):
            if cells(l) > int(sys.argv[2]):
                print('%s:%d: %d cells: %s' % (f, i, cells(l), l))
                bad += 1
            if '\ufffd' in l:
                print('%s:%d: U+FFFD: %s' % (f, i, l))
                bad += 1
    sys.exit(1 if bad else 0)
if cmd == 'japanese':  # japanese FILE...: each file has kana or kanji
    bad = 0
    for f in sys.argv[2:]:
        t = open(f, encoding='utf-8', errors='replace').read()
        if not re.search('[\u3040-\u30ff\u4e00-\u9fff]', t):
            print('%s: no Japanese text' % f)
            bad += 1
    sys.exit(1 if bad else 0)
sys.exit('unknown command ' + cmd)
EOF
po() { "$PY" "$WORK/po.py" "$@"; }
tr_() { po msgstr "$PO" "$1"; }
contains() { # contains FILE TEXT
	grep -qF -- "$2" "$1" || { echo "'$2' not in $1:"; head -c 2000 "$1"; return 1; }
}
lacks() { # lacks FILE TEXT
	! grep -qF -- "$2" "$1" || { echo "'$2' is in $1"; return 1; }
}

# ---- the catalog itself ------------------------------------------------------------------------

check "ja.po: every message translated" po stats "$PO"
check "ja.po: every msgstr keeps the printf conversions of its msgid, in order" \
	po formats "$PO"
if command -v msgfmt > /dev/null; then
	check "ja.po: msgfmt --check" msgfmt --check -o "$WORK/ja.mo" "$PO"
	msgfmt --statistics -o /dev/null "$PO" > "$WORK/stats" 2>&1
	check "ja.po: msgfmt counts no fuzzy or untranslated message" \
		bash -c "grep -q 'translated' '$WORK/stats' && ! grep -Eq 'fuzzy|untranslated' '$WORK/stats'"
else
	skip "ja.po: msgfmt --check" "msgfmt is not installed"
	skip "ja.po: msgfmt counts no fuzzy or untranslated message" "msgfmt is not installed"
fi

# ---- oomfix --help -----------------------------------------------------------------------------

# The usage text is the catalog entry that starts with "Usage:" and the UI's command line.
USAGE_ID=$(po msgid "$PO" 'Usage:\n  oomfix [--vram GB]'; echo .)
USAGE_ID=${USAGE_ID%.} # keep the final newline that $(...) would drop
# ... followed by the paragraph on `estimate` (its own entry).
BEFORE_ID=$(po msgid "$PO" '\nBefore the run:\n  oomfix estimate'; echo .)
BEFORE_ID=${BEFORE_ID%.}
ja --help > "$WORK/help.ja" 2>&1
en --help > "$WORK/help.en" 2>&1
{ po msgstr "$PO" "$USAGE_ID" && po msgstr "$PO" "$BEFORE_ID"; } > "$WORK/help.want" 2> "$WORK/why" ||
	cat "$WORK/why" >&2
USAGE_ID=$USAGE_ID$BEFORE_ID
check "--help under LANGUAGE=ja is the msgstr of the usage text" cmp "$WORK/help.want" "$WORK/help.ja"
check "--help is English without LANGUAGE" \
	bash -c "printf '%s' \"\$1\" | cmp - '$WORK/help.en'" _ "$USAGE_ID"
check "--help under LANGUAGE=ja has Japanese text" po japanese "$WORK/help.ja"

# ---- diagnose ----------------------------------------------------------------------------------

ja diagnose --job "$EX/job.yaml" "$EX/train.log" > "$WORK/diag.ja" 2>&1
en diagnose --job "$EX/job.yaml" "$EX/train.log" > "$WORK/diag.en" 2>&1
for id in "Rollback plan ([x] already in place):" \
	"Signatures (count, line of the one nearest the failure):" \
	"Turn gradient checkpointing on"; do
	t=$(tr_ "$id" 2>&1)
	check "diagnose under LANGUAGE=ja says '$t'" contains "$WORK/diag.ja" "$t"
	check "diagnose under LANGUAGE=ja does not say '$id'" lacks "$WORK/diag.ja" "$id"
	check "diagnose in English says '$id'" contains "$WORK/diag.en" "$id"
done
check "diagnose under LANGUAGE=ja has Japanese text" po japanese "$WORK/diag.ja"
check "diagnose in English has no Japanese text" bash -c "! \"\$1\" '$WORK/po.py' japanese '$WORK/diag.en'" _ "$PY"

# Machine output is never translated.
for args in "diagnose --json --job $EX/job.yaml $EX/train.log" "diagnose --json $EX/train.log"; do
	# shellcheck disable=SC2086
	ja $args > "$WORK/j.ja" 2>&1
	# shellcheck disable=SC2086
	en $args > "$WORK/j.en" 2>&1
	check "'${args%% $EX*} ...' prints the same JSON in both languages" \
		cmp "$WORK/j.en" "$WORK/j.ja"
done
ja plan --json --log "$EX/train.log" "$EX/job.yaml" > "$WORK/p.ja" 2>&1
en plan --json --log "$EX/train.log" "$EX/job.yaml" > "$WORK/p.en" 2>&1
if cmp -s "$WORK/p.en" "$WORK/p.ja"; then
	ok "'plan --json' prints the same JSON in both languages"
else
	notok "'plan --json' prints the same JSON in both languages"
	diff "$WORK/p.en" "$WORK/p.ja" | head -6 | sed 's/^/# /'
fi

# ---- plan --------------------------------------------------------------------------------------

ja plan "$EX/job.yaml" > "$WORK/plan.ja" 2>&1
en plan "$EX/job.yaml" > "$WORK/plan.en" 2>&1
for id in "Quick checklist" "Batch size lowered" \
	"After a successful retry, scale up one setting at a time:"; do
	t=$(tr_ "$id" 2>&1)
	check "plan under LANGUAGE=ja says '$t'" contains "$WORK/plan.ja" "$t"
	check "plan in English says '$id'" contains "$WORK/plan.en" "$id"
done
# The status column lines up: every plan row puts its fix id at the same cell.
check "plan under LANGUAGE=ja keeps the status column aligned" "$PY" -c '
import re, sys, unicodedata
w = lambda s: sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)
cols = set()
for l in open(sys.argv[1], encoding="utf-8"):
    m = re.match(r"(  \d+\. \S+ +)[a-z_]+ ", l)
    if m:
        cols.add(w(m.group(1)))
print(sorted(cols))
sys.exit(0 if len(cols) == 1 else 1)' "$WORK/plan.ja"

# ---- the terminal UI at 80x24 ------------------------------------------------------------------

UI=$WORK/ui
mkdir -p "$UI"
cp "$EX"/* "$UI/"
cat > "$UI/script" << EOF
dump $UI/log.txt
Tab
dump $UI/plan.txt
PgDn
dump $UI/plan2.txt
Tab
dump $UI/diff-empty.txt
Tab
dump $UI/training.txt
Tab
dump $UI/datasets.txt
Tab
dump $UI/sample.txt
Tab
dump $UI/model.txt
Tab
dump $UI/advanced.txt
?
dump $UI/help.txt
PgDn
dump $UI/help2.txt
q
w
dump $UI/walk1.txt
m
dump $UI/walk1-more.txt
s
dump $UI/walk2.txt
q
a
dump $UI/applied.txt
d
dump $UI/diff.txt
s
dump $UI/save.txt
n
dump $UI/not-saved.txt
q
dump $UI/quit.txt
n
EOF
if (cd "$UI" && LANGUAGE=ja "$OOMFIX" job.yaml train.log --size 80x24 --script script) \
	> "$UI/out" 2>&1; then
	ok "UI under LANGUAGE=ja runs the script at 80x24"
else
	notok "UI under LANGUAGE=ja runs the script at 80x24"
	sed 's/^/# /' "$UI/out" | head -20
fi
dumps=("$UI"/*.txt)
check "UI under LANGUAGE=ja wrote ${#dumps[@]} screen dumps" test "${#dumps[@]}" -ge 19
check "UI under LANGUAGE=ja: no line wider than 80 cells, no character cut in half" \
	po wide 80 "${dumps[@]}"
check "UI under LANGUAGE=ja: every screen has Japanese text" po japanese "${dumps[@]}"
t=$(tr_ "Log" 2>&1)
check "UI under LANGUAGE=ja: the tab bar names the log '$t'" \
	bash -c "head -1 '$UI/log.txt' | grep -qF -- \"\$1\"" _ "$t"
t=$(tr_ "Write these changes? y = save, n = not now" 2>&1)
check "UI under LANGUAGE=ja asks before saving in Japanese" contains "$UI/save.txt" "$t"
check "UI under LANGUAGE=ja: answering n left the job file alone" cmp "$EX/job.yaml" "$UI/job.yaml"

# plan's text wraps its checklist reasons and plan steps at 80 cells, in both languages.
# Relative paths: the report names the job as given, and where the repository lives is no text's
# business here.
(cd "$EX" && ja plan --log train.log job.yaml) > "$WORK/plan-wide.ja" 2>&1
(cd "$EX" && en plan --log train.log job.yaml) > "$WORK/plan-wide.en" 2>&1
check "plan: no line wider than 80 cells (English and Japanese)" \
	po wide 80 "$WORK/plan-wide.en" "$WORK/plan-wide.ja"

echo "1..$n"
