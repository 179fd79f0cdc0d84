#!/bin/bash
# Following a growing log in a real terminal (tmux): a writer appends to the log while the UI is
# open; with no key pressed the Log view follows the new lines, the header shows the phase,
# step/total and speed of the last bar, the verdict goes from none to the OOM and the bell rings
# once (and nothing else is sent for it); F stops following; a log moved aside and written
# again is read from the start. Skipped without tmux.
set -u
OOMFIX=${OOMFIX:?set OOMFIX to the built binary}
HERE=$(cd "$(dirname "$0")" && pwd)
FIX=$HERE/fixtures
TMUX_TEST=follow
. "$HERE/../tmux-lib.sh"
NAME=mug_flux_lora_v1
frame() { printf '\r%s:  %d%%|#   | %d/200 [00:%02d<09:00,  2.50s/it, lr: 1e-04 loss: 0.1]' "$NAME" $(($1 / 2)) "$1" $(($1 % 60)); }

echo "1..14"
cp "$FIX/job.yaml" "$WORK/job.yaml"
{
	printf 'Running 1 job\n# Running job: %s\nLoading Flux model\nCaching latents for /data\n' "$NAME"
	for i in 1 2 3; do frame $i; done
} > "$WORK/log.txt"
T new-session -d -s f -x 80 -y 24 -c "$WORK" \
	"exec env -u NO_COLOR LC_ALL=C.UTF-8 TERM=tmux-256color HOME='$WORK' '$OOMFIX' job.yaml log.txt"
check "before the OOM: no OOM in the verdict" wait_for f "No GPU out-of-memory"
T pipe-pane -o -t f "cat >> '$WORK/bytes'"
sleep 0.3

# the writer: a few more frames, log lines, then the OOM, the traceback and the summary
(
	for i in $(seq 4 40); do
		frame $i >> "$WORK/log.txt"
		[ $((i % 10)) = 0 ] && printf '\nstep %d: saved a sample\n' $i >> "$WORK/log.txt"
		sleep 0.05
	done
) &
writer=$!
check "the header says it follows, with the phase" wait_for f "[following]  training"
check "the header shows step/total and the speed of the last bar" wait_for f "/200  2.50s/it"
wait $writer
check "the new lines are shown as they come (the last bar line)" wait_for f "40/200"
{
	printf '\nError running job: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.55 GiB of which 1.10 GiB is free.\n'
	printf '\n========================================\nResult:\n - 0 completed jobs\n - 1 failure\n========================================\n'
	printf 'Traceback (most recent call last):\n  File "run.py", line 120, in main\n    job.run()\n'
	printf 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n'
} >> "$WORK/log.txt"
check "the verdict changes to the OOM with no key pressed" wait_for f "It ran out of GPU memory at step 41"
check "the Log view followed to the end of the log" wait_for f "torch.OutOfMemoryError"
sleep 0.6
T pipe-pane -t f
bells=$(tr -cd '\007' < "$WORK/bytes" | wc -c)
check "the bell rang once (got $bells)" test "$bells" = 1
check "no other control sequence than the screen's own (no OSC)" bash -c "! grep -q \$'\\e]' '$WORK/bytes'"

T send-keys -t f F
check "F stops following" wait_for f "Not following the log"
T send-keys -t f F
# scrolled back to the top, the header says it is not following, and F goes back to the end
T send-keys -t f g
check "scrolled to the top: the header says [not following]" wait_for f "[not following]"
echo "one more line while the user reads the top" >> "$WORK/log.txt"
sleep 0.6
check "scrolled to the top: new lines do not pull the view down" wait_for f "[not following]"
T send-keys -t f F
check "F when scrolled away follows again" wait_for f "Following the log as it grows"
check "F when scrolled away: the header says [following]" wait_for f "[following]"

# the web UI moves log.txt aside when the job is restarted, and writes a new one
mv "$WORK/log.txt" "$WORK/log_1.txt"
sleep 0.4
printf 'Running 1 job\n# Running job: %s\nLoading Flux model\n' "$NAME" > "$WORK/log.txt"
check "a log moved aside and written again is read from the start" wait_for f "Running, no OOM so far."
exit $((fails > 0))
