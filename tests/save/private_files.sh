#!/usr/bin/env bash
# private_files.sh — issue 34, through the commands: every file oomfix writes beside a job (the
# change journal, the backup JOB~, an --output, retry's runs folder, logs and first version, the
# emergency save) follows no link planted under its name — the file the link points at is left
# as it was, and the command says what it did not write — and a private job (0600) leaves
# nothing that group or others may read. Prints TAP. doc/SECURITY.md lists the same files.
set -u
OOMFIX=${OOMFIX:?set OOMFIX to the built binary}
TESTS_DIR=${TESTS_DIR:?set TESTS_DIR to the tests folder}
FIX=$TESTS_DIR/ui/fixtures
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export NO_COLOR=1 LC_ALL=C.UTF-8 HOME=$WORK/home XDG_STATE_HOME=$WORK/state TMPDIR=$WORK
unset LANGUAGE
# The umask most users have: the old code's 0644 files show under it.
umask 022
# Each retry try estimates the job against a card: an nvidia-smi that fails stands for none.
mkdir -p "$WORK/nosmi" "$HOME"
printf '#!/bin/sh\nexit 9\n' > "$WORK/nosmi/nvidia-smi"
chmod +x "$WORK/nosmi/nvidia-smi"
export PATH="$WORK/nosmi:$PATH"

n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; fails=$((fails + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }
has() { grep -qF -- "$2" "$1"; }
mode() { stat -c %a "$1"; }

# fresh NAME: a folder with a private copy of the job and its log, and a victim file of the
# user's that a planted link points at (its copy in victim.orig to compare with)
fresh() {
	D=$WORK/$1 E=$WORK/$1.err
	mkdir -p "$D"
	cp "$FIX/job.yaml" "$FIX/train.log" "$D/"
	chmod 600 "$D/job.yaml"
	printf 'the user'\''s own file\n' > "$WORK/$1.victim"
	chmod 644 "$WORK/$1.victim"
	cp -p "$WORK/$1.victim" "$WORK/$1.victim.orig"
}
untouched() { cmp -s "$WORK/$1.victim" "$WORK/$1.victim.orig" && [ "$(mode "$WORK/$1.victim")" = 644 ]; }
# nothing_wide DIR: no file or folder under DIR that group or others may read or write (the
# fixture log, copied by the test, aside)
nothing_wide() {
	local wide
	wide=$(find "$1" -mindepth 1 ! -name train.log -perm /077 -printf '%m %P\n')
	[ -z "$wide" ] || { echo "$wide" | sed 's/^/# wider than the job: /'; return 1; }
}
# retry_once DIR: retry the job with a run that fails with the fixture's OOM the first time and
# finishes the second (a marker file tells them apart), from DIR
retry_once() {
	(cd "$1" && "$OOMFIX" retry --max-tries 2 job.yaml -- \
		sh -c '[ -e "$1" ] && exit 0; : > "$1"; cat train.log; exit 1' sh "$1.ran" \
		> "$1.out" 2> "$E")
}
STEPS='config.process[0].train.steps'

# 1. the journal: a link in its place is refused by name, the job saved all the same
fresh jlink
ln -s "$WORK/jlink.victim" "$D/job.yaml.oomfix.md"
(cd "$D" && "$OOMFIX" set -i job.yaml "$STEPS=1000" 2> "$E")
check "journal link: set -i still succeeds (the save stands)" test $? -eq 0
check "journal link: the job is saved" grep -q '^        steps: 1000' "$D/job.yaml"
check "journal link: the file it points at is unchanged" untouched jlink
check "journal link: the link is left a link" test -L "$D/job.yaml.oomfix.md"
check "journal link: refused, naming the journal" has "$E" "job.yaml.oomfix.md: a symbolic link stands where the change journal goes"
check "journal link: the save's line says the journal was not written" has "$E" "but the change journal job.yaml.oomfix.md could not be written"

# the same through oomfix fix, with a hard link (as sure a way into another file)
fresh jhard
ln "$WORK/jhard.victim" "$D/job.yaml.oomfix.md"
(cd "$D" && "$OOMFIX" fix -i job.yaml batch_size 2> "$E")
check "journal hard link: fix -i still succeeds" test $? -eq 0
check "journal hard link: the job is saved" grep -q '^        batch_size: 1' "$D/job.yaml"
check "journal hard link: the other file is unchanged" untouched jhard
check "journal hard link: refused, naming the journal" has "$E" "job.yaml.oomfix.md: not writing the change journal"

# 2. the backup JOB~: a link in its place is replaced, never written through
fresh blink
ln -s "$WORK/blink.victim" "$D/job.yaml~"
(cd "$D" && "$OOMFIX" fix -i job.yaml batch_size 2> "$E")
check "backup link: fix -i succeeds" test $? -eq 0
check "backup link: the file it pointed at is unchanged" untouched blink
check "backup link: JOB~ is now the previous version itself" bash -c "[ ! -L '$D/job.yaml~' ] && cmp -s '$D/job.yaml~' '$FIX/job.yaml'"

# 3. --output of a private job is private; through a link the user named it follows (as cp)
fresh out
(cd "$D" && "$OOMFIX" set -o new.yaml job.yaml "$STEPS=900" 2> "$E")
check "output: written" grep -q '^        steps: 900' "$D/new.yaml"
check "output: a private job's copy is private (600)" test "$(mode "$D/new.yaml")" = 600

# 4. retry: a link planted as the runs folder is refused before anything runs
fresh rlink
mkdir "$WORK/rlink.elsewhere"
ln -s "$WORK/rlink.elsewhere" "$D/job.yaml.oomfix-runs"
retry_once "$D"
check "runs folder link: retry refuses" test $? -ne 0
check "runs folder link: nothing written into the folder it points at" test -z "$(ls -A "$WORK/rlink.elsewhere")"
check "runs folder link: nothing ran" test ! -e "$D.ran"
check "runs folder link: the refusal names it" has "$E" "job.yaml.oomfix-runs: not a folder of oomfix's own"

# the job's first version (0.yaml): a dangling link planted there is replaced, its target never
# created
fresh rfirst
mkdir "$D/job.yaml.oomfix-runs"
ln -s "$WORK/rfirst.created" "$D/job.yaml.oomfix-runs/0.yaml"
retry_once "$D"
check "first version link: retry fits on the second try" test $? -eq 0
check "first version link: the link's target is not created" test ! -e "$WORK/rfirst.created"
check "first version link: 0.yaml is the job as it was" bash -c "[ ! -L '$D/job.yaml.oomfix-runs/0.yaml' ] && cmp -s '$D/job.yaml.oomfix-runs/0.yaml' '$FIX/job.yaml'"

# 5. a private job leaves nothing readable by others: set, fix, retry (journal, backup, logs,
# first version, runs folder), then the emergency save of the UI on SIGTERM
fresh private
(cd "$D" && "$OOMFIX" set -i job.yaml "$STEPS=1500" 2> /dev/null)
check "private: the journal is 600" test "$(mode "$D/job.yaml.oomfix.md")" = 600
check "private: the backup is 600" test "$(mode "$D/job.yaml~")" = 600
retry_once "$D"
check "private: retry fits on the second try" test $? -eq 0
check "private: the runs folder is 700" test "$(mode "$D/job.yaml.oomfix-runs")" = 700
check "private: the runs' logs are 600" test "$(mode "$D/job.yaml.oomfix-runs/1.log")" = 600
check "private: the first version is 600" test "$(mode "$D/job.yaml.oomfix-runs/0.yaml")" = 600
check "private: the retry's journal entry is in the private journal" grep -q 'oomfix retry' "$D/job.yaml.oomfix.md"

check "private: no file or folder beside the job is wider than 600/700" nothing_wide "$D"

# The UI, headless: apply a fix, dump the screen (the sign it is done), then SIGTERM while it
# waits for the next line of its script (a FIFO the test holds open).
fresh ui
mkfifo "$WORK/script"
(cd "$D" && exec "$OOMFIX" job.yaml train.log --script "$WORK/script" 2> /dev/null) &
ui=$!
# read-write: opening a FIFO so never blocks, even if the UI is already gone
exec 7<> "$WORK/script"
printf 'a\ndump %s\n' "$WORK/ready.txt" >&7
for _ in $(seq 100); do [ -s "$WORK/ready.txt" ] && break; sleep 0.1; done
kill -TERM "$ui"
wait "$ui"
exec 7>&-
check "private: SIGTERM leaves the emergency save" test -f "$D/job.yaml.oomfix-save"
check "private: the emergency save is 600" test "$(mode "$D/job.yaml.oomfix-save")" = 600
check "private: nothing beside the job in the UI is wider than 600" nothing_wide "$D"

# 6. an older journal wider than its job (they were all 0644 once) is narrowed, never widened
fresh older
printf '# Change journal for job.yaml\n' > "$D/job.yaml.oomfix.md"
chmod 644 "$D/job.yaml.oomfix.md"
(cd "$D" && "$OOMFIX" set -i job.yaml "$STEPS=1200" 2> /dev/null)
check "older journal: narrowed to the job's 600" test "$(mode "$D/job.yaml.oomfix.md")" = 600
chmod 640 "$D/job.yaml"
(cd "$D" && "$OOMFIX" set -i job.yaml "$STEPS=1100" 2> /dev/null)
check "older journal: not widened again for a 640 job" test "$(mode "$D/job.yaml.oomfix.md")" = 600
check "older journal: both entries appended" test "$(grep -c '^## ' "$D/job.yaml.oomfix.md")" -eq 2

echo "1..$n"
[ "$fails" -eq 0 ]
