#!/bin/bash
# The wheel and the Debian package as users install them, from the release build the smoke test
# made (scripts/release.sh reuses it). The wheel: named oomfix-V-py3-none-manylinux_2_17_ARCH.whl,
# RECORD true to its files, installed with pip --no-index into a fresh venv, where `oomfix` is on
# the venv's PATH and finds its data under the venv (--version, a diagnosis, Japanese, a theme,
# the man page and completions), and pip uninstall takes every file away again. The .deb: its
# control fields, unpacked with dpkg-deb -x and run from there. Prints TAP.
#   packages.sh RELEASE_BUILD_DIR
set -u
SOURCE_ROOT=${SOURCE_ROOT:?set SOURCE_ROOT to the source tree}
OUT=${1:?usage: packages.sh RELEASE_BUILD_DIR}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; fails=$((fails + 1)); }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }
show() { sed 's/^/#   /' "$@"; }
arch=$(uname -m)
mkdir "$WORK/home" "$WORK/empty"
# a bare environment: nothing from ours but the PATH given
bare() { local path=$1; shift; env -i HOME="$WORK/home" PATH="$path:/usr/bin:/bin" "$@"; }

# ---- the wheel ----------------------------------------------------------------------------------
if ! OOMFIX_RELEASE_DIR=$OUT sh "$SOURCE_ROOT/scripts/wheel.sh" > "$WORK/wheel.out" 2>&1; then
	nok "scripts/wheel.sh builds the wheel"
	show "$WORK/wheel.out"
	echo "1..$n"
	exit 1
fi
whl=$(tail -n 1 "$WORK/wheel.out")
ok "scripts/wheel.sh builds the wheel"
check "named oomfix-VERSION-py3-none-manylinux_2_17_$arch.whl" \
	test -n "$(basename "$whl" | grep -E "^oomfix-[0-9][0-9A-Za-z.+]*-py3-none-manylinux_2_17_$arch\.whl$")"
echo "# wheel: $(basename "$whl"), $(stat -c %s "$whl") bytes"

python3 - "$whl" > "$WORK/record.txt" 2>&1 <<'EOF'
import base64, hashlib, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = z.namelist()
dist = [n for n in names if n.endswith(".dist-info/RECORD")]
assert len(dist) == 1, names
rows = [l.split(",") for l in z.read(dist[0]).decode().splitlines()]
listed = {r[0] for r in rows}
assert listed == set(names), set(names) ^ listed
for name, h, size in rows:
    if name == dist[0]:
        assert h == "" and size == ""
        continue
    b = z.read(name)
    want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
    assert h == want and int(size) == len(b), name
script = [n for n in names if n.endswith(".data/scripts/oomfix")]
assert len(script) == 1 and (z.getinfo(script[0]).external_attr >> 16) & 0o111, script
for need in ("share/oomfix/themes/light.yaml", "share/locale/ja/LC_MESSAGES/oomfix.mo",
             "share/man/man1/oomfix.1", "share/bash-completion/completions/oomfix"):
    assert any(n.endswith(".data/data/" + need) for n in names), need
meta = z.read(dist[0].replace("RECORD", "METADATA")).decode()
wheel = z.read(dist[0].replace("RECORD", "WHEEL")).decode()
assert "Name: oomfix" in meta and "Root-Is-Purelib: false" in wheel, (meta, wheel)
print("%d files, RECORD checked" % len(names))
EOF
check "the wheel's RECORD lists every file with its sha256 and size; the binary is a script" \
	grep -q "RECORD checked" "$WORK/record.txt"
show "$WORK/record.txt"

if ! python3 -m venv "$WORK/venv" > "$WORK/venv.out" 2>&1; then
	for what in "pip install --no-index into a fresh venv" "oomfix --version from the venv" \
		"a diagnosis from the venv" "LANGUAGE=ja from the venv" "pip uninstall"; do
		skip "$what" "python3 -m venv fails here (install python3-venv)"
	done
	show "$WORK/venv.out"
else
	V=$WORK/venv
	"$V/bin/python" -m pip install --no-index --disable-pip-version-check "$whl" \
		> "$WORK/pip.out" 2>&1
	check "pip install --no-index into a fresh venv" test $? -eq 0
	show "$WORK/pip.out"
	check "oomfix is on the venv's PATH" \
		test "$(bare "$V/bin" sh -c 'command -v oomfix')" = "$V/bin/oomfix"
	(cd "$WORK/empty" && bare "$V/bin" oomfix --version) > "$WORK/version.txt" 2>&1
	check "oomfix --version from the venv: exit 0, data files under the venv" \
		grep -qxF "Data files: $V/share" "$WORK/version.txt"
	show "$WORK/version.txt"
	(cd "$WORK/empty" && bare "$V/bin" oomfix diagnose "$V/share/oomfix/examples/train.log") \
		> "$WORK/diag.txt" 2>&1
	st=$?
	check "a diagnosis from the venv (the bundled example): exit 0, an OOM at step 6" \
		eval 'test $st -eq 0 && grep -q "step 6" "$WORK/diag.txt"'
	head -n 4 "$WORK/diag.txt" | show
	bare "$V/bin" LANGUAGE=ja LANG=C.UTF-8 oomfix --help > "$WORK/ja.txt" 2>&1
	check "LANGUAGE=ja from the venv: the Japanese catalogue under the venv" grep -q '使い方' "$WORK/ja.txt"
	head -n 3 "$WORK/ja.txt" | show
	bare "$V/bin" LANGUAGE=ja LANG=C.UTF-8 oomfix diagnose "$V/share/oomfix/examples/train.log" \
		> "$WORK/ja-diag.txt" 2>&1
	check "a Japanese diagnosis from the venv" grep -q 'ステップ 6' "$WORK/ja-diag.txt"
	head -n 4 "$WORK/ja-diag.txt" | show
	printf 'dump theme.txt\n' > "$WORK/home/script"
	(cd "$WORK/home" && bare "$V/bin" LANG=C.UTF-8 NO_COLOR=1 oomfix \
		"$V/share/oomfix/examples/job.yaml" --theme light --script script) > /dev/null 2>&1
	check "a bundled theme is found under the venv (--theme light)" \
		eval '[ -s "$WORK/home/theme.txt" ] && ! grep -q "not found" "$WORK/home/theme.txt"'
	check "the man page and completions are under the venv's share/" \
		eval 'test -f "$V/share/man/man1/oomfix.1" && test -f "$V/share/bash-completion/completions/oomfix" &&
			test -f "$V/share/zsh/site-functions/_oomfix"'
	"$V/bin/python" -m pip uninstall -y oomfix > "$WORK/uninstall.out" 2>&1
	check "pip uninstall takes the binary and every data file away" \
		eval 'test ! -e "$V/bin/oomfix" && test ! -e "$V/share/oomfix" &&
			test -z "$(find "$V/share" -name "oomfix*" 2>/dev/null)"'
fi

# ---- the Debian package -------------------------------------------------------------------------
if ! command -v dpkg-deb >/dev/null; then
	skip "scripts/deb.sh builds the package" "dpkg-deb is not installed"
else
	if ! OOMFIX_RELEASE_DIR=$OUT sh "$SOURCE_ROOT/scripts/deb.sh" > "$WORK/deb.out" 2>&1; then
		nok "scripts/deb.sh builds the package"
		show "$WORK/deb.out"
	else
		deb=$(tail -n 1 "$WORK/deb.out")
		ok "scripts/deb.sh builds the package"
		echo "# deb: $(basename "$deb"), $(stat -c %s "$deb") bytes"
		dpkg-deb --info "$deb" > "$WORK/info.txt" 2>&1
		check "control: package oomfix, its version and architecture" \
			eval 'grep -q "^ Package: oomfix$" "$WORK/info.txt" &&
				grep -q "^ Architecture: $(dpkg --print-architecture 2>/dev/null || echo amd64)$" "$WORK/info.txt" &&
				grep -q "^ Version: [0-9]" "$WORK/info.txt"'
		grep -E '^ (Package|Version|Architecture|Installed-Size):' "$WORK/info.txt" | show
		dpkg-deb --contents "$deb" > "$WORK/contents.txt"
		check "files owned by root, the binary in /usr/bin, its data in /usr/share" \
			eval '! grep -v " root/root " "$WORK/contents.txt" | grep -q . &&
				grep -q " ./usr/bin/oomfix$" "$WORK/contents.txt" &&
				grep -q " ./usr/share/oomfix/themes/light.yaml$" "$WORK/contents.txt" &&
				grep -q " ./usr/share/locale/ja/LC_MESSAGES/oomfix.mo$" "$WORK/contents.txt" &&
				grep -q " ./usr/share/man/man1/oomfix.1$" "$WORK/contents.txt"'
		mkdir "$WORK/deb"
		dpkg-deb -x "$deb" "$WORK/deb"
		D=$WORK/deb/usr
		(cd "$WORK/empty" && bare "$D/bin" oomfix --version) > "$WORK/deb-version.txt" 2>&1
		check "unpacked: oomfix --version finds the package's share/" \
			grep -qxF "Data files: $D/share" "$WORK/deb-version.txt"
		show "$WORK/deb-version.txt"
		(cd "$WORK/empty" && bare "$D/bin" oomfix diagnose "$D/share/oomfix/examples/train.log") \
			> "$WORK/deb-diag.txt" 2>&1
		st=$?
		check "unpacked: a diagnosis, exit 0" eval 'test $st -eq 0 && grep -q "step 6" "$WORK/deb-diag.txt"'
		bare "$D/bin" LANGUAGE=ja LANG=C.UTF-8 oomfix --help > "$WORK/deb-ja.txt" 2>&1
		check "unpacked: LANGUAGE=ja" grep -q '使い方' "$WORK/deb-ja.txt"
	fi
fi

echo "1..$n"
[ $fails -eq 0 ]
