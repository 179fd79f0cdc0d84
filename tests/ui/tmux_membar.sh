#!/bin/bash
# The memory account under the verdict, in a real 80-column terminal (tmux): one stacked bar
# with a fill character per part, so it reads in monochrome, and a legend with the figures;
# ASCII fills when the locale is not UTF-8. Skipped without tmux.
set -u
OOMFIX=${OOMFIX:?set OOMFIX to the built binary}
HERE=$(cd "$(dirname "$0")" && pwd)
FIX=$HERE/fixtures
TMUX_TEST=membar
. "$HERE/../tmux-lib.sh"
cp "$FIX/job.yaml" "$WORK/"
cp "$FIX/shared-card.log" "$WORK/train.log"
echo "1..14"
start() { # start SESSION LOCALE [VAR=VALUE ...]
	local s=$1 loc=$2
	shift 2
	T new-session -d -s "$s" -x 80 -y 40 -c "$WORK" \
		"exec env LC_ALL=$loc TERM=tmux-256color HOME='$WORK' $* '$OOMFIX' job.yaml train.log"
}

# UTF-8, no colour: the shades alone tell the parts apart
start utf C.UTF-8 NO_COLOR=1
wait_for utf "GPU memory when it failed" > /dev/null
screen utf > "$WORK/utf.txt"
bar=$(grep -E '^ \[.*\]$' "$WORK/utf.txt" | head -1)
check "utf8: the heading names the card" grep -qF "GPU memory when it failed (47.53 GiB card):" "$WORK/utf.txt"
check "utf8: one bar between brackets" test -n "$bar"
check "utf8: the bar fits 80 columns" test "$(printf '%s' "$bar" | wc -L)" -le 80
check "utf8: this job, others, unaccounted each have their own fill" \
	bash -c 'printf "%s" "$0" | grep -q "█" && printf "%s" "$0" | grep -q "▓" && printf "%s" "$0" | grep -q "▒"' "$bar"
# 34.19 of 47.53 GiB is 72% of the 72-cell bar: 52 cells of the unaccounted shade
check "utf8: the unaccounted part is drawn to scale ($(printf '%s' "$bar" | grep -o '▒' | wc -l) cells)" \
	test "$(printf '%s' "$bar" | grep -o '▒' | wc -l)" -eq 52
check "utf8: the legend gives the figures" \
	bash -c 'grep -qF "█ this job 7.62 GiB" "$0" && grep -qF "▓ other processes 5.68 GiB" "$0" && grep -qF "▒ unaccounted 34.19 GiB" "$0" && grep -qF "░ free 43.94 MiB" "$0"' "$WORK/utf.txt"
check "utf8: no line of the screen is wider than 80 columns" \
	test "$(LC_ALL=C.UTF-8 wc -L < "$WORK/utf.txt")" -le 80
check "utf8: the verdict above the bar is E, from the numbers" grep -qF "the card was held by others" "$WORK/utf.txt"

# a locale that is not UTF-8: ASCII fills, same layout
start asc C NO_COLOR=1
wait_for asc "GPU memory when it failed" > /dev/null
screen asc > "$WORK/asc.txt"
abar=$(grep -E '^ \[.*\]$' "$WORK/asc.txt" | head -1)
check "ascii: the bar uses # = % fills" bash -c 'printf "%s" "$0" | grep -qE "^ \[#+=+%+\.* *\]$"' "$abar"
check "ascii: the bar is as wide as the UTF-8 one" test "$(printf '%s' "$abar" | wc -L)" -eq "$(printf '%s' "$bar" | wc -L)"
check "ascii: the legend marks each part with its fill" \
	bash -c 'grep -qF "# this job 7.62 GiB" "$0" && grep -qF "% unaccounted 34.19 GiB" "$0"' "$WORK/asc.txt"

# Japanese: the labels are translated, the bar is the same
start ja C.UTF-8 LANGUAGE=ja
wait_for ja "47.53 GiB" > /dev/null
screen ja > "$WORK/ja.txt"
check "ja: the legend is in Japanese" grep -qF "このジョブ 7.62 GiB" "$WORK/ja.txt"
# a message without numbers: no bar, the verdict alone
cp "$FIX/no-numbers.log" "$WORK/plain.log"
T new-session -d -s plain -x 80 -y 40 -c "$WORK" \
	"exec env LC_ALL=C.UTF-8 TERM=tmux-256color HOME='$WORK' '$OOMFIX' job.yaml plain.log"
wait_for plain "It ran out of GPU memory" > /dev/null
screen plain > "$WORK/plain.txt"
check "no numbers: the verdict is shown" grep -qF "while the model was loading" "$WORK/plain.txt"
check "no numbers: no memory bar" bash -c '! grep -qF "GPU memory when it failed" "$0"' "$WORK/plain.txt"
exit $((fails > 0))
