/* test_save.c — the safe save, in a fresh temporary directory per test: content, mode, owner,
 * symlinks, backups, changed-on-disk refusal, invalid YAML, read-only and full file systems, a
 * file-size limit, the emergency save (also from a real signal) and the change journal; what
 * oomfix keeps beside a job never follows a planted link nor is wider than the job (issue 34).
 * The file-system failures need root (a small or read-only tmpfs); they are skipped otherwise. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "oomfix/save.h"

static const char OLD[] = "job: extension\nconfig:\n  name: old\n";
static const char NEW[] = "job: extension\nconfig:\n  name: new_name\n";

/* The unprivileged user the root-only tests switch to. */
#define NOBODY 65534

struct fx {
	char dir[1024];
	char job[1200];
	bool mounted;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);
	const char *t = getenv("TMPDIR");
	snprintf(f->dir, sizeof f->dir, "%s/oomfix-save-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	snprintf(f->job, sizeof f->job, "%s/job.yaml", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[3000];
	if (f->mounted) {
		snprintf(cmd, sizeof cmd, "%s/mnt", f->dir);
		umount2(cmd, MNT_DETACH);
	}
	snprintf(cmd, sizeof cmd, "chmod -R u+rwx '%s' && rm -rf '%s'", f->dir, f->dir);
	if (system(cmd) != 0)
		print_error("could not remove %s\n", f->dir);
	free(f);
	return 0;
}

static void put(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	assert_int_equal(close(fd), 0);
}

/* The whole file (malloc'd), or NULL when it cannot be read. */
static char *get(const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *s = malloc(cap);
	ssize_t r;
	while ((r = read(fd, s + n, cap - n - 1)) > 0) {
		n += (size_t)r;
		if (cap - n < 2)
			s = realloc(s, cap *= 2);
	}
	close(fd);
	s[n] = '\0';
	return s;
}

static void assert_content(const char *path, const char *want)
{
	char *got = get(path);
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

/* True when `dir` holds exactly the names given (NULL-terminated): no temp file left over. */
static bool only_entries(const char *dir, ...)
{
	const char *want[16];
	size_t nwant = 0;
	va_list ap;
	va_start(ap, dir);
	for (const char *s; (s = va_arg(ap, const char *)) && nwant < 16;)
		want[nwant++] = s;
	va_end(ap);
	DIR *d = opendir(dir);
	if (!d)
		return false;
	size_t seen = 0;
	bool ok = true;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		bool known = false;
		for (size_t i = 0; i < nwant; i++)
			known |= !strcmp(de->d_name, want[i]);
		if (!known) {
			print_error("unexpected file left in %s: %s\n", dir, de->d_name);
			ok = false;
		}
		seen++;
	}
	closedir(d);
	return ok && seen == nwant;
}

static void stamp_of(const char *path, struct save_stamp *s)
{
	struct err e;
	err_clear(&e);
	assert_int_equal(save_stamp(path, s, &e), 0);
}

static void test_stamp(void **state)
{
	struct fx *f = *state;
	struct save_stamp s;
	struct err e;
	assert_int_equal(save_stamp(f->job, &s, &e), 0);
	assert_false(s.exists);
	put(f->job, OLD, 0644);
	stamp_of(f->job, &s);
	struct stat st;
	assert_int_equal(stat(f->job, &st), 0);
	assert_true(s.exists);
	assert_int_equal(s.ino, st.st_ino);
	assert_int_equal(s.size, (off_t)strlen(OLD));
	assert_int_equal(s.mtime_nsec, st.st_mtim.tv_nsec);
}

/* Sets a file's modification time to `sec` (and nanoseconds 0), so two stamps differ only in
 * what a test changed. */
static void set_mtime(const char *path, time_t sec)
{
	struct timespec ts[2] = { { sec, 0 }, { sec, 0 } };
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

/* Rewritten in place with the same size: the same file, but not unchanged (its time moved). */
static void test_stamp_rewritten_in_place(void **state)
{
	struct fx *f = *state;
	struct save_stamp a, b;
	put(f->job, OLD, 0644);
	set_mtime(f->job, 1000000000);
	stamp_of(f->job, &a);
	char same_len[sizeof OLD];
	memcpy(same_len, OLD, sizeof OLD);
	same_len[sizeof OLD - 3] = 'x'; /* "olx\n": one byte differs, the length does not */
	put(f->job, same_len, 0644);
	stamp_of(f->job, &b);
	assert_int_equal(a.ino, b.ino);
	assert_int_equal(a.size, b.size);
	assert_true(save_stamp_same_file(&a, &b));
	assert_false(save_stamp_same(&a, &b));
	assert_true(save_stamp_same(&a, &a));
	assert_true(save_stamp_same(&b, &b));
}

/* Another file renamed over the name, with the same size and time: not the same file. */
static void test_stamp_renamed_over(void **state)
{
	struct fx *f = *state;
	struct save_stamp a, b, open_one;
	char other[1300];
	snprintf(other, sizeof other, "%s/other.yaml", f->dir);
	put(f->job, OLD, 0644);
	put(other, OLD, 0644);
	set_mtime(f->job, 1000000000);
	set_mtime(other, 1000000000);
	stamp_of(f->job, &a);
	int fd = open(f->job, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(rename(other, f->job), 0);
	stamp_of(f->job, &b);
	memset(&open_one, 0, sizeof open_one);
	assert_int_equal(save_stamp_fd(fd, &open_one), 0);
	close(fd);
	assert_int_equal(a.size, b.size);
	assert_int_equal(a.mtime_sec, b.mtime_sec);
	assert_int_equal(a.mtime_nsec, b.mtime_nsec);
	assert_true(a.ino != b.ino);
	assert_false(save_stamp_same_file(&a, &b));
	assert_false(save_stamp_same(&a, &b));
	/* the open file is still the one first stamped, whatever its name leads to now */
	assert_true(save_stamp_same(&open_one, &a));
	assert_false(save_stamp_same_file(&open_one, &b));
	/* a failed fstat leaves the stamp as it was */
	assert_int_equal(save_stamp_fd(-1, &open_one), -1);
	assert_true(save_stamp_same(&open_one, &a));
}

/* A missing file: exists = false; two missing files are "unchanged", never "the same file". */
static void test_stamp_missing(void **state)
{
	struct fx *f = *state;
	struct save_stamp gone, gone2, there;
	stamp_of(f->job, &gone);
	assert_false(gone.exists);
	stamp_of(f->job, &gone2);
	assert_true(save_stamp_same(&gone, &gone2));
	assert_false(save_stamp_same_file(&gone, &gone2));
	put(f->job, OLD, 0644);
	stamp_of(f->job, &there);
	assert_true(there.exists);
	assert_false(save_stamp_same(&gone, &there));
	assert_false(save_stamp_same(&there, &gone));
	assert_false(save_stamp_same_file(&gone, &there));
	assert_false(save_stamp_same_file(&there, &gone));
	/* an unreadable path gives an error and a missing stamp, not a stale one */
	char under[1300];
	struct err e;
	snprintf(under, sizeof under, "%s/job.yaml/x", f->dir);
	err_clear(&e);
	assert_int_not_equal(save_stamp(under, &there, &e), 0);
	assert_false(there.exists);
}

/* Grown, its time set back to what it was: the same file, not unchanged (its size differs). */
static void test_stamp_grown(void **state)
{
	struct fx *f = *state;
	struct save_stamp a, b;
	struct stat st;
	put(f->job, OLD, 0644);
	set_mtime(f->job, 1000000000);
	stamp_of(f->job, &a);
	int fd = open(f->job, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "more: 1\n", 8), 8);
	close(fd);
	set_mtime(f->job, 1000000000);
	stamp_of(f->job, &b);
	assert_int_equal(a.mtime_sec, b.mtime_sec);
	assert_int_equal(b.size, a.size + 8);
	assert_true(save_stamp_same_file(&a, &b));
	assert_false(save_stamp_same(&a, &b));
	/* the stamp of a stat result is the stamp of the path */
	assert_int_equal(stat(f->job, &st), 0);
	save_stamp_of_stat(&st, &a);
	assert_true(save_stamp_same(&a, &b));
}

static void test_saves_content(void **state)
{
	struct fx *f = *state;
	struct save_stamp s;
	struct err e;
	put(f->job, OLD, 0644);
	stamp_of(f->job, &s);
	err_clear(&e);
	assert_int_equal(save_file(f->job, NEW, strlen(NEW), &s, 0, true, &e), 0);
	assert_int_equal(e.code, 0);
	assert_content(f->job, NEW);
	assert_true(only_entries(f->dir, "job.yaml", NULL));
}

static void test_new_file_mode(void **state)
{
	struct fx *f = *state;
	struct save_stamp s;
	struct err e;
	struct stat st;
	stamp_of(f->job, &s);
	mode_t old = umask(027);
	int rc = save_file(f->job, NEW, strlen(NEW), &s, 0, true, &e);
	umask(old);
	assert_int_equal(rc, 0);
	assert_int_equal(stat(f->job, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_content(f->job, NEW);

	char other[1300];
	snprintf(other, sizeof other, "%s/other.yaml", f->dir);
	old = umask(022);
	rc = save_file(other, OLD, strlen(OLD), NULL, 0, true, &e);
	umask(old);
	assert_int_equal(rc, 0);
	assert_int_equal(stat(other, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_true(only_entries(f->dir, "job.yaml", "other.yaml", NULL));
}

static void test_mode_kept(void **state)
{
	struct fx *f = *state;
	struct save_stamp s;
	struct err e;
	struct stat before, after;
	/* 0600 is also what mkstemp gives, so other modes prove the mode is copied. */
	const mode_t modes[] = { 0600, 0640, 0664, 0755 };
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
		put(f->job, OLD, modes[i]);
		assert_int_equal(stat(f->job, &before), 0);
		stamp_of(f->job, &s);
		assert_int_equal(save_file(f->job, NEW, strlen(NEW), &s, 0, true, &e), 0);
		assert_int_equal(stat(f->job, &after), 0);
		assert_int_equal(after.st_mode & 07777, modes[i]);
		/* Replaced by rename, not rewritten in place. */
		assert_true(after.st_ino != before.st_ino);
		assert_content(f->job, NEW);
	}
	assert_true(only_entries(f->dir, "job.yaml", NULL));
}

static void test_owner_kept(void **state)
{
	struct fx *f = *state;
	struct save_stamp s;
	struct err e;
	struct stat st;
	if (geteuid() != 0)
		skip();
	put(f->job, OLD, 0640);
	assert_int_equal(chown(f->job, 1234, 2345), 0);
	stamp_of(f->job, &s);
	assert_int_equal(save_file(f->job, NEW, strlen(NEW), &s, 0, true, &e), 0);
	assert_int_equal(stat(f->job, &st), 0);
	assert_int_equal(st.st_uid, 1234);
	assert_int_equal(st.st_gid, 2345);
	assert_int_equal(st.st_mode & 07777, 0640);
}

static void test_symlink_followed(void **state)
{
	struct fx *f = *state;
	struct save_stamp s;
	struct err e;
	struct stat st;
	char sub[1300], real[1300], link1[1300], link2[1300], bak[1300], target[256];
	snprintf(sub, sizeof sub, "%s/sub", f->dir);
	snprintf(real, sizeof real, "%s/sub/real.yaml", f->dir);
	snprintf(link1, sizeof link1, "%s/link.yaml", f->dir);
	snprintf(link2, sizeof link2, "%s/link2.yaml", f->dir);
	snprintf(bak, sizeof bak, "%s/sub/real.yaml~", f->dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	put(real, OLD, 0640);
	/* Relative links, one through the other: the target lives in another directory. */
	assert_int_equal(symlink("sub/real.yaml", link1), 0);
	assert_int_equal(symlink("link.yaml", link2), 0);

	stamp_of(link2, &s);
	assert_int_equal(save_file(link2, NEW, strlen(NEW), &s, SAVE_BACKUP, true, &e), 0);
	assert_content(real, NEW);
	assert_content(bak, OLD);
	assert_int_equal(lstat(link1, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(lstat(link2, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	ssize_t n = readlink(link1, target, sizeof target - 1);
	assert_true(n > 0);
	target[n] = '\0';
	assert_string_equal(target, "sub/real.yaml");
	assert_int_equal(stat(real, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_true(only_entries(f->dir, "sub", "link.yaml", "link2.yaml", NULL));
	assert_true(only_entries(sub, "real.yaml", "real.yaml~", NULL));

	/* A link to a file that does not exist yet: the file is created, the link kept. */
	char dangling[1300], created[1300];
	snprintf(dangling, sizeof dangling, "%s/dangling.yaml", f->dir);
	snprintf(created, sizeof created, "%s/sub/new.yaml", f->dir);
	assert_int_equal(symlink("sub/new.yaml", dangling), 0);
	stamp_of(dangling, &s);
	assert_false(s.exists);
	assert_int_equal(save_file(dangling, OLD, strlen(OLD), &s, 0, true, &e), 0);
	assert_content(created, OLD);
	assert_int_equal(lstat(dangling, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
}

static void test_backup(void **state)
{
	struct fx *f = *state;
	struct save_stamp s;
	struct err e;
	struct stat st;
	char bak[1300];
	snprintf(bak, sizeof bak, "%s~", f->job);
	put(f->job, OLD, 0640);
	put(bak, "stale backup\n", 0600);
	stamp_of(f->job, &s);
	assert_int_equal(save_file(f->job, NEW, strlen(NEW), &s, SAVE_BACKUP, true, &e), 0);
	assert_content(f->job, NEW);
	assert_content(bak, OLD);
	assert_int_equal(stat(bak, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);

	/* The next save keeps the version before it. */
	const char third[] = "job: extension\nconfig:\n  name: third\n";
	stamp_of(f->job, &s);
	assert_int_equal(save_file(f->job, third, strlen(third), &s, SAVE_BACKUP, true, &e), 0);
	assert_content(f->job, third);
	assert_content(bak, NEW);
	/* Without the flag the backup is left alone. */
	stamp_of(f->job, &s);
	assert_int_equal(save_file(f->job, OLD, strlen(OLD), &s, 0, true, &e), 0);
	assert_content(bak, NEW);
	assert_true(only_entries(f->dir, "job.yaml", "job.yaml~", NULL));
}

static void test_changed_on_disk(void **state)
{
	struct fx *f = *state;
	struct save_stamp s;
	struct err e;
	const char other[] = "job: extension\nconfig:\n  name: edited elsewhere\n";
	put(f->job, OLD, 0644);
	stamp_of(f->job, &s);
	put(f->job, other, 0644);
	err_clear(&e);
	assert_int_equal(save_file(f->job, NEW, strlen(NEW), &s, SAVE_BACKUP, true, &e),
			 ERR_TEMPFAIL);
	assert_int_equal(e.code, ERR_TEMPFAIL);
	assert_string_equal(e.file, f->job);
	assert_non_null(strstr(e.msg, "changed on disk since it was loaded"));
	assert_content(f->job, other);
	assert_true(only_entries(f->dir, "job.yaml", NULL));

	/* Same size, only the modification time differs (nanoseconds count). */
	put(f->job, OLD, 0644);
	stamp_of(f->job, &s);
	struct timespec ts[2] = { { 0, UTIME_OMIT }, { (time_t)s.mtime_sec, s.mtime_nsec + 1 } };
	if (ts[1].tv_nsec >= 1000000000L)
		ts[1] = (struct timespec){ ts[1].tv_sec + 1, 0 };
	assert_int_equal(utimensat(AT_FDCWD, f->job, ts, 0), 0);
	assert_int_equal(save_file(f->job, NEW, strlen(NEW), &s, 0, true, &e), ERR_TEMPFAIL);
	assert_content(f->job, OLD);

	/* Removed since it was loaded: not silently re-created. */
	stamp_of(f->job, &s);
	assert_int_equal(unlink(f->job), 0);
	assert_int_equal(save_file(f->job, NEW, strlen(NEW), &s, 0, true, &e), ERR_TEMPFAIL);
	assert_null(get(f->job));

	/* Missing when loaded, created since. */
	stamp_of(f->job, &s);
	put(f->job, other, 0644);
	assert_int_equal(save_file(f->job, NEW, strlen(NEW), &s, 0, true, &e), ERR_TEMPFAIL);
	assert_content(f->job, other);
	assert_true(only_entries(f->dir, "job.yaml", NULL));
}

static void test_force(void **state)
{
	struct fx *f = *state;
	struct save_stamp s;
	struct err e;
	put(f->job, OLD, 0644);
	stamp_of(f->job, &s);
	put(f->job, "job: extension\nconfig:\n  name: edited elsewhere\n", 0644);
	assert_int_equal(save_file(f->job, NEW, strlen(NEW), &s, 0, true, &e), ERR_TEMPFAIL);
	assert_int_equal(save_file(f->job, NEW, strlen(NEW), &s, SAVE_FORCE, true, &e), 0);
	assert_content(f->job, NEW);
	assert_true(only_entries(f->dir, "job.yaml", NULL));
}

static void test_invalid_yaml(void **state)
{
	struct fx *f = *state;
	struct save_stamp s;
	struct err e;
	const char bad[] = "job: extension\nconfig:\n  name: [1, 2\n  other: x\n";
	put(f->job, OLD, 0644);
	stamp_of(f->job, &s);
	err_clear(&e);
	assert_int_equal(save_file(f->job, bad, strlen(bad), &s, SAVE_BACKUP, true, &e), ERR_DATA);
	assert_string_equal(e.file, f->job);
	assert_true(e.line >= 3);
	assert_true(e.col > 0);
	assert_non_null(strstr(e.msg, "not valid YAML"));
	assert_content(f->job, OLD);
	assert_true(only_entries(f->dir, "job.yaml", NULL));
	/* The check is what refused it: without it the bytes are written as given. */
	assert_int_equal(save_file(f->job, bad, strlen(bad), &s, 0, false, &e), 0);
	assert_content(f->job, bad);
}

static void test_not_regular_or_no_dir(void **state)
{
	struct fx *f = *state;
	struct err e;
	char path[1300];
	assert_int_equal(mkdir(f->job, 0755), 0);
	assert_int_equal(save_file(f->job, NEW, strlen(NEW), NULL, 0, true, &e), ERR_CANTCREAT);
	assert_non_null(strstr(e.msg, "not a regular file"));
	snprintf(path, sizeof path, "%s/missing/job.yaml", f->dir);
	assert_int_equal(save_file(path, NEW, strlen(NEW), NULL, 0, true, &e), ERR_CANTCREAT);
	assert_string_equal(e.file, path);
	assert_non_null(strstr(e.msg, "directory"));
	assert_true(only_entries(f->dir, "job.yaml", NULL));
}

/* Runs fn in a child; as root the child first becomes an unprivileged user, so that
 * permission checks apply. Returns the child's exit status, or -1 when it did not exit;
 * 90 and 91 mean the child could not become that user or reach the directory. */
static int run_as_user(int (*fn)(const char *, const char *), const char *dir, const char *job)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		if (geteuid() == 0 && (setgid(NOBODY) != 0 || setuid(NOBODY) != 0))
			_exit(90);
		if (access(dir, X_OK) != 0)
			_exit(91);
		_exit(fn(dir, job));
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static int try_save_denied(const char *dir, const char *job)
{
	struct err e;
	err_clear(&e);
	int rc = save_file(job, NEW, strlen(NEW), NULL, SAVE_BACKUP, true, &e);
	if (rc != ERR_CANTCREAT)
		return 1;
	if (!strstr(e.msg, "permission denied") || strcmp(e.file, job) != 0)
		return 2;
	return 0;
}

static void test_readonly_dir_permissions(void **state)
{
	struct fx *f = *state;
	char ro[1300], job[1400];
	snprintf(ro, sizeof ro, "%s/ro", f->dir);
	snprintf(job, sizeof job, "%s/job.yaml", ro);
	assert_int_equal(chmod(f->dir, 0755), 0);
	assert_int_equal(mkdir(ro, 0755), 0);
	put(job, OLD, 0666);
	assert_int_equal(chmod(ro, 0555), 0);
	int rc = run_as_user(try_save_denied, ro, job);
	if (rc == 90 || rc == 91)
		skip();
	assert_int_equal(rc, 0);
	assert_content(job, OLD);
	assert_true(only_entries(ro, "job.yaml", NULL));
}

static int try_save_foreign(const char *dir, const char *job)
{
	struct err e;
	err_clear(&e);
	if (save_file(job, NEW, strlen(NEW), NULL, 0, true, &e) != ERR_CANTCREAT)
		return 1;
	return strstr(e.msg, "owner") ? 0 : 2;
}

/* Someone else's file in a directory we may write: saving would make the file ours, so no. */
static void test_foreign_owner_refused(void **state)
{
	struct fx *f = *state;
	if (geteuid() != 0)
		skip();
	assert_int_equal(chmod(f->dir, 0777), 0);
	put(f->job, OLD, 0666);
	int rc = run_as_user(try_save_foreign, f->dir, f->job);
	if (rc == 90 || rc == 91)
		skip();
	assert_int_equal(rc, 0);
	assert_content(f->job, OLD);
	assert_true(only_entries(f->dir, "job.yaml", NULL));
}

/* Mounts a tmpfs at DIR/mnt (root only); skips the test when that is not possible. */
static bool mount_tmpfs(struct fx *f, const char *opts, char *mnt, size_t size)
{
	snprintf(mnt, size, "%s/mnt", f->dir);
	if (geteuid() != 0 || mkdir(mnt, 0755) != 0)
		return false;
	if (mount("tmpfs", mnt, "tmpfs", 0, opts) != 0)
		return false;
	f->mounted = true;
	return true;
}

static void test_readonly_filesystem(void **state)
{
	struct fx *f = *state;
	struct save_stamp s;
	struct err e;
	char mnt[1300], job[1400];
	if (!mount_tmpfs(f, "size=1m", mnt, sizeof mnt))
		skip();
	snprintf(job, sizeof job, "%s/job.yaml", mnt);
	put(job, OLD, 0644);
	stamp_of(job, &s);
	if (mount(NULL, mnt, NULL, MS_REMOUNT | MS_RDONLY, NULL) != 0)
		skip();
	err_clear(&e);
	assert_int_equal(save_file(job, NEW, strlen(NEW), &s, SAVE_BACKUP, true, &e),
			 ERR_CANTCREAT);
	assert_string_equal(e.file, job);
	assert_non_null(strstr(e.msg, "read-only"));
	assert_content(job, OLD);
	assert_true(only_entries(mnt, "job.yaml", NULL));
	assert_int_equal(umount2(mnt, 0), 0);
	f->mounted = false;
}

/* D26: SIGHUP with unsaved edits in a read-only folder: the emergency save goes to
 * $XDG_STATE_HOME/oomfix/, a line on stderr says where, and the name is found again for recovery. */
static void test_emergency_readonly_D26(void **state)
{
	struct fx *f = *state;
	char mnt[1300], job[1400], state_dir[1300], errf[1300];
	if (!mount_tmpfs(f, "size=1m", mnt, sizeof mnt))
		skip();
	snprintf(job, sizeof job, "%s/job.yaml", mnt);
	put(job, OLD, 0644);
	if (mount(NULL, mnt, NULL, MS_REMOUNT | MS_RDONLY, NULL) != 0)
		skip();
	snprintf(state_dir, sizeof state_dir, "%s/state", f->dir);
	setenv("XDG_STATE_HOME", state_dir, 1);
	save_emergency_prepare(job);

	snprintf(errf, sizeof errf, "%s/stderr", f->dir);
	fflush(stderr);
	int keep = dup(STDERR_FILENO), fd = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(keep >= 0 && fd >= 0);
	dup2(fd, STDERR_FILENO);
	close(fd);
	int rc = save_emergency(job, NEW, strlen(NEW));
	dup2(keep, STDERR_FILENO);
	close(keep);
	assert_int_equal(rc, 0);

	char want[3000];
	snprintf(want, sizeof want, "%s/oomfix/", state_dir);
	size_t off = strlen(want);
	for (const char *p = job; *p && off + 1 < sizeof want; p++)
		want[off++] = *p == '/' ? '%' : *p;
	snprintf(want + off, sizeof want - off, ".oomfix-save");
	assert_content(want, NEW);
	FILE *fp = fopen(errf, "r");
	char said[4096] = "";
	assert_non_null(fp);
	size_t n = fread(said, 1, sizeof said - 1, fp);
	said[n] = '\0';
	fclose(fp);
	assert_non_null(strstr(said, want));
	char *name = save_emergency_name(job);
	assert_string_equal(name, want);
	free(name);
	assert_content(job, OLD);
	unsetenv("XDG_STATE_HOME");
	assert_int_equal(umount2(mnt, 0), 0);
	f->mounted = false;
}

static void test_disk_full(void **state)
{
	struct fx *f = *state;
	struct save_stamp s;
	struct err e;
	char mnt[1300], job[1400], filler[1400];
	if (!mount_tmpfs(f, "size=64k", mnt, sizeof mnt))
		skip();
	snprintf(job, sizeof job, "%s/job.yaml", mnt);
	snprintf(filler, sizeof filler, "%s/filler", mnt);
	put(job, OLD, 0644);
	int fd = open(filler, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	char block[1024];
	memset(block, 'x', sizeof block);
	while (write(fd, block, sizeof block) > 0)
		;
	assert_int_equal(errno, ENOSPC);
	close(fd);

	/* A valid YAML text larger than the whole file system. */
	size_t cap = 96 * 1024, len = 0;
	char *big = malloc(cap + 64);
	while (len < cap)
		len += (size_t)sprintf(big + len, "key_%zu: value\n", len);
	stamp_of(job, &s);
	err_clear(&e);
	int rc = save_file(job, big, len, &s, 0, true, &e);
	free(big);
	assert_int_equal(rc, ERR_IOERR);
	assert_string_equal(e.file, job);
	assert_non_null(strstr(e.msg, "no space left on the device"));
	assert_content(job, OLD);
	assert_true(only_entries(mnt, "job.yaml", "filler", NULL));
	assert_int_equal(umount2(mnt, 0), 0);
	f->mounted = false;
}

static int try_save_fsize(const char *dir, const char *job)
{
	struct rlimit rl = { 4096, 4096 };
	struct err e;
	if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
		return 10;
	size_t cap = 64 * 1024, len = 0;
	char *big = malloc(cap + 64);
	while (len < cap)
		len += (size_t)sprintf(big + len, "key_%zu: value\n", len);
	err_clear(&e);
	int rc = save_file(job, big, len, NULL, 0, true, &e);
	free(big);
	if (rc != ERR_IOERR)
		return 1;
	return strstr(e.msg, "file too large") ? 0 : 2;
}

/* A file-size limit must give an error, not kill the program with SIGXFSZ. */
static void test_file_size_limit(void **state)
{
	struct fx *f = *state;
	put(f->job, OLD, 0644);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGXFSZ, SIG_DFL);
		_exit(try_save_fsize(f->dir, f->job));
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (WIFSIGNALED(st))
		fail_msg("the save was killed by signal %d", WTERMSIG(st));
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_content(f->job, OLD);
	assert_true(only_entries(f->dir, "job.yaml", NULL));
}

static void test_emergency(void **state)
{
	struct fx *f = *state;
	struct stat st;
	char want[1300];
	snprintf(want, sizeof want, "%s.oomfix-save", f->job);
	char *name = save_emergency_name(f->job);
	assert_non_null(name);
	assert_string_equal(name, want);
	put(f->job, OLD, 0644);

	errno = 1234;
	assert_int_equal(save_emergency(f->job, NEW, strlen(NEW)), 0);
	assert_int_equal(errno, 1234);
	assert_content(name, NEW);
	assert_int_equal(stat(name, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_content(f->job, OLD);
	/* A later emergency save replaces the earlier one completely. */
	assert_int_equal(save_emergency(f->job, "x: 1\n", 5), 0);
	assert_content(name, "x: 1\n");

	/* A symlink planted under the emergency name is not written through. */
	char victim[1300];
	snprintf(victim, sizeof victim, "%s/victim", f->dir);
	put(victim, "keep\n", 0644);
	assert_int_equal(unlink(name), 0);
	assert_int_equal(symlink(victim, name), 0);
	assert_int_equal(save_emergency(f->job, NEW, strlen(NEW)), -1);
	assert_content(victim, "keep\n");
	free(name);
}

static const char *sig_path;

static void on_term(int sig)
{
	(void)sig;
	_exit(save_emergency(sig_path, NEW, strlen(NEW)) == 0 ? 0 : 1);
}

/* The way the program uses it: from a SIGTERM handler. */
static void test_emergency_from_signal(void **state)
{
	struct fx *f = *state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	sig_path = f->job;
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		struct sigaction sa = { .sa_handler = on_term };
		sigemptyset(&sa.sa_mask);
		sigaction(SIGTERM, &sa, NULL);
		close(p[0]);
		if (write(p[1], "r", 1) != 1)
			_exit(3);
		for (;;)
			pause();
	}
	close(p[1]);
	char c;
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	assert_int_equal(kill(pid, SIGTERM), 0);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	char *name = save_emergency_name(f->job);
	assert_content(name, NEW);
	free(name);
}

/* True when s starts with a local time like 2024-05-01T12:34:56+09:00. */
static bool is_iso8601(const char *s)
{
	const char *shape = "dddd-dd-ddTdd:dd:dd+dd:dd";
	for (size_t i = 0; shape[i]; i++) {
		char c = s[i];
		bool ok = shape[i] == 'd'   ? (c >= '0' && c <= '9')
			  : shape[i] == '+' ? (c == '+' || c == '-')
					    : c == shape[i];
		if (!ok)
			return false;
	}
	return s[strlen(shape)] == '\n';
}

/* The journal read back (D3: the trail of tries takes the fixes after each run from it): every
 * entry in order, its time, fixes, note and changes as they were given, a path with a backtick
 * included. */
static void test_journal_entries_D3(void **state)
{
	struct fx *f = *state;
	struct err e;
	const char *fixes[] = { "low_vram" };
	const char *changes[] = { "config.process[0].model.low_vram: false → true" };
	const char *odd[] = { "config.process[0].a`b: 1 → 2" };
	struct save_journal_entry *v = NULL;
	size_t n = 9;
	assert_int_equal(save_journal_entries(f->job, &v, &n, &e), 0);
	assert_int_equal(n, 0);
	time_t before = time(NULL);
	assert_int_equal(save_journal_note(f->job, "oomfix retry, try 1; its log: x/1.log", fixes, 1,
					   changes, 1, &e), 0);
	assert_int_equal(save_journal(f->job, NULL, 0, odd, 1, &e), 0);
	assert_int_equal(save_journal_entries(f->job, &v, &n, &e), 0);
	assert_int_equal(n, 2);
	assert_true(v[0].when >= before - 1 && v[0].when <= time(NULL) + 1);
	assert_int_equal(v[0].nfixes, 1);
	assert_string_equal(v[0].fixes[0], "low_vram");
	assert_string_equal(v[0].note, "oomfix retry, try 1; its log: x/1.log");
	assert_int_equal(v[0].nchanges, 1);
	assert_string_equal(v[0].changes[0], changes[0]);
	assert_int_equal(v[1].nfixes, 0);
	assert_null(v[1].note);
	assert_int_equal(v[1].nchanges, 1);
	assert_string_equal(v[1].changes[0], odd[0]);
	save_journal_entries_free(v, n);
}

static void test_journal(void **state)
{
	struct fx *f = *state;
	struct err e;
	const char *fixes[] = { "batch_size", "gradient_checkpointing" };
	const char *changes[] = {
		"config.process[0].train.batch_size: 4 → 1",
		"config.process[0].train.gradient_accumulation: 1 → 4",
	};
	const char *manual[] = { "config.process[0].sample.prompts[0]: \"a\nb\" → \"c\"" };
	put(f->job, OLD, 0644);
	assert_int_equal(save_journal(f->job, fixes, 2, changes, 2, &e), 0);
	assert_int_equal(save_journal(f->job, NULL, 0, manual, 1, &e), 0);

	char *name = save_journal_name(f->job);
	char want[1300];
	snprintf(want, sizeof want, "%s.oomfix.md", f->job);
	assert_string_equal(name, want);
	char *j = get(name);
	assert_non_null(j);

	/* One title line, first. */
	assert_true(j[0] == '#' && j[1] == ' ');
	assert_non_null(strstr(j, "job.yaml"));
	int titles = 0, headings = 0;
	const char *h[2] = { NULL, NULL };
	for (const char *p = j; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (!strncmp(p, "# ", 2))
			titles++;
		if (!strncmp(p, "## ", 3)) {
			if (headings < 2)
				h[headings] = p;
			headings++;
			assert_true(is_iso8601(p + 3));
		}
	}
	assert_int_equal(titles, 1);
	assert_int_equal(headings, 2);

	/* The first entry: its fixes and changes, before the second heading. */
	const char *fx1 = strstr(j, "\nFixes: batch_size, gradient_checkpointing\n");
	const char *c1 = strstr(j, "\n- `config.process[0].train.batch_size`: 4 → 1\n");
	const char *c2 = strstr(j, "\n- `config.process[0].train.gradient_accumulation`: 1 → 4\n");
	assert_true(fx1 && c1 && c2);
	assert_true(h[0] < fx1 && fx1 < c1 && c1 < c2 && c2 < h[1]);
	/* The second: manual edits, the newline in the value made visible. */
	const char *m = strstr(j, "\nManual edits\n");
	const char *c3 = strstr(j, "\n- `config.process[0].sample.prompts[0]`: \"a\\nb\" → \"c\"\n");
	assert_true(m && c3 && h[1] < m && m < c3);
	assert_null(strstr(h[1], "Fixes:"));
	free(j);
	free(name);
}

/* The mode of path (permission bits), or -1. */
static int mode_of(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 ? (int)(st.st_mode & 07777) : -1;
}

static int journal_one(const char *job, struct err *e)
{
	const char *changes[] = { "config.process[0].train.batch_size: 4 → 1" };
	err_clear(e);
	return save_journal(job, NULL, 0, changes, 1, e);
}

/* Issue 34: the journal holds every old and new value, so it is never more readable than its
 * job — a new one gets the job's bits, an older wider one is narrowed — whatever the umask. */
static void test_journal_mode_of_job(void **state)
{
	struct fx *f = *state;
	struct err e;
	char *name = save_journal_name(f->job);
	mode_t old = umask(022);
	const mode_t modes[] = { 0600, 0640, 0644, 0400 };
	const int want[] = { 0600, 0640, 0644, 0600 };
	for (size_t i = 0; i < sizeof modes / sizeof *modes; i++) {
		unlink(name);
		put(f->job, OLD, modes[i]);
		assert_int_equal(journal_one(f->job, &e), 0);
		assert_int_equal(mode_of(name), want[i]);
		/* a second entry is appended to the same private file */
		assert_int_equal(journal_one(f->job, &e), 0);
		assert_int_equal(mode_of(name), want[i]);
	}
	/* A journal left wider than the job (they were once all 0644) is narrowed, never widened. */
	put(f->job, OLD, 0600);
	assert_int_equal(chmod(name, 0644), 0);
	assert_int_equal(journal_one(f->job, &e), 0);
	assert_int_equal(mode_of(name), 0600);
	put(f->job, OLD, 0664);
	assert_int_equal(journal_one(f->job, &e), 0);
	assert_int_equal(mode_of(name), 0600);
	/* No job file (a web UI job's row is in its database): the narrowest. */
	unlink(name);
	unlink(f->job);
	assert_int_equal(journal_one(f->job, &e), 0);
	assert_int_equal(mode_of(name), 0600);
	umask(old);
	free(name);
}

/* Issue 34: a symbolic link, a hard link or a FIFO planted where the journal goes is refused
 * with the journal's name; the file it leads to is untouched. */
static void test_journal_planted_link(void **state)
{
	struct fx *f = *state;
	struct err e;
	char victim[1300], *name = save_journal_name(f->job);
	snprintf(victim, sizeof victim, "%s/victim", f->dir);
	put(f->job, OLD, 0600);
	put(victim, "keep\n", 0644);

	assert_int_equal(symlink("victim", name), 0);
	assert_int_equal(journal_one(f->job, &e), ERR_CANTCREAT);
	assert_string_equal(e.file, name);
	assert_non_null(strstr(e.msg, "symbolic link"));
	assert_content(victim, "keep\n");
	assert_int_equal(mode_of(victim), 0644);

	assert_int_equal(unlink(name), 0);
	assert_int_equal(link(victim, name), 0);
	assert_int_equal(journal_one(f->job, &e), ERR_CANTCREAT);
	assert_string_equal(e.file, name);
	assert_content(victim, "keep\n");
	assert_int_equal(mode_of(victim), 0644);

	/* A FIFO with no reader: refused at once, not waited on (the alarm fails a hang). */
	assert_int_equal(unlink(name), 0);
	assert_int_equal(mkfifo(name, 0644), 0);
	alarm(10);
	assert_int_equal(journal_one(f->job, &e), ERR_CANTCREAT);
	alarm(0);
	assert_string_equal(e.file, name);
	free(name);
}

/* Where the emergency save of f->job falls back to, with $XDG_STATE_HOME in the test's folder
 * (set here, and prepared: the user's own state folder is never written by a test). */
static void fallback_name(struct fx *f, char *out, size_t size)
{
	char state_dir[1200];
	snprintf(state_dir, sizeof state_dir, "%s/state", f->dir);
	setenv("XDG_STATE_HOME", state_dir, 1);
	save_emergency_prepare(f->job);
	char *real = realpath(f->dir, NULL);
	assert_non_null(real);
	snprintf(out, size, "%s/oomfix/%s/job.yaml.oomfix-save", state_dir, real);
	for (char *p = out + strlen(state_dir) + strlen("/oomfix/"); *p; p++)
		if (*p == '/')
			*p = '%';
	free(real);
}

/* Runs save_emergency with its stderr line (where the edits went) kept out of the TAP. */
static int emergency_quiet(const char *job)
{
	fflush(stderr);
	int keep = dup(STDERR_FILENO), null = open("/dev/null", O_WRONLY);
	dup2(null, STDERR_FILENO);
	int rc = save_emergency(job, NEW, strlen(NEW));
	dup2(keep, STDERR_FILENO);
	close(keep);
	close(null);
	return rc;
}

/* The emergency save writes only into a file that is the user's alone: an older wider one is
 * narrowed; a hard link to another file is refused like a folder that refuses (the edits go
 * to the state folder), the file it leads to untouched. */
static void test_emergency_planted_file(void **state)
{
	struct fx *f = *state;
	char victim[1300], fallback[1400], *name = save_emergency_name(f->job);
	snprintf(victim, sizeof victim, "%s/victim", f->dir);
	fallback_name(f, fallback, sizeof fallback);
	put(f->job, OLD, 0600);
	put(name, "older emergency save\n", 0644);
	assert_int_equal(emergency_quiet(f->job), 0);
	assert_content(name, NEW);
	assert_int_equal(mode_of(name), 0600);

	put(victim, "keep\n", 0644);
	assert_int_equal(unlink(name), 0);
	assert_int_equal(link(victim, name), 0);
	assert_int_equal(emergency_quiet(f->job), 0);
	unsetenv("XDG_STATE_HOME");
	assert_content(victim, "keep\n");
	assert_content(fallback, NEW);
	assert_int_equal(mode_of(fallback), 0600);
	free(name);
}

/* Root only: an emergency file someone else left beside the job (mode 0666, so that they may
 * read what lands in it) is not written; the edits go to the state folder instead. */
static void test_emergency_foreign_file(void **state)
{
	struct fx *f = *state;
	if (geteuid() != 0)
		skip();
	char fallback[1400], *name = save_emergency_name(f->job);
	fallback_name(f, fallback, sizeof fallback);
	put(f->job, OLD, 0600);
	put(name, "theirs\n", 0666);
	assert_int_equal(chown(name, NOBODY, NOBODY), 0);
	int rc = emergency_quiet(f->job);
	unsetenv("XDG_STATE_HOME");
	assert_int_equal(rc, 0);
	assert_content(name, "theirs\n");
	assert_content(fallback, NEW);
	assert_int_equal(mode_of(fallback), 0600);
	/* the folders it made are the user's alone */
	char dir[1300];
	snprintf(dir, sizeof dir, "%s/state/oomfix", f->dir);
	assert_int_equal(mode_of(dir), 0700);
	free(name);
}

/* save_private: a link planted under the name is replaced, never written through, and the file
 * has exactly the mode asked; save_output narrows a new output to the job's bits. */
static void test_private_and_output(void **state)
{
	struct fx *f = *state;
	struct err e;
	char victim[1300], kept[1300], out[1300];
	snprintf(victim, sizeof victim, "%s/victim", f->dir);
	snprintf(kept, sizeof kept, "%s/kept", f->dir);
	snprintf(out, sizeof out, "%s/out.yaml", f->dir);
	put(victim, "keep\n", 0644);
	assert_int_equal(symlink("victim", kept), 0);
	assert_int_equal(save_private(kept, NEW, strlen(NEW), 0640, &e), 0);
	assert_content(victim, "keep\n");
	assert_content(kept, NEW);
	assert_int_equal(mode_of(kept), 0640);
	assert_true(only_entries(f->dir, "victim", "kept", NULL));

	mode_t old = umask(022);
	put(f->job, OLD, 0600);
	assert_int_equal(save_output(out, NEW, strlen(NEW), f->job, &e), 0);
	assert_int_equal(mode_of(out), 0600);
	unlink(out);
	put(f->job, OLD, 0664);
	assert_int_equal(save_output(out, NEW, strlen(NEW), f->job, &e), 0);
	assert_int_equal(mode_of(out), 0644);
	umask(old);
}

int main(void)
{
	/* Root's test mounts stay private to this process and vanish with it, even on a crash. */
	if (geteuid() == 0 && unshare(CLONE_NEWNS) == 0)
		mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_stamp),
		T(test_stamp_rewritten_in_place),
		T(test_stamp_renamed_over),
		T(test_stamp_missing),
		T(test_stamp_grown),
		T(test_saves_content),
		T(test_new_file_mode),
		T(test_mode_kept),
		T(test_owner_kept),
		T(test_symlink_followed),
		T(test_backup),
		T(test_changed_on_disk),
		T(test_force),
		T(test_invalid_yaml),
		T(test_not_regular_or_no_dir),
		T(test_readonly_dir_permissions),
		T(test_foreign_owner_refused),
		T(test_readonly_filesystem),
		T(test_disk_full),
		T(test_file_size_limit),
		T(test_emergency),
		T(test_emergency_from_signal),
		T(test_emergency_readonly_D26),
		T(test_journal),
		T(test_journal_entries_D3),
		T(test_journal_mode_of_job),
		T(test_journal_planted_link),
		T(test_emergency_planted_file),
		T(test_emergency_foreign_file),
		T(test_private_and_output),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
