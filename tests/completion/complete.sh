#!/bin/bash
# The shell completions (completions/): each loads in its shell and completes subcommands,
# options, paths, fix ids after `fix JOB` (asked of `oomfix fix --list JOB`) and aitk:NAME jobs
# (asked of `oomfix jobs --names`, here a stand-in that prints two names). bash always; zsh and
# fish when installed. Prints TAP.
set -u
OOMFIX=${OOMFIX:?set OOMFIX to the built binary}
SOURCE_ROOT=${SOURCE_ROOT:?set SOURCE_ROOT to the source tree}
COMP=$SOURCE_ROOT/completions
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; fails=$((fails + 1)); }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }

# `oomfix` on PATH: the real binary, except for `jobs --names`, which the database support
# (another subcommand) will answer; here two names, so the completion's use of it is tested.
mkdir -p "$WORK/bin" "$WORK/d"
cat > "$WORK/bin/oomfix" <<SH
#!/bin/sh
if [ "\$1" = jobs ] && [ -z "\${REAL_JOBS:-}" ]; then printf 'flux_portrait\nwan_clip\n'; exit 0; fi
exec "$OOMFIX" "\$@"
SH
chmod +x "$WORK/bin/oomfix"
cp "$SOURCE_ROOT/examples/job.yaml" "$SOURCE_ROOT/examples/train.log" "$WORK/d/"
export PATH=$WORK/bin:$PATH
cd "$WORK/d"

# ---- bash: the completion function run as readline would, words in COMPREPLY
# bash's default word breaks, ':' included (as with bash-completion loaded).
export WB=$' \t\n"\'><=;|&(:'
bashc() { # LINE: prints the candidates, one a line
	bash --norc --noprofile -c '
		source "$1" || exit 9
		COMP_LINE=$2 COMP_POINT=${#2} COMP_WORDBREAKS=$WB
		_oomfix oomfix
		printf "%s\n" "${COMPREPLY[@]}"' sh "$COMP/oomfix.bash" "$1" 2>&1
}
has() { grep -qxF -- "$2" <<< "$1"; }
lacks() { ! grep -qxF -- "$2" <<< "$1"; }

check "bash: the script loads and registers _oomfix" \
	eval '[ "$(bash --norc --noprofile -c "source \"$COMP/oomfix.bash\" && complete -p oomfix")" = "complete -F _oomfix oomfix" ]'
out=$(bashc "oomfix ")
check "bash: subcommands, including those of the job database and retry" \
	eval 'has "$out" fix && has "$out" diagnose && has "$out" jobs && has "$out" queue && has "$out" restore && has "$out" retry'
check "bash: runs is offered (D20: it takes a job file too)" eval 'has "$out" runs'
out=$(bashc "oomfix runs --")
check "bash: options of runs" eval 'has "$out" --json && has "$out" --aitk'
out=$(bashc "oomfix est")
check "bash: estimate" eval '[ "$out" = estimate ]'
out=$(bashc "oomfix estimate --")
check "bash: options of estimate" eval 'has "$out" --vram && has "$out" --gpu && has "$out" --apply && lacks "$out" --diff'
out=$(bashc "oomfix estimate --vram 2")
check "bash: card sizes after --vram" eval 'has "$out" 24 && lacks "$out" --json'
out=$(bashc "oomfix fix job.yaml ")
check "bash: fix ids after fix JOB (the ones still to do)" \
	eval 'has "$out" batch_size && has "$out" next && lacks "$out" gradient_checkpointing'
out=$(bashc "oomfix fix --log train.log job.yaml ba")
check "bash: a fix id from a prefix, after options" eval '[ "$out" = batch_size ]'
out=$(bashc "oomfix fix --d")
check "bash: options of fix" eval 'has "$out" --diff && lacks "$out" --json'
out=$(bashc "oomfix diagnose tr")
check "bash: paths" eval '[ "$out" = train.log ]'
out=$(bashc "oomfix plan --log tr")
check "bash: a path after --log" eval '[ "$out" = train.log ]'
out=$(bashc "oomfix plan ai")
check "bash: aitk: job names from oomfix jobs --names" \
	eval 'has "$out" aitk:flux_portrait && has "$out" aitk:wan_clip'
# bash replaces only what follows the ':' of "aitk:fl", so the candidate must be what follows it.
out=$(bashc "oomfix fix aitk:fl")
check "bash: aitk:NAME completed after the ':'" eval '[ "$out" = flux_portrait ]'

# The real `jobs --names` over a web UI database (made as tests/aitk/uidb.py makes it) whose names
# hold an escape sequence, a newline and a TAB: the completion offers the names it can give back
# exactly (UTF-8 too) and none of those, so no control reaches the terminal or the command line.
if command -v python3 >/dev/null; then
	python3 - "$SOURCE_ROOT/tests/aitk" "$WORK/ui" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import uidb
uidb.create(sys.argv[2], "wal", [{"name": n, "status": "stopped"} for n in
            ["plain", "ünï_日本語", "esc\x1b]0;title\x07", "two\nlines", "tab\there"]])
PY
	out=$(REAL_JOBS=1 bashc "oomfix plan --aitk $WORK/ui ai")
	check "bash: aitk: names from a real database, none with a control character" \
		eval 'has "$out" aitk:plain && has "$out" "aitk:ünï_日本語" && [ "$(wc -l <<< "$out")" -eq 2 ] && ! grep -q "[[:cntrl:]]" <<< "$out"'
else
	skip "bash: aitk: names from a real database" "python3 is needed to make one"
fi

# ---- zsh: loaded by compinit from fpath, completion driven in a pseudo-terminal (zpty)
if command -v zsh >/dev/null; then
	check "zsh: the script parses" zsh -n "$COMP/_oomfix"
	cat > "$WORK/zrun.zsh" <<'Z'
# zrun.zsh FPATH_DIR WORK LINE: types LINE and Tab in an interactive zsh; prints what it showed.
zmodload zsh/zpty || exit 9
zpty -b z zsh -f -i
zpty -w z "PS1='' RPROMPT=''; fpath=($1 \$fpath); autoload -U compinit; compinit -u -d $2/zcompdump"
zpty -w z "zstyle ':completion:*' menu no; unsetopt beep; print -r -- RE''ADY"
out=
# The echo of the typed line shows RE''ADY; only the output has READY.
while zpty -r z line; do out+=$line; [[ $out == *READY* ]] && break; done
zpty -w -n z "$3"$'\t'
out=
for i in {1..30}; do
	sleep 0.1
	while zpty -r -t z line; do out+=$line; done
done
print -r -- "$out"
zpty -d z
Z
	zout=$(cd "$WORK/d" && timeout 20 zsh -f "$WORK/zrun.zsh" "$COMP" "$WORK" "oomfix fix job.yaml " 2>&1)
	check "zsh: fix ids after fix JOB (the ones still to do)" \
		eval 'grep -q batch_size <<< "$zout" && grep -q lighter_sampling <<< "$zout" && ! grep -q gradient_checkpointing <<< "$zout"'
	grep -q batch_size <<< "$zout" || echo "$zout" | sed "s/^/# /" | head -20
else
	skip "zsh: the script parses" "zsh is not installed"
	skip "zsh: fix ids after fix JOB (the ones still to do)" "zsh is not installed"
fi

# ---- fish: `complete -C` prints what fish would offer
if command -v fish >/dev/null; then
	fishc() { HOME=$WORK fish --no-config -c "source '$COMP/oomfix.fish'; complete -C '$1'" 2>&1 | cut -f1; }
	check "fish: the script loads" fish --no-config -c "source '$COMP/oomfix.fish'"
	out=$(fishc "oomfix ")
	check "fish: subcommands" eval 'has "$out" fix && has "$out" retry && has "$out" jobs'
	out=$(fishc "oomfix fix job.yaml ")
	check "fish: fix ids after fix JOB" \
		eval 'has "$out" batch_size && lacks "$out" gradient_checkpointing'
	out=$(fishc "oomfix plan aitk:f")
	check "fish: aitk: job names" eval 'has "$out" aitk:flux_portrait'
else
	for w in "loads" "subcommands" "fix ids after fix JOB" "aitk: job names"; do
		skip "fish: $w" "fish is not installed"
	done
fi

echo "1..$n"
[ $fails -eq 0 ]
