#!/usr/bin/env bash
# `oomfix estimate` from the outside, with a fake nvidia-smi on PATH: one card, two cards,
# another process holding 13 GiB, nvidia-smi missing, failing, or printing garbage; --vram;
# the card from a log's OOM message; --apply with -o and -i (backup and journal); --json.
# Prints TAP.
set -u

OOMFIX=${OOMFIX:?OOMFIX must point at the built binary}
export OOMFIX_MEASUREMENTS=off # the user's store stays out; the measurement checks name their own
TESTS_DIR=${TESTS_DIR:?}
EX="$TESTS_DIR/estimate/examples"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
check() { if eval "$2"; then ok "$1"; else not_ok "$1"; sed 's/^/# /' "$tmp/out" "$tmp/err" 2>/dev/null | head -40; fi; }

# A PATH holding only the fake nvidia-smi (when given) and the tools the shell needs.
mkdir -p "$tmp/bin" "$tmp/nosmi"
for t in sh bash cat printf; do
	p=$(command -v "$t") && ln -sf "$p" "$tmp/bin/$t" && ln -sf "$p" "$tmp/nosmi/$t"
done
fake() { # $1: the --query-gpu answer, $2: the --query-compute-apps answer, $3: exit status
	printf '%s' "$1" >"$tmp/gpus.txt"
	printf '%s' "$2" >"$tmp/apps.txt"
	cat >"$tmp/bin/nvidia-smi" <<SH
#!/bin/sh
case "\$1" in
--query-gpu=*) cat "$tmp/gpus.txt" ;;
--query-compute-apps=*) cat "$tmp/apps.txt" ;;
*) exit 9 ;;
esac
exit ${3:-0}
SH
	chmod +x "$tmp/bin/nvidia-smi"
}
run() { # runs oomfix with the given PATH dir; stdout in out, stderr in err, status in rc
	local dir=$1
	shift
	PATH="$dir" "$OOMFIX" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

cat >"$tmp/flux4.yaml" <<'YAML'
job: extension
config:
  name: flux4
  process:
    - type: sd_trainer
      network:
        type: lora
        linear: 16
      datasets:
        - folder_path: /data
          cache_latents_to_disk: true
          resolution: [512, 768, 1024]
      train:
        batch_size: 4
        steps: 2000
        optimizer: adamw8bit
      model:
        name_or_path: black-forest-labs/FLUX.1-dev
        arch: flux
        quantize: true
      sample:
        width: 1024
        height: 1024
        sample_every: 250
YAML
flux="$EX/train_lora_flux_24gb.yaml"

# One card: a 4090 (24564 MiB), nothing else on it.
fake "0, GPU-aaa, NVIDIA GeForce RTX 4090, 24564, 0
" "" 0
run "$tmp/bin" estimate "$flux"
check "one card: read from nvidia-smi" '[ $rc -eq 0 ] && grep -q "GPU 0 NVIDIA GeForce RTX 4090 (nvidia-smi)" "$tmp/out" && grep -q "Verdict: fits" "$tmp/out"'
check "one card: no other process named" '! grep -q "Other processes" "$tmp/out"'

# Two cards: --gpu 1 picks the second.
fake "0, GPU-aaa, NVIDIA GeForce RTX 3060, 12288, 0
1, GPU-bbb, NVIDIA RTX A6000, 49140, 0
" "" 0
run "$tmp/bin" estimate "$flux"
check "two cards: card 0 by default (12 GB: will not fit)" '[ $rc -eq 0 ] && grep -q "GPU 0 NVIDIA GeForce RTX 3060" "$tmp/out" && grep -q "will not fit" "$tmp/out"'
run "$tmp/bin" estimate --gpu 1 --json "$flux"
check "two cards: --gpu 1 is the A6000" '[ $rc -eq 0 ] && grep -q "\"card\": 51527024640" "$tmp/out" && grep -q "\"verdict\": \"fits\"" "$tmp/out"'
run "$tmp/bin" estimate --gpu 5 "$flux"
check "two cards: --gpu 5 is refused (64)" '[ $rc -eq 64 ] && grep -q "no card 5" "$tmp/err"'

# Another process holds 13 GiB on the card: said before the run.
fake "0, GPU-aaa, NVIDIA RTX A6000, 49140, 13312
" "GPU-aaa, 4242, 13312
" 0
run "$tmp/bin" estimate "$flux"
check "other process: named with its size" '[ $rc -eq 0 ] && grep -q "Other processes hold 13.0 GiB" "$tmp/out" && grep -q "pid 4242 (13.0 GiB)" "$tmp/out"'
fake "0, GPU-aaa, NVIDIA GeForce RTX 4090, 24564, 13312
" "GPU-aaa, 4242, 13312
" 0
run "$tmp/bin" estimate "$flux"
check "other process: beside it the job will not fit" '[ $rc -eq 0 ] && grep -q "Verdict: fits" "$tmp/out" && grep -q "Beside them the job will not fit" "$tmp/out"'
run "$tmp/bin" estimate --json "$flux"
check "other process: in the JSON" 'grep -q "\"pid\": 4242" "$tmp/out" && grep -q "\"verdict_now\": \"no\"" "$tmp/out"'

# A web UI job: its gpu_ids picks the card (here 1), and --apply -i saves it in the database.
fake "0, GPU-aaa, NVIDIA GeForce RTX 3060, 12288, 0
1, GPU-bbb, NVIDIA GeForce RTX 4090, 24564, 0
" "" 0
python3 - "$tmp/ai" "$TESTS_DIR/aitk" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
import uidb
uidb.create(sys.argv[1], "wal", [{"name": "flux mug", "gpu_ids": "1"}])
PY
run "$tmp/bin" estimate --aitk "$tmp/ai" "aitk:flux mug"
check "web UI job: its gpu_ids (1) picks the card" '[ $rc -eq 0 ] && grep -q "GPU 1 NVIDIA GeForce RTX 4090" "$tmp/out" && grep -Eq "(will not fit|tight) at training" "$tmp/out"'
run "$tmp/bin" estimate --aitk "$tmp/ai" --apply -i "aitk:flux mug"
run "$tmp/bin" estimate --aitk "$tmp/ai" "aitk:flux mug"
check "web UI job: --apply -i saved the path in the database" 'grep -q "Verdict: fits" "$tmp/out"'

# nvidia-smi missing: no card known, exit 64 naming --vram; --vram works.
run "$tmp/nosmi" estimate "$flux"
check "missing: exit 64 naming --vram" '[ $rc -eq 64 ] && grep -q -- "--vram" "$tmp/err" && [ ! -s "$tmp/out" ]'
run "$tmp/nosmi" estimate --vram 24 "$flux"
check "missing: --vram 24 is 23.99 GiB, said so" '[ $rc -eq 0 ] && grep -q "Card: 24.0 GiB (--vram 24: what PyTorch reports for a card sold as 24 GB)" "$tmp/out"'

# nvidia-smi failing (no driver): said, then 64.
fake "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.
" "" 9
run "$tmp/bin" estimate "$flux"
check "failing: says so and exits 64" '[ $rc -eq 64 ] && grep -q "nvidia-smi failed" "$tmp/err" && grep -q -- "--vram" "$tmp/err"'

# Garbage output with status 0.
fake "$(printf 'lorem ipsum\n\001\002,,,\n')" "garbage" 0
run "$tmp/bin" estimate "$flux"
check "garbage: cannot read it, exits 64" '[ $rc -eq 64 ] && grep -q "cannot read" "$tmp/err"'

# The card from the capacity in the log's last OOM message.
cat >"$tmp/log.txt" <<'LOG'
Loading checkpoint shards: 100%
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.99 GiB of which 1.20 GiB is free. Of the allocated memory 20.10 GiB is allocated by PyTorch, and 1.30 GiB is reserved by PyTorch but unallocated.
LOG
run "$tmp/nosmi" estimate --log "$tmp/log.txt" "$flux"
check "log: the capacity of its OOM message" '[ $rc -eq 0 ] && grep -q "the capacity in the last OOM message" "$tmp/out" && grep -q "Card: 24.0 GiB" "$tmp/out"'

# plan and diagnose --job carry the estimate, and put what the failed run held beside it.
run "$tmp/nosmi" plan --json --log "$tmp/log.txt" "$flux"
check "plan --json: the estimate, its verdict on the OOM card and the measurement" 'python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))[\"estimate\"]
assert d[\"known\"] and abs(d[\"card\"] - 23.99 * 2**30) < 2**20 and d[\"verdict\"] == \"fits\", d
m = d[\"measured\"]  # the log quantizes: a load; held 21.40 GiB + 2.00 requested
assert m[\"phase\"] == \"model_load\" and abs(m[\"at_least\"] - 23.40 * 2**30) < 2**24, d
" "$tmp/out"'
run "$tmp/nosmi" diagnose --job "$flux" "$tmp/log.txt"
check "diagnose --job: the estimate beside the verdict" '[ $rc -eq 0 ] && grep -q "Estimate before the run (not a measurement)" "$tmp/out" && grep -q "Measured when it failed: at least" "$tmp/out"'
run "$tmp/nosmi" diagnose "$tmp/log.txt"
check "diagnose without a job: no estimate" '! grep -q "Estimate before" "$tmp/out"'

# Bad input.
run "$tmp/nosmi" estimate --vram big "$flux"
check "--vram big: usage error" '[ $rc -eq 64 ] && grep -q "big" "$tmp/err"'
run "$tmp/nosmi" estimate --vram 24 "$tmp/nope.yaml"
check "a missing job: 66" '[ $rc -eq 66 ]'
printf 'job: extension\nconfig: [\n' >"$tmp/bad.yaml"
run "$tmp/nosmi" estimate --vram 24 "$tmp/bad.yaml"
check "an invalid job: 65 with a place" '[ $rc -eq 65 ] && grep -q "bad.yaml:" "$tmp/err"'

# An arch without a row gets no number.
sed 's/arch: flux/arch: omnigen2/' "$tmp/flux4.yaml" >"$tmp/omni.yaml"
run "$tmp/nosmi" estimate --vram 24 "$tmp/omni.yaml"
check "unknown arch: no number, said plainly" '[ $rc -eq 0 ] && grep -q "No estimate" "$tmp/out" && ! grep -q GiB "$tmp/out"'

# FLUX at batch 4 on 24 GB: the path; --apply -o writes it, -i saves with backup and journal.
cp "$tmp/flux4.yaml" "$tmp/orig.yaml"
run "$tmp/nosmi" estimate --vram 24 "$tmp/flux4.yaml"
check "batch 4: does not fit (its band is over the card or straddles it), batch_size first" '[ $rc -eq 0 ] && grep -Eq "(will not fit|tight) at training" "$tmp/out" && grep -q "1. batch_size" "$tmp/out"'
run "$tmp/nosmi" estimate --vram 24 --json "$tmp/flux4.yaml"
check "batch 4: JSON change and path" 'python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d[\"verdict\"] in (\"no\", \"tight\") and d[\"verdict_phase\"]==\"training\" and d[\"change\"][\"fix\"]==\"batch_size\" and d[\"path_fits\"] is True" "$tmp/out"'
check "JSON: every phase's terms add up to it; the activations say where they are counted" 'python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))
names={p[\"phase\"] for p in d[\"phases\"]}
assert {\"model_load\",\"baseline_sample\",\"training\",\"sampling\"} <= names, names
for p in d[\"phases\"]:
    t=p[\"terms\"]
    assert set(t)=={\"weights\",\"encoders\",\"adapter\",\"activations\",\"vae\",\"overhead\",\"measured\"}
    assert abs(sum(t.values())-p[\"bytes\"])<=8, p
tr=[p for p in d[\"phases\"] if p[\"phase\"]==\"training\"][0]
assert tr[\"terms\"][\"activations\"]>2**30 and tr[\"terms\"][\"weights\"]>10*2**30
assert d[\"activations\"]==dict(counted_from=\"flux\", own=True), d[\"activations\"]
" "$tmp/out"'
for v in 24GB "24 GB" 24G; do
	run "$tmp/nosmi" estimate --vram "$v" --json "$tmp/flux4.yaml"
	check "--vram $v is the card sold as 24 GB" 'python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert abs(d[\"card\"]/2**30-23.99)<0.001" "$tmp/out"'
done
run "$tmp/nosmi" estimate --vram 24GiB --json "$tmp/flux4.yaml"
check "--vram 24GiB is exact" 'python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d[\"card\"]==24*2**30" "$tmp/out"'
run "$tmp/nosmi" estimate --vram 24GB "$tmp/flux4.yaml"
check "the card line names the sold size once" 'grep -q "sold as 24 GB)" "$tmp/out"'
check "without --apply the job is untouched" 'cmp -s "$tmp/flux4.yaml" "$tmp/orig.yaml"'
run "$tmp/nosmi" estimate --vram 24 --apply -o "$tmp/new.yaml" "$tmp/flux4.yaml"
check "--apply -o writes the path" '[ $rc -eq 0 ] && grep -q "batch_size: 1" "$tmp/new.yaml" && cmp -s "$tmp/flux4.yaml" "$tmp/orig.yaml"'
run "$tmp/nosmi" estimate --vram 24 "$tmp/new.yaml"
check "the written job fits" 'grep -q "Verdict: fits" "$tmp/out"'
run "$tmp/nosmi" estimate --vram 24 --apply -i "$tmp/flux4.yaml"
check "--apply -i saves, keeps JOB~ and writes the journal" '[ $rc -eq 0 ] && grep -q "batch_size: 1" "$tmp/flux4.yaml" && cmp -s "$tmp/flux4.yaml~" "$tmp/orig.yaml" && grep -q "batch_size" "$tmp/flux4.yaml.oomfix.md"'
run "$tmp/nosmi" estimate --vram 24 -i "$tmp/flux4.yaml"
check "-i without --apply is a usage error" '[ $rc -eq 64 ]'

# The journal of a saved path names the command and the card.
check "the journal names oomfix estimate and the card" 'grep -q "oomfix estimate, for a 24.0 GiB card" "$tmp/flux4.yaml.oomfix.md"'

# A path that does not reach a fitting job: --apply writes nothing and exits 1 (review 4, E22).
cp "$EX/train_lora_flux_24gb.yaml" "$tmp/f12.yaml"
cp "$tmp/f12.yaml" "$tmp/f12.orig"
run "$tmp/nosmi" estimate --vram 12 --apply -i "$tmp/f12.yaml"
check "no path to a fitting job: --apply -i exits 1, writes nothing, says so" '[ $rc -eq 1 ] && cmp -s "$tmp/f12.yaml" "$tmp/f12.orig" && [ ! -e "$tmp/f12.yaml~" ] && grep -q "nothing written" "$tmp/err"'
run "$tmp/nosmi" estimate --vram 12 "$tmp/f12.yaml"
check "... and the report names the file to write, not a placeholder" '! grep -q "apply -i JOB" "$tmp/out"'

# A Wan 2.2 video job at 81 frames on 24 GB (review 4, E5): the training step's frames are
# halved, the previews keep theirs; a path to clips under a second is named; --steps stops early.
sed -e 's/^          num_frames: 1$/          num_frames: 81/' \
	-e 's/^        num_frames: 1$/        num_frames: 81/' \
	-e 's/resolution: \[ 512, 768, 1024\]/resolution: [512]/' \
	"$EX/train_lora_wan22_14b_24gb.yaml" >"$tmp/wan.yaml"
run "$tmp/nosmi" estimate --vram 24 --json "$tmp/wan.yaml"
check "video: the path halves the clips, not the previews, and names a clip under a second" 'python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))
fixes=[s[\"fix\"] for s in d[\"path\"]]
assert \"num_frames\" in fixes, fixes
assert d[\"path_fits\"] is True
assert d[\"path_short_clip\"] is True, d
" "$tmp/out"'
run "$tmp/nosmi" estimate --vram 24 --apply -o "$tmp/wan-after.yaml" "$tmp/wan.yaml"
check "video: the written job's clips are shorter, its previews are not halved with them" 'grep -Eq "^          num_frames: (9|5)$" "$tmp/wan-after.yaml" && grep -Eq "^        num_frames: (81|41|33)$" "$tmp/wan-after.yaml"'
check "video: the text names the short clips" 'tr "\n" " " <"$tmp/out" | grep -q "clips under about a second"'
run "$tmp/nosmi" estimate --vram 24 --steps 1 --json "$tmp/wan.yaml"
check "--steps 1: one fix" 'python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert len(d[\"path\"])==1, d[\"path\"]" "$tmp/out"'
run "$tmp/nosmi" estimate --vram 24 --steps 0 "$tmp/wan.yaml"
check "--steps 0 is a usage error" '[ $rc -eq 64 ]'

# One card (SPEC §12.2): the card read from a log's OOM message comes with what others held.
cp "$TESTS_DIR/ui/fixtures/shared-card.log" "$tmp/shared.log"
run "$tmp/nosmi" estimate --log "$tmp/shared.log" "$EX/train_lora_flux_24gb.yaml"
check "estimate --log: what the OOM message shows held by others is subtracted, and said" '[ $rc -eq 0 ] && grep -q "The OOM message shows .* GiB held by other processes" "$tmp/out" && grep -q "Beside them the job will not fit" "$tmp/out"'
run "$tmp/nosmi" plan --log "$tmp/shared.log" "$EX/train_lora_flux_24gb.yaml"
check "plan --log: the estimate on the OOM card says what it is beside what others held" 'tr "\n" " " <"$tmp/out" | tr -s " " | grep -q "with the 39.9 GiB others hold: will not fit"'
run "$tmp/nosmi" estimate --log "$tmp/shared.log" --json "$EX/train_lora_flux_24gb.yaml"
check "estimate --log --json: others and verdict_now" 'python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d[\"others\"]>6*2**30 and d[\"verdict_now\"]==\"no\", d" "$tmp/out"'

# The user's own runs (SPEC §12.2): an OOM read with its job is kept, and the next estimate of
# that job uses it. A store of this test's own; the suite's is off.
M="$TESTS_DIR/diag/cases-memory-trainers/m-torch25-this-process-step-4"
cp "$M/job.yaml" "$tmp/mj.yaml"
cp "$M/train.log" "$tmp/mj.log"
export OOMFIX_MEASUREMENTS="$tmp/measure/m.db"
mkdir -p "$tmp/measure"
run "$tmp/nosmi" estimate --vram 23.52GiB "$tmp/mj.yaml"
check "before any run: the model's verdict, nothing measured" '[ $rc -eq 0 ] && ! grep -q "Measured:" "$tmp/out" && ! grep -q "will not fit" "$tmp/out"'
run "$tmp/nosmi" diagnose --job "$tmp/mj.yaml" "$tmp/mj.log"
run "$tmp/nosmi" measurements
check "measurements: the OOM of the diagnosed log is kept" '[ $rc -eq 0 ] && grep -q "training  *>=  *24.1 GiB" "$tmp/out" && grep -q "1 measurements in" "$tmp/out"'
run "$tmp/nosmi" estimate --vram 23.52GiB "$tmp/mj.yaml"
check "the next estimate takes it: at least 24.1 GiB in training, will not fit" '[ $rc -eq 0 ] && grep -q "Measured: training: at least 24.1 GiB" "$tmp/out" && grep -q "will not fit at training" "$tmp/out" && grep -q "measured (1)" "$tmp/out"'
run "$tmp/nosmi" estimate --vram 23.52GiB --json "$tmp/mj.yaml"
check "estimate --json: the measured array and the terms that add up" 'python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))
m=d[\"measured\"]
assert len(m)==1 and m[0][\"phase\"]==\"training\" and m[0][\"kind\"]==\"at_least\" and m[0][\"same_settings\"], m
tr=[p for p in d[\"phases\"] if p[\"phase\"]==\"training\"][0]
assert tr[\"basis\"]==\"measured\" and tr[\"low\"]>=m[0][\"bytes\"] and abs(sum(tr[\"terms\"].values())-tr[\"bytes\"])<=8
assert d[\"verdict\"]==\"no\"
" "$tmp/out"'
# batch 1 is a nearby job: the measurement with the model's difference; the path ends fitting
sed 's/batch_size: 2/batch_size: 1/' "$tmp/mj.yaml" >"$tmp/mj1.yaml"
run "$tmp/nosmi" estimate --vram 23.52GiB --json "$tmp/mj1.yaml"
check "a nearby job (batch 1): the measurement carried by the model's difference" 'python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))
m=d[\"measured\"]
assert len(m)==1 and not m[0][\"same_settings\"] and \"batch 2\" in m[0][\"differs\"] and m[0][\"adjusted\"]<m[0][\"bytes\"], m
" "$tmp/out"'
run "$tmp/nosmi" measurements --export
check "measurements --export: the data points' columns, no path" '[ $rc -eq 0 ] && head -1 "$tmp/out" | grep -q "^id	trainer	arch	quantize" && [ "$(wc -l <"$tmp/out")" -eq 2 ] && ! grep -q "$tmp" "$tmp/out" && ! grep -q "/" "$tmp/out"'
run "$tmp/nosmi" measurements --json
check "measurements --json: the row with its settings and log" 'python3 -c "
import json,sys
d=json.load(open(sys.argv[1])); r=d[\"measurements\"]
assert len(r)==1 and r[0][\"log\"].endswith(\"mj.log\") and \"batch=2;\" in r[0][\"settings\"]
" "$tmp/out"'
# plan --log keeps what its log measured too
P="$TESTS_DIR/diag/cases-memory-trainers/f-timestamp-info-prefix"
cp "$P/job.yaml" "$tmp/pj.yaml"
cp "$P/train.log" "$tmp/pj.log"
run "$tmp/nosmi" plan --log "$tmp/pj.log" "$tmp/pj.yaml"
run "$tmp/nosmi" measurements --json
check "plan --log keeps its OOM's measurement" 'python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert len(d[\"measurements\"])==2, d" "$tmp/out"'
# a log older than the job's last saved change ran other settings: it is not kept for the job
run "$tmp/nosmi" set -i "$tmp/mj.yaml" config.process[0].train.batch_size=1
touch -d "2 hours ago" "$tmp/mj.log"
run "$tmp/nosmi" plan --log "$tmp/mj.log" "$tmp/mj.yaml"
run "$tmp/nosmi" measurements --json
check "a log that predates the last saved change is not kept" 'python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert len(d[\"measurements\"])==2" "$tmp/out"'
# a damaged store: set aside, said once, the command goes on
printf 'not a database at all %.0s' $(seq 1 300) >"$tmp/measure/m.db"
run "$tmp/nosmi" diagnose --job "$tmp/mj1.yaml" "$tmp/mj.log"
check "a damaged store is set aside, said once, the diagnosis printed" '[ $rc -eq 0 ] && grep -q "Verdict\|GPU" "$tmp/out" && [ "$(grep -c "damaged" "$tmp/err")" -eq 1 ] && ls "$tmp/measure" | grep -q "m.db.damaged-"'
OOMFIX_MEASUREMENTS=off run "$tmp/nosmi" measurements
check "OOMFIX_MEASUREMENTS=off: none kept, said" 'grep -q "measurements are off" "$tmp/out"'
export OOMFIX_MEASUREMENTS=off

echo "1..$n"
[ $failed -eq 0 ]
