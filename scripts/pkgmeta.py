#!/usr/bin/env python3
"""Packages the staged release tree (scripts/release.sh: bin/oomfix and share/) for the places
users install from, with Python's standard library only.

  pkgmeta.py wheel TREE OUTDIR MTIME   writes OUTDIR/oomfix-V-py3-none-manylinux_2_17_ARCH.whl
  pkgmeta.py deb TREE OUTDIR MTIME     writes the control file and the package tree for
                                       dpkg-deb into OUTDIR/deb-root, prints its path

The version is taken from the tree's name (oomfix-VERSION-linux-ARCH) and made valid for each
format: PEP 440 for the wheel (0.1.0-gabc1234 → 0.1.0+gabc1234, 0.2.0-3-gabc1234 →
0.2.0.post3+gabc1234), Debian's for the package (0.1.0-gabc1234 → 0.1.0+gabc1234). Every file
gets the time MTIME, so the packages depend on the sources, not on when they were built.
"""
import base64
import hashlib
import os
import re
import shutil
import stat
import sys
import time
import zipfile

SUMMARY = "Diagnose and fix CUDA out-of-memory failures of AI Toolkit training jobs"
DESCRIPTION = """\
When an AI Toolkit training job dies with CUDA out-of-memory, oomfix reads its log and job (a
YAML or JSON file, or a job of the web UI's database), tells when it ran out of memory and what
to change first, applies that change one fix at a time with a safe save, follows runs and
retries until the job fits. A terminal UI and a command line, in English and Japanese.
"""
WHEEL_NOTE = """
This wheel holds one statically linked binary and its data: installed into a virtual
environment it puts `oomfix` on that environment's PATH, with its themes, Japanese catalogue,
man page (share/man) and shell completions (share/bash-completion, share/zsh,
share/fish) under the environment's prefix.
"""
DEB_NOTE = """
One statically linked binary (no library dependency) with its themes, Japanese catalogue, man
page and shell completions.
"""


def tree_version(tree):
    m = re.match(r"^oomfix-(.+)-linux-([A-Za-z0-9_]+)$", os.path.basename(tree.rstrip("/")))
    if not m:
        sys.exit("pkgmeta: %s is not a staged tree named oomfix-VERSION-linux-ARCH" % tree)
    return m.group(1), m.group(2)


def pep440(v):
    dirty = v.endswith("-dirty")
    if dirty:
        v = v[:-len("-dirty")]
    m = re.match(r"^(\d+(?:\.\d+)*)(?:-(\d+))?(?:-g([0-9a-f]+))?$", v)
    if not m:
        sys.exit("pkgmeta: cannot make a Python version of %s" % v)
    out = m.group(1)
    if m.group(2):
        out += ".post" + m.group(2)
    local = [x for x in (m.group(3) and "g" + m.group(3), dirty and "dirty") if x]
    if local:
        out += "+" + ".".join(local)
    return out


def debian(v):
    # a Debian upstream version: digits first; '-' would start a Debian revision
    return v.replace("-", "+")


def files_of(tree):
    """(relative path, absolute path) of every file under tree, symlinks followed, sorted."""
    out = []
    for d, dirs, files in os.walk(tree):
        dirs.sort()
        for f in sorted(files):
            p = os.path.join(d, f)
            if os.path.isfile(p):
                out.append((os.path.relpath(p, tree), p))
    return out


def zinfo(name, mtime, mode):
    t = time.gmtime(max(mtime, 315532800))  # zip times start in 1980
    zi = zipfile.ZipInfo(name, date_time=t[:6])
    zi.compress_type = zipfile.ZIP_DEFLATED
    zi.external_attr = (stat.S_IFREG | mode) << 16
    return zi


def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def wheel(tree, outdir, mtime):
    raw, arch = tree_version(tree)
    version = pep440(raw)
    tag = "py3-none-manylinux_2_17_" + arch
    name = "oomfix-%s-%s.whl" % (version, tag)
    dist = "oomfix-%s.dist-info" % version
    data = "oomfix-%s.data" % version
    entries = []  # (name in the wheel, bytes, mode)
    for rel, p in files_of(tree):
        with open(p, "rb") as f:
            b = f.read()
        if rel == os.path.join("bin", "oomfix"):
            entries.append((data + "/scripts/oomfix", b, 0o755))
        elif rel.startswith("share" + os.sep):
            entries.append((data + "/data/" + rel.replace(os.sep, "/"), b,
                            0o755 if os.stat(p).st_mode & 0o111 else 0o644))
    if not any(e[0].endswith("/scripts/oomfix") for e in entries):
        sys.exit("pkgmeta: %s has no bin/oomfix" % tree)
    meta = ("Metadata-Version: 2.1\nName: oomfix\nVersion: %s\nSummary: %s\n"
            "License: MIT\nRequires-Python: >=3\nPlatform: Linux\n"
            "Classifier: Environment :: Console :: Curses\n"
            "Classifier: License :: OSI Approved :: MIT License\n"
            "Classifier: Operating System :: POSIX :: Linux\n"
            "Description-Content-Type: text/plain\n\n%s" % (version, SUMMARY,
                                                            DESCRIPTION + WHEEL_NOTE))
    whl = ("Wheel-Version: 1.0\nGenerator: oomfix scripts/pkgmeta.py\nRoot-Is-Purelib: false\n"
           "Tag: %s\n" % tag)
    entries.append((dist + "/METADATA", meta.encode(), 0o644))
    entries.append((dist + "/WHEEL", whl.encode(), 0o644))
    record = "".join("%s,%s,%d\n" % (n, record_hash(b), len(b)) for n, b, _ in entries)
    record += dist + "/RECORD,,\n"
    entries.append((dist + "/RECORD", record.encode(), 0o644))
    path = os.path.join(outdir, name)
    tmp = path + ".part"
    with zipfile.ZipFile(tmp, "w") as z:
        for n, b, mode in entries:
            z.writestr(zinfo(n, mtime, mode), b)
    os.replace(tmp, path)
    print(path)


def deb(tree, outdir, mtime):
    raw, arch = tree_version(tree)
    darch = {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "armhf", "i686": "i386",
             "ppc64le": "ppc64el", "s390x": "s390x", "riscv64": "riscv64"}.get(arch, arch)
    root = os.path.join(outdir, "deb-root")
    shutil.rmtree(root, ignore_errors=True)
    # Installed under /usr, bin/oomfix finds /usr/share/oomfix from its own path.
    size = 0
    for rel, p in files_of(tree):
        if rel == "README.md" or not (rel.startswith("bin" + os.sep) or
                                       rel.startswith("share" + os.sep)):
            continue
        dst = os.path.join(root, "usr", rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(p, dst)
        os.chmod(dst, 0o755 if rel.startswith("bin" + os.sep) else 0o644)
        size += os.path.getsize(dst)
    if not os.path.exists(os.path.join(root, "usr", "bin", "oomfix")):
        sys.exit("pkgmeta: %s has no bin/oomfix" % tree)
    os.makedirs(os.path.join(root, "DEBIAN"))
    desc = "\n".join(" " + (line if line.strip() else ".")
                     for line in (DESCRIPTION + DEB_NOTE).strip().splitlines())
    control = ("Package: oomfix\nVersion: %s\nArchitecture: %s\nMaintainer: oomfix maintainers "
               "<oomfix@localhost>\nInstalled-Size: %d\nSection: utils\nPriority: optional\n"
               "Description: %s\n%s\n" % (debian(raw), darch, (size + 1023) // 1024, SUMMARY,
                                            desc))
    with open(os.path.join(root, "DEBIAN", "control"), "w") as f:
        f.write(control)
    for d, dirs, files in os.walk(root):
        os.chmod(d, 0o755)
        for x in dirs + files:
            os.utime(os.path.join(d, x), (mtime, mtime), follow_symlinks=False)
    print(root)
    print("oomfix_%s_%s.deb" % (debian(raw), darch))


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("wheel", "deb"):
        sys.exit("usage: pkgmeta.py wheel|deb TREE OUTDIR MTIME")
    what, tree, outdir, mtime = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    (wheel if what == "wheel" else deb)(tree, outdir, mtime)


if __name__ == "__main__":
    main()
