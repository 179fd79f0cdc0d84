#!/bin/bash
# The UI following a run with nvidia-smi beside it (SPEC §12.2), in a real terminal: the log grows
# while the UI is open, a fake nvidia-smi lists the writer (it has the log open, as the trainer
# has under the web UI's worker) and a foreign process on the same card; the writer moves to its
# next phase only after the UI has asked three more times. When the run ends with an OOM in
# sampling, the UI keeps each phase's peak of the trainer alone (a lower bound for training, which
# did not finish) and the OOM message's lower bound for sampling. Skipped without tmux.
set -u
OOMFIX=${OOMFIX:?set OOMFIX to the built binary}
HERE=$(cd "$(dirname "$0")" && pwd)
TMUX_TEST=gpuwatch
. "$HERE/../tmux-lib.sh"
command -v jq > /dev/null || { echo "1..0 # SKIP jq is needed"; exit 0; }

echo "1..6"
cp "$HERE/../retry/jobs/conservative.yaml" "$WORK/job.yaml"
mkdir -p "$WORK/bin"
cat > "$WORK/bin/nvidia-smi" << SH
#!/bin/sh
case "\$1" in
--query-gpu=*) echo "0, GPU-t, NVIDIA GeForce RTX 4090, 24564, 1000" ;;
--query-compute-apps=*)
	echo "GPU-t, 1, 6144"
	[ -f "$WORK/writer.pid" ] && [ -f "$WORK/mem" ] && echo "GPU-t, \$(cat "$WORK/writer.pid"), \$(cat "$WORK/mem")"
	echo x >> "$WORK/polls" ;;
*) exit 9 ;;
esac
SH
chmod +x "$WORK/bin/nvidia-smi"
polls() { if [ -f "$WORK/polls" ]; then wc -l < "$WORK/polls"; else echo 0; fi; }
three_more() {
	local want=$(($(polls) + 3)) i=0
	while [ "$(polls)" -lt "$want" ]; do
		i=$((i + 1))
		[ $i -gt 600 ] && return 1
		sleep 0.1
	done
}
printf 'Running 1 job\nLoading zimage model\nLoading transformer\n' > "$WORK/log.txt"
export OOMFIX_MEASUREMENTS="$WORK/m.db"
T new-session -d -s g -x 100 -y 30 -c "$WORK" \
	"exec env -u NO_COLOR PATH='$WORK/bin:$PATH' OOMFIX_MEASUREMENTS='$WORK/m.db' LC_ALL=C.UTF-8 TERM=tmux-256color HOME='$WORK' '$OOMFIX' job.yaml log.txt"
check "the UI is open on the log" wait_for g "No GPU out-of-memory"

(
	exec >> "$WORK/log.txt"
	sh -c 'echo $PPID' > "$WORK/writer.pid"
	printf 'Loading VAE\n'
	echo 5600 > "$WORK/mem"
	three_more || exit 1
	printf 'zimage_safe:   0%%|          | 0/40 [00:00<?, ?it/s]'
	for s in 1 2 3 4 5 6 7 8 9 10; do
		printf '\rzimage_safe:  %d%%|#         | %d/40 [00:02<01:18, 1.62s/it, lr: 1.0e-04 loss: 3.370e-01]' $((s * 100 / 40)) $s
	done
	echo 9100 > "$WORK/mem"
	three_more || exit 1
	printf '\nGenerating Samples:   0%%|          | 0/1 [00:00<?, ?it/s]'
	echo 11800 > "$WORK/mem"
	three_more || exit 1
	printf '\nError running job: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.99 GiB of which 10.00 MiB is free. Including non-PyTorch memory, this process has 17.50 GiB memory in use. Of the allocated memory 16.90 GiB is allocated by PyTorch, and 300.00 MiB is reserved by PyTorch but unallocated.\n'
	printf '\n========================================\nResult:\n - 0 completed jobs\n - 1 failure\n========================================\n'
	printf 'Traceback (most recent call last):\n  File "run.py", line 120, in main\n    job.run()\n'
	printf 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n'
) &
writer=$!
wait $writer
check "the writer went through its phases while the UI asked nvidia-smi" test $? = 0
check "the verdict came with no key pressed" wait_for g "ran out of GPU memory"
# the run has ended: its peaks are kept; the fit line reads them back
rows() { OOMFIX_MEASUREMENTS="$WORK/m.db" "$OOMFIX" measurements --json 2> /dev/null; }
kept() { # PHASE KIND MiB
	local i
	for i in $(seq 1 100); do
		[ "$(rows | jq -r --arg p "$1" '[.measurements[] | select(.phase == $p)][0] | "\(.kind) \(.bytes / 1048576 | floor)"')" = "$2 $3" ] && return 0
		sleep 0.1
	done
	rows | sed 's/^/# /'
	return 1
}
check "model load: a peak of the trainer alone" kept model_load peak 5600
check "training, which did not finish: at least what it held" kept training at_least 9100
check "sampling: the OOM message's lower bound, not the poll's (17.5 + 2 GiB)" kept sampling at_least 19968
T send-keys -t g q
exit $((fails > 0))
