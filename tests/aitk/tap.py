"""TAP for the Python tests of this folder: ok() and skip() number the checks, end() prints the
plan and gives the exit status."""
import sys

count = 0
failed = 0


def ok(cond, what, detail=""):
    """One check; on failure the first 40 lines of detail follow as comments."""
    global count, failed
    count += 1
    if cond:
        print("ok %d - %s" % (count, what))
    else:
        failed += 1
        print("not ok %d - %s" % (count, what))
        for line in str(detail).splitlines()[:40]:
            print("#   " + line)
    sys.stdout.flush()


def skip(what, why):
    global count
    count += 1
    print("ok %d - %s # SKIP %s" % (count, what, why))
    sys.stdout.flush()


def end():
    print("1..%d" % count)
    return 1 if failed else 0
