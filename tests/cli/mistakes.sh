#!/bin/bash
# The command line's answers to a user's mistakes, printed as TAP: `set` refuses a panel field's
# value the trainer would refuse (exit 65, the rule named, the file untouched) unless --force;
# swapped or mistyped arguments get a suggestion; a binary file given as a log is refused.
set -u
. "$(dirname "$0")/lib.sh"

cp "$FIX/job.yaml" "$FIX/train.log" "$WORK/"
cd "$WORK" || exit 1
P='config.process[0]'

# set: the trainer's rules
check "set batch_size=-3 exits 65" st 65 set job.yaml "$P.train.batch_size=-3"
check "set batch_size=-3 names the rule" has err "Batch Size must be a whole number of at least 1"
check "set batch_size=abc exits 65" st 65 set job.yaml "$P.train.batch_size=abc"
check "set batch_size=0 exits 65" st 65 set job.yaml "$P.train.batch_size=0"
check "set steps=-5 exits 65" st 65 set job.yaml "$P.train.steps=-5"
check "set lr=-1 exits 65" st 65 set job.yaml "$P.train.lr=-1"
check "set sample height -1024 exits 65" st 65 set job.yaml "$P.sample.height=-1024"
check "set a resolution off the grid exits 65" st 65 set job.yaml "$P.datasets[0].resolution=[512, 700]"
check "set an unknown optimizer exits 65" st 65 set job.yaml "$P.train.optimizer=adamw9bit"
check "set an unknown arch exits 65" st 65 set job.yaml "$P.model.arch=fluxx"
check "set -i with a refused value leaves the file" bash -c "'$OOMFIX' set -i job.yaml '$P.train.batch_size=-3' 2>/dev/null; cmp -s job.yaml '$FIX/job.yaml'"
check "set batch_size=4 is fine" st 0 set job.yaml "$P.train.batch_size=4"
check "set a quoted optimizer is fine" st 0 set job.yaml "$P.train.optimizer=\"adamw8bit\""
check "set a known arch with a tag is fine" st 0 set job.yaml "$P.model.arch=wan21:14b"
check "set --force writes a refused value" st 0 set --force job.yaml "$P.train.batch_size=-3"
check "set --force: the value is written" has out "batch_size: -3"
check "set a key outside the panels is not checked" st 0 set job.yaml "$P.train.noise_scheduler=whatever"
# friction (review 4): options after JOB where they cannot be mistaken for an assignment
cp job.yaml late.yaml
check "set JOB PATH=VALUE -i: the option after JOB is taken" st 0 set late.yaml "$P.train.batch_size=1" -i
check "set JOB PATH=VALUE -i: ... and the file is saved in place" bash -c "'$OOMFIX' get late.yaml '$P.train.batch_size' | grep -qx 1"

# arguments: a log and a job given the other way round, a mistyped subcommand
check "swapped: a log then a job exits 64" st 64 train.log job.yaml
check "swapped: the order that works is suggested" has err "oomfix job.yaml train.log"
check "typo: diagnos exits 64" st 64 diagnos train.log
check "typo: the nearest subcommand is suggested" has err "did you mean 'diagnose'?"
check "typo: plna suggests plan" bash -c "'$OOMFIX' plna job.yaml 2>&1 | grep -qF \"did you mean 'plan'?\""
check "typo: a file named like a typo is still opened as a file" bash -c "cp train.log diagnos; ! TERM=dumb '$OOMFIX' diagnos 2>&1 | grep -q 'did you mean'"
# E21 (review 4): a bare word that is neither a command nor a file is said to be so, not opened
# as a log that cannot be read
check "E21: oomfix diff exits 64" st 64 diff
check "E21: ... and says it is neither a command nor a file" has err "'diff' is neither a command nor a file (oomfix --help lists the commands)"
check "E21: ... not that a log cannot be opened" bash -c "! '$OOMFIX' show 2>&1 | grep -q 'cannot open'"
check "E21: a bare word that names a file is still opened" bash -c "cp train.log trainlog; ! TERM=dumb '$OOMFIX' trainlog 2>&1 | grep -q 'neither a command'"
check "E21: --help puts the UI's options on its usage line" bash -c "'$OOMFIX' --help | grep -qF 'oomfix [--vram GB] [--theme NAME] [--no-color] [JOB.yaml] [LOG]'"
check "E21: --help lists estimate with the commands" bash -c "'$OOMFIX' --help | sed '/^Before the run:/,\$d' | grep -q '^  oomfix estimate '"

# a binary file given as the log is refused (the check is the diagnosis's own)
head -c 200000 "$OOMFIX" > binary.log
if "$OOMFIX" diagnose binary.log > /dev/null 2>&1; then
	n=$((n + 1)); echo "ok $n - binary: diagnose refuses a binary log # SKIP the diagnosis does not refuse binary logs in this build"
else
	check "binary: diagnose exits 65" st 65 diagnose binary.log
fi

# the diagnosis report wraps a long evidence line instead of cutting it with ...
check "report: exit 0" st 0 diagnose "$TESTS_DIR/diag/cases-archs-captures/missing-control-image/train.log"
check "report: the whole missing path is there" bash -c "tr -d '\n' < '$WORK/out' | tr -s ' ' | grep -qF \"'/app/ai-toolkit/datasets/kontext_missing_ctrl/control/img_0042.png'\""
check "report: no evidence line is cut with ..." bash -c "! grep -q '\.\.\.\$' '$WORK/out'"

# the terminal UI's own arguments (getopt_long, as every subcommand): a mistake is a usage error
# (64) naming what was wrong, with the usage line, before any terminal is touched
check "ui: an unknown option exits 64" st 64 --bogus job.yaml
check "ui: ... and names it" has err "unknown option: --bogus"
check "ui: ... with the usage line" has err "usage: oomfix [JOB.yaml] [LOG]"
check "ui: an option without its value exits 64" st 64 job.yaml --theme
check "ui: ... and says so" has err "option needs a value: --theme"
check "ui: a third file exits 64" st 64 job.yaml train.log other.log
check "ui: ... and names it" has err "too many files: other.log"
check "ui: --size=NxM wants two numbers" st 64 --size=80 job.yaml
check "ui: a bad --vram is refused with the estimate's reason" st 64 --vram=lots job.yaml
check "ui: the log before the job is caught, and the right order shown" st 64 train.log job.yaml
check "ui: ... the order that works" has err "oomfix job.yaml train.log"

echo "1..$n"
[ "$fails" -eq 0 ]
