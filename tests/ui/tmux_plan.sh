#!/bin/bash
# End-to-end in a real terminal (tmux): one change, then a run, and the Plan as a list.
# 1. After a, the diagnosis says it is out of date; a again asks first (n changes nothing, y
#    applies); once the run writes a newer log, it is read again without a key press and a
#    applies the next change without asking.
# 2. In the Plan, j/k select a step and Enter applies it; a second Enter, before a run, asks.
# Skipped without tmux.
set -u
OOMFIX=${OOMFIX:?set OOMFIX to the built binary}
HERE=$(cd "$(dirname "$0")" && pwd)
FIX=$HERE/fixtures
TMUX_TEST=plan
. "$HERE/../tmux-lib.sh"
absent() { ! screen "$1" | grep -qF -- "$2"; }
start() { # SESSION DIR ARGS...
	local s=$1 d=$2
	shift 2
	T new-session -d -s "$s" -x 80 -y 24 -c "$WORK/$d" \
		"exec env -u NO_COLOR LC_ALL=C.UTF-8 TERM=tmux-256color HOME='$WORK' '$OOMFIX' $*"
}
fresh() { rm -rf "$WORK/$1"; mkdir -p "$WORK/$1"; cp "$FIX/job.yaml" "$FIX/train.log" "$WORK/$1/"; }
value() { "$OOMFIX" get "$WORK/$1/job.yaml" "config.process[0].$2"; }

# ---- 1. one change, then a run ---------------------------------------------------------------
fresh once
start once once job.yaml train.log
wait_for once "First change: Batch size 1" > /dev/null
T send-keys -t once a
# a says the one decision (plan_decide) in its words, then applies it
check "a: the first change is applied" wait_for once "Next change: batch_size — Batch size 1, same effective batch. Applied."
check "a: the diagnosis says it is out of date" wait_for once "Out of date: a change was applied"
check "a: no first change is offered from the old log" absent once "First change:"
T send-keys -t once a
check "a again: asks first" wait_for once "The last change has not been tried yet"
T send-keys -t once n
check "n: nothing changed" wait_for once "Nothing changed. Save (s), run the job"
T send-keys -t once s
wait_for once "Write these changes?" > /dev/null
T send-keys -t once y
check "s y: saved" wait_for once "Saved job.yaml"
check "saved: batch size 1" test "$(value once train.batch_size)" = 1
check "saved: sampling untouched" test "$(value once sample.sample_every)" = 250
# The run: the trainer rewrites the log; this one dies while sampling at step 250 (C).
{
	sed -n '1,/^Running  1 process$/p' "$FIX/train.log"
	printf 'Generating baseline samples before training\n'
	printf '\rmug_flux_lora_v1:   0%%|          | 0/2000 [00:00<?, ?it/s]'
	printf '\rmug_flux_lora_v1:  12%%|#         | 250/2000 [10:00<1:10:00,  2.40s/it, lr: 1.0e-04 loss: 3.1e-01]\n'
	printf '\rGenerating Images:   0%%|          | 0/4 [00:00<?, ?it/s]\n'
	printf 'Error running job: CUDA out of memory. Tried to allocate 3.16 GiB. GPU 0 has a total capacity of 23.55 GiB of which 1.20 GiB is free. Process 7001 has 22.35 GiB memory in use. Of the allocated memory 21.80 GiB is allocated by PyTorch, and 251.38 MiB is reserved by PyTorch but unallocated.\n'
	printf 'Traceback (most recent call last):\n  File "/app/ai-toolkit/jobs/process/BaseSDTrainProcess.py", line 2701, in run\n    self.sample(self.step_num)\n  File "/app/ai-toolkit/toolkit/models/base_model.py", line 702, in generate_images\n    img = self.generate_single_image(\n'
	printf 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.16 GiB.\n'
} > "$WORK/once/new.log"
mv "$WORK/once/new.log" "$WORK/once/train.log"
check "a newer log is read again without a key press" wait_for once "while generating samples at step 250"
check "the new verdict gives the next change" wait_for once "First change: Lighter preview samples"
check "no longer out of date" absent once "Out of date"
T send-keys -t once a
check "a after the run: applies without asking" wait_for once "Next change: lighter_sampling — Lighter preview samples. Applied."
T send-keys -t once q
wait_for once "Quit and lose" > /dev/null
T send-keys -t once y

# ---- 1b. a change saved earlier (the command line, another session) and not tried yet --------
fresh saved
touch -d '1 hour ago' "$WORK/saved/train.log"
"$OOMFIX" fix -i --log "$WORK/saved/train.log" "$WORK/saved/job.yaml" next 2> /dev/null
start saved saved job.yaml train.log
check "reopened after a saved change: the diagnosis says it is out of date" \
	wait_for saved "Out of date: a change was applied"
T send-keys -t saved a
check "reopened after a saved change: a asks first" wait_for saved "The last change has not been tried yet"
T send-keys -t saved n
check "reopened after a saved change: n changes nothing" \
	wait_for saved "Nothing changed. Save (s), run the job"
T send-keys -t saved q
touch "$WORK/saved/train.log" # the run wrote its log after the change
start saved2 saved job.yaml train.log
check "a newer log after the saved change: a first change is offered again" \
	wait_for saved2 "First change:"
T send-keys -t saved2 q

# ---- 2. the Plan is a list -----------------------------------------------------------------
fresh plan
start plan plan job.yaml train.log
wait_for plan "First change: Batch size 1" > /dev/null
T send-keys -t plan Tab
wait_for plan "Rollback order" > /dev/null
check "Plan: the marked step is selected" wait_for plan "> 2. [ ] Batch size 1"
T send-keys -t plan j
check "j selects the next step" wait_for plan "> 3. [ ] Drop the largest resolution bucket"
T send-keys -t plan j k
check "k and j move back and forth" wait_for plan "> 3. [ ] Drop the largest"
T send-keys -t plan Enter
check "Enter applies the selected step" wait_for plan "Applied: Drop the largest resolution bucket"
check "the Plan says the diagnosis is out of date" wait_for plan "The last change has not been tried yet"
T send-keys -t plan j Enter
check "a second Enter before a run asks first" wait_for plan "The last change has not been tried yet"
T send-keys -t plan y
check "y applies the selected step" wait_for plan "Applied: Lighter preview samples"
check "  and says it does not act on the failing phase" wait_for plan "does not act on the phase"
T send-keys -t plan d
check "the diff holds both changes" bash -c "tmux -L '$SOCK' capture-pane -p -t plan | grep -q 'resolution' && tmux -L '$SOCK' capture-pane -p -t plan | grep -q 'sample_every'"

echo "1..$n"
exit $((fails > 0))
