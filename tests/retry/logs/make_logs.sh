#!/bin/sh
# Writes the canned run logs that test_retry_loop.c's fake runner plays back, from the stand-in
# trainer (tests/standin/aitk_standin.py) and the jobs in ../jobs. Run it from this folder after
# changing the stand-in; the logs are checked in beside it.
set -eu
S=../../standin/aitk_standin.py
J=../jobs
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
run() { # out job args...: the stand-in's output (it may fail: that is the point)
	out=$1 job=$2
	shift 2
	python3 "$S" "$@" "$job" >"$out" 2>&1 || true
}
run flux_load.log $J/flux_load.yaml --vram 20
sed 's/^\(      model:\)$/\1\n        low_vram: true/' $J/flux_load.yaml >"$T/flux_low.yaml"
run flux_fits.log "$T/flux_low.yaml" --vram 20
run safe_fits.log $J/conservative.yaml --vram 24
run safe_not_oom.log $J/conservative.yaml --fail python
run safe_worker.log $J/conservative.yaml --vram 16 --other-process 10
run sdxl_load.log $J/sdxl_big_previews.yaml --vram 6
run bucket_skips.log $J/zimage_largest_bucket.yaml --vram 11.5 --bucket-steps 3
sed 's/sample_every: 20/sample_every: 500/' $J/conservative.yaml >"$T/rare.yaml"
run safe_no_round.log "$T/rare.yaml" --vram 24
sed 's/^\(      train:\)$/\1\n        disable_sampling: true/' $J/conservative.yaml >"$T/off.yaml"
run safe_sampling_off.log "$T/off.yaml" --vram 24
# bucket_oom_short2.log and bucket_oom_short6.log are bucket_skips.log's start with a training
# OOM at step 31 that prints PyTorch's numbers (as older trainers and other wrappers do): held
# 79.12 GiB of a 79.25 GiB card, asking 2 or 6 GiB more. Written by hand, not by the stand-in.
