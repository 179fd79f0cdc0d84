#!/bin/bash
# `oomfix get` and `oomfix set`: values as the trainer reads them, output modes, exit codes,
# error positions, and the job file left untouched when a set fails. Prints TAP.
set -u
OOMFIX=${OOMFIX:?}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
no() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }
check() { # NAME EXPECTED ACTUAL
	if [ "$2" == "$3" ]; then ok "$1"; else no "$1" "want: $2" "got:  $3"; fi
}

cat > "$T/job.yaml" <<'YAML'
# a job
job: extension
config:
  name: "my_job"  # the name
  process:
    - type: 'sd_trainer'
      train:
        batch_size: 2 # bs
        lr: 1e-4
        gradient_checkpointing: false
      datasets:
        - folder_path: "/data/猫"
          resolution: [ 512, 768, 1024 ]
      model:
        arch: wan22_14b
YAML
J="$T/job.yaml"
P='config.process[0]'
cp "$J" "$T/orig.yaml"

echo "1..32"
check "get a quoted string" "my_job" "$("$OOMFIX" get "$J" config.name)"
check "get a float written 1e-4" "1e-4" "$("$OOMFIX" get "$J" "$P.train.lr")"
check "get a flow list" "[512, 768, 1024]" "$("$OOMFIX" get "$J" "$P.datasets[0].resolution")"
check "get a non-ASCII string" "/data/猫" "$("$OOMFIX" get "$J" "$P.datasets[0].folder_path")"
check "get a map" "{arch: wan22_14b}" "$("$OOMFIX" get "$J" "$P.model")"

err=$("$OOMFIX" get "$J" "$P.train.nope" 2>&1 >/dev/null); rc=$?
check "get of an absent key exits 65" 65 "$rc"
if [[ "$err" == *"job.yaml:7:7: $P.train.nope: no such key"* ]]; then ok "absent key names the nearest parent's line:col"; else no "absent key names the nearest parent's line:col" "$err"; fi

"$OOMFIX" get "$T/missing.yaml" config.name 2>/dev/null; check "get of a missing file exits 66" 66 "$?"
"$OOMFIX" get "$T" config.name 2>/dev/null; check "get of a directory exits 66" 66 "$?"
"$OOMFIX" get "$J" 2>/dev/null; check "get without a path exits 64" 64 "$?"
out=$("$OOMFIX" get 2>&1); rc=$?
if [ $rc -eq 64 ] && [[ "$out" == *"usage: oomfix get"* ]]; then ok "usage line on bad usage"; else no "usage line on bad usage" "$rc $out"; fi

printf 'a: 1\nb: "open\nc: 2\nd: 3\n' > "$T/bad.yaml"
err=$("$OOMFIX" get "$T/bad.yaml" a 2>&1); rc=$?
if [ $rc -eq 65 ] && [[ "$err" =~ bad\.yaml:2:[0-9]+: ]]; then ok "invalid YAML: exit 65 with file:line:col"; else no "invalid YAML: exit 65 with file:line:col" "$rc $err"; fi
printf 'a:\n  b: 1\n\t c: 2\n' > "$T/tab.yaml"
err=$("$OOMFIX" get "$T/tab.yaml" a.b 2>&1); rc=$?
if [ $rc -eq 65 ] && [[ "$err" == *"tab.yaml:3:1: a tab in the indentation"* ]]; then ok "a tab in the indentation is named, at its line and column"; else no "a tab in the indentation is named, at its line and column" "$rc $err"; fi

out=$("$OOMFIX" set "$J" "$P.train.batch_size=1" "$P.model.low_vram=true")
check "set to stdout exits 0" 0 "$?"
d=$(diff "$J" <(printf '%s\n' "$out") | grep -c '^[<>]')
check "set changes one line and adds one" 3 "$d"
if grep -q '^        batch_size: 1 # bs$' <<<"$out" && grep -q '^        low_vram: true$' <<<"$out"; then ok "set keeps comments and indentation"; else no "set keeps comments and indentation" "$out"; fi
cmp -s "$J" "$T/orig.yaml" && ok "set to stdout leaves the file alone" || no "set to stdout leaves the file alone"

"$OOMFIX" set -o "$T/out.yaml" "$J" "$P.train.lr=2e-4"
check "set -o exits 0" 0 "$?"
check "set -o wrote the value" "2e-4" "$("$OOMFIX" get "$T/out.yaml" "$P.train.lr")"

"$OOMFIX" set "$J" "$P.train.lr=[unclosed" >/dev/null 2>&1; rc=$?
check "set with an invalid value exits 65" 65 "$rc"
"$OOMFIX" set -i "$J" "$P.datasets[5].x=1" >/dev/null 2>&1; rc=$?
check "set -i through a missing item exits 65" 65 "$rc"
cmp -s "$J" "$T/orig.yaml" && ok "a failed set -i leaves the file untouched" || no "a failed set -i leaves the file untouched"
"$OOMFIX" set "$J" >/dev/null 2>&1; check "set without an assignment exits 64" 64 "$?"
"$OOMFIX" set "$J" "novalue" >/dev/null 2>&1; check "set with no '=' exits 64" 64 "$?"
"$OOMFIX" set -o "$T/nodir/out.yaml" "$J" "$P.train.lr=2e-4" >/dev/null 2>&1; rc=$?
check "set -o into a missing directory exits 73" 73 "$rc"
cp "$T/orig.yaml" "$J"
"$OOMFIX" set -i "$J" "$P.train.batch_size=1" "$P.model.low_vram=true" 2>/dev/null
check "set -i exits 0" 0 "$?"
check "set -i saved the value" "1" "$("$OOMFIX" get "$J" "$P.train.batch_size")"
cmp -s "$J~" "$T/orig.yaml" && ok "set -i keeps the previous version as JOB~" || no "set -i keeps the previous version as JOB~"
if grep -qxF -- "- \`$P.train.batch_size\`: 2 → 1" "$J.oomfix.md" &&
	grep -qxF -- "- \`$P.model.low_vram\`: (absent) → true" "$J.oomfix.md"; then
	ok "set -i writes what changed to the journal"
else
	no "set -i writes what changed to the journal" "$(cat "$J.oomfix.md" 2>&1)"
fi
"$OOMFIX" get --help | grep -q "^Usage: oomfix get JOB PATH" && ok "get --help prints its usage" || no "get --help prints its usage"
"$OOMFIX" set --help | grep -q "^Usage: oomfix set" && ok "set --help prints its usage" || no "set --help prints its usage"
# A job written as JSON stays JSON: a new string value is written in double quotes.
if "$OOMFIX" set "$TESTS_DIR/fix/fixtures/ui_job.json" "$P.train.optimizer=adamw8bit" >"$T/j.json" 2>/dev/null &&
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["config"]["process"][0]["train"]["optimizer"] == "adamw8bit"' "$T/j.json"; then
	ok "set of a new string in a JSON job keeps it JSON"
else
	no "set of a new string in a JSON job keeps it JSON" "$(cat "$T/j.json")"
fi
exit $((fails > 0))
