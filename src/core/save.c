/* save.c — saving that never loses the user's file (SPEC §5, NOTES "Saving").
 *
 * The new text goes to a temporary file in the target's own directory (so the final rename is
 * atomic), is flushed, gets the original's owner and mode, and only then replaces the original
 * — after a last check that nobody changed the file since it was loaded. Until that rename the
 * original is untouched; every failure path removes the temporary file. */
#include "oomfix/save.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <yaml.h>

#include "oomfix/buf.h"
#include "oomfix/i18n.h"

/* Why a system call failed, in words a user can act on. */
static const char *why(int errnum)
{
	switch (errnum) {
	case ENOSPC:
		return _("no space left on the device");
	case EDQUOT:
		return _("disk quota exceeded");
	case EROFS:
		return _("the file system is read-only");
	case EACCES:
	case EPERM:
		return _("permission denied");
	case EFBIG:
		return _("file too large (the file size limit was reached)");
	default:
		return strerror(errnum);
	}
}

/* Writes everything, through short writes and interrupted calls. Returns 0 or -1 (errno). */
static int write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* A malloc'd concatenation of a, b and c; NULL when out of memory. */
static char *join3(const char *a, const char *b, const char *c)
{
	size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
	char *s = malloc(la + lb + lc + 1);
	if (!s)
		return NULL;
	memcpy(s, a, la);
	memcpy(s + la, b, lb);
	memcpy(s + la + lb, c, lc + 1);
	return s;
}

/* The directory part of a path (malloc'd): "." when there is none, "/" for the root. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static int oom(struct err *e, const char *path)
{
	return err_set(e, ERR_SOFTWARE, path, 0, 0, "%s", _("out of memory"));
}

void save_stamp_of_stat(const struct stat *st, struct save_stamp *out)
{
	memset(out, 0, sizeof *out);
	out->exists = true;
	out->dev = st->st_dev;
	out->ino = st->st_ino;
	out->size = st->st_size;
	out->mtime_sec = (long long)st->st_mtim.tv_sec;
	out->mtime_nsec = (long long)st->st_mtim.tv_nsec;
}

int save_stamp(const char *path, struct save_stamp *out, struct err *e)
{
	struct stat st;
	memset(out, 0, sizeof *out);
	if (stat(path, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		return err_set(e, ERR_NOINPUT, path, 0, 0, _("cannot examine the file: %s"),
			       why(errno));
	}
	save_stamp_of_stat(&st, out);
	return 0;
}

int save_stamp_fd(int fd, struct save_stamp *out)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -1;
	save_stamp_of_stat(&st, out);
	return 0;
}

bool save_stamp_same_file(const struct save_stamp *a, const struct save_stamp *b)
{
	return a->exists && b->exists && a->dev == b->dev && a->ino == b->ino;
}

bool save_stamp_same(const struct save_stamp *a, const struct save_stamp *b)
{
	if (!a->exists || !b->exists)
		return a->exists == b->exists;
	return save_stamp_same_file(a, b) && a->size == b->size &&
	       a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec;
}

/* Re-stats the target and refuses when it is not what was loaded. */
static int check_unchanged(const char *path, const char *target, const struct save_stamp *loaded,
			   struct err *e)
{
	struct stat st;
	bool present = stat(target, &st) == 0;
	if (!present && errno != ENOENT)
		return err_set(e, ERR_IOERR, path, 0, 0, _("cannot examine the file: %s"),
			       why(errno));
	struct save_stamp now = { 0 };
	if (present)
		save_stamp_of_stat(&st, &now);
	if (!save_stamp_same(loaded, &now))
		return err_set(e, ERR_TEMPFAIL, path, 0, 0, "%s",
			       present ? _("changed on disk since it was loaded; not saved "
					   "(save again with force to overwrite it)")
				       : _("was removed from disk since it was loaded; not saved "
					   "(save again with force to create it)"));
	return 0;
}

/* Parses the whole text with libyaml, to never save something that does not load again. */
static int yaml_check(const char *path, const char *text, size_t len, struct err *e)
{
	yaml_parser_t p;
	int rc = 0;
	if (!yaml_parser_initialize(&p))
		return oom(e, path);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	for (;;) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&p, &ev)) {
			rc = err_set(e, ERR_DATA, path, (int)p.problem_mark.line + 1,
				     (int)p.problem_mark.column + 1,
				     _("not saved: the new text is not valid YAML (%s)"),
				     p.problem ? p.problem : _("parse error"));
			break;
		}
		bool end = ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
		if (end)
			break;
	}
	yaml_parser_delete(&p);
	return rc;
}

/* A file-size limit must surface as EFBIG from write(2), not kill the program mid-save.
 * Only the default disposition is replaced: a handler someone installed is theirs. */
static void ignore_sigxfsz(void)
{
	struct sigaction sa;
	if (sigaction(SIGXFSZ, NULL, &sa) == 0 && !(sa.sa_flags & SA_SIGINFO) &&
	    sa.sa_handler == SIG_DFL)
		signal(SIGXFSZ, SIG_IGN);
}

/* Follows symlinks to the file a save has to replace (malloc'd in *out). A path that does
 * not exist yet — or a link pointing nowhere — resolves to the absolute name it will be
 * created under, so its directory is the real one. */
static int resolve_target(const char *path, char **out, struct err *e)
{
	char *cur = strdup(path);
	*out = NULL;
	if (!cur)
		return oom(e, path);
	for (int hops = 0;; hops++) {
		struct stat st;
		if (hops > 40) {
			free(cur);
			return err_set(e, ERR_CANTCREAT, path, 0, 0, "%s",
				       _("too many levels of symbolic links"));
		}
		if (lstat(cur, &st) < 0) {
			int errnum = errno;
			if (errnum != ENOENT) {
				free(cur);
				return err_set(e, ERR_CANTCREAT, path, 0, 0,
					       _("cannot examine the file: %s"), why(errnum));
			}
			/* Not there yet: the file will be created in the real directory. */
			char *dir = dir_of(cur), *rdir = dir ? realpath(dir, NULL) : NULL;
			errnum = errno;
			if (!rdir) {
				int rc = dir ? err_set(e, ERR_CANTCREAT, path, 0, 0,
						       _("cannot use the directory %s: %s"), dir,
						       why(errnum))
					     : oom(e, path);
				free(dir);
				free(cur);
				return rc;
			}
			*out = join3(rdir, strcmp(rdir, "/") ? "/" : "", base_of(cur));
			free(rdir);
			free(dir);
			free(cur);
			return *out ? 0 : oom(e, path);
		}
		if (!S_ISLNK(st.st_mode)) {
			char *r = realpath(cur, NULL);
			int errnum = errno;
			free(cur);
			if (!r)
				return err_set(e, ERR_CANTCREAT, path, 0, 0,
					       _("cannot resolve the file name: %s"), why(errnum));
			*out = r;
			return 0;
		}
		char link[PATH_MAX];
		ssize_t n = readlink(cur, link, sizeof link - 1);
		if (n < 0) {
			int errnum = errno;
			free(cur);
			return err_set(e, ERR_CANTCREAT, path, 0, 0,
				       _("cannot follow the symbolic link: %s"), why(errnum));
		}
		link[n] = '\0';
		char *next;
		if (link[0] == '/') {
			next = strdup(link);
		} else {
			char *dir = dir_of(cur);
			next = dir ? join3(dir, "/", link) : NULL;
			free(dir);
		}
		free(cur);
		if (!next)
			return oom(e, path);
		cur = next;
	}
}

/* The umask, read without changing it where the kernel shows it (Linux 4.7+), since umask(2)
 * can only be read by setting it. */
static mode_t umask_now(void)
{
	mode_t mask = 022;
	bool found = false;
	FILE *f = fopen("/proc/self/status", "re");
	if (f) {
		char line[256];
		unsigned m;
		while (fgets(line, sizeof line, f))
			if (sscanf(line, "Umask: %o", &m) == 1) {
				mask = (mode_t)m;
				found = true;
				break;
			}
		fclose(f);
	}
	if (!found) {
		mask = umask(022);
		umask(mask);
	}
	return mask;
}

/* The mode a new file gets: 0644 less the umask. */
static mode_t new_file_mode(void)
{
	return 0644 & ~umask_now();
}

mode_t save_mode_for(const char *job)
{
	struct stat st;
	/* No job file to go by (a web UI job lives in its database): the narrowest. */
	if (!job || stat(job, &st) != 0 || !S_ISREG(st.st_mode))
		return 0600;
	/* Read and write bits only: nothing kept beside a job is run or set-id. The owner's own
	 * are kept even from a read-only job, or the next entry could not be appended. */
	return ((st.st_mode & 0666) & ~umask_now()) | S_IRUSR | S_IWUSR;
}

/* Gives the new version the original's owner and mode. When we may not chown (not root), a
 * file we already own is fine; saving someone else's file would silently make it ours, so
 * that is refused. */
static int copy_owner_mode(int fd, const struct stat *orig, const char *path, struct err *e)
{
	if (fchown(fd, orig->st_uid, orig->st_gid) < 0) {
		int errnum = errno;
		struct stat now;
		if (fstat(fd, &now) < 0 || now.st_uid != orig->st_uid)
			return err_set(e, ERR_CANTCREAT, path, 0, 0,
				       _("not saved: cannot give the new version the original's owner "
					 "(user %ld): %s"),
				       (long)orig->st_uid, why(errnum));
		/* Owner matches; the group may not be ours to give, so it may change. */
		if (now.st_gid != orig->st_gid && fchown(fd, (uid_t)-1, orig->st_gid) < 0)
			errno = 0;
	}
	if (fchmod(fd, orig->st_mode & 07777) < 0)
		return err_set(e, ERR_CANTCREAT, path, 0, 0,
			       _("not saved: cannot set the file's permissions: %s"), why(errno));
	return 0;
}

/* A template for mkstemp in `dir`, hidden, named after the file; the name part is kept short
 * enough that the result stays within NAME_MAX. */
static char *temp_template(const char *dir, const char *base)
{
	char name[NAME_MAX + 1];
	snprintf(name, sizeof name, ".%.200s.oomfix-XXXXXX", base);
	return join3(dir, strcmp(dir, "/") ? "/" : "", name);
}

/* Copies `target` into the new file fd (for a backup where a hard link is not possible). */
static int copy_into(int fd, const char *target)
{
	int src = open(target, O_RDONLY | O_CLOEXEC);
	if (src < 0)
		return -1;
	char buf[65536];
	for (;;) {
		ssize_t n = read(src, buf, sizeof buf);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (n == 0) {
			close(src);
			return 0;
		}
		if (write_all(fd, buf, (size_t)n) < 0)
			break;
	}
	int errnum = errno;
	close(src);
	errno = errnum;
	return -1;
}

/* Makes TARGET~ the current version, never a half file: a hard link (atomic, and it keeps
 * owner, mode and times) renamed into place, or else a full copy through its own temp file. */
static int make_backup(const char *path, const char *target, const char *dir, const char *base,
		       const struct stat *orig, struct err *e)
{
	char *bak = join3(target, "~", "");
	char *tmp = bak ? temp_template(dir, base) : NULL;
	int rc = 0, fd = -1;
	if (!tmp) {
		free(bak);
		return oom(e, path);
	}
	/* mkstemp reserves a fresh name; it is freed again for link(2), which will not replace
	 * an existing file, so losing a race for the name only means falling back to a copy. */
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		rc = err_set(e, ERR_CANTCREAT, path, 0, 0,
			     _("cannot keep the previous version as %s: %s"), bak, why(errno));
		goto out;
	}
	close(fd);
	fd = -1;
	if (unlink(tmp) == 0 && link(target, tmp) == 0) {
		if (rename(tmp, bak) == 0)
			goto out;
		rc = err_set(e, ERR_CANTCREAT, path, 0, 0,
			     _("cannot keep the previous version as %s: %s"), bak, why(errno));
		unlink(tmp);
		goto out;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || copy_into(fd, target) < 0) {
		rc = err_set(e, ERR_CANTCREAT, path, 0, 0,
			     _("cannot keep the previous version as %s: %s"), bak, why(errno));
		goto fail;
	}
	/* Best effort on the owner: a backup we own is still a backup. */
	if (fchown(fd, orig->st_uid, orig->st_gid) < 0)
		errno = 0;
	if (fchmod(fd, orig->st_mode & 07777) < 0 || fsync(fd) < 0) {
		rc = err_set(e, ERR_CANTCREAT, path, 0, 0,
			     _("cannot keep the previous version as %s: %s"), bak, why(errno));
		goto fail;
	}
	int c = close(fd);
	fd = -1;
	if (c < 0 || rename(tmp, bak) < 0) {
		rc = err_set(e, ERR_CANTCREAT, path, 0, 0,
			     _("cannot keep the previous version as %s: %s"), bak, why(errno));
		goto fail;
	}
	goto out;
fail:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
out:
	free(tmp);
	free(bak);
	return rc;
}

/* Whether the file to replace exists (*exists; its stat in *st). Anything but a regular file is
 * refused. */
static int examine_target(const char *path, const char *target, struct stat *st, bool *exists,
			  struct err *e)
{
	if (stat(target, st) == 0) {
		*exists = true;
		if (!S_ISREG(st->st_mode))
			return err_set(e, ERR_CANTCREAT, path, 0, 0, "%s",
				       _("not saved: not a regular file"));
		return 0;
	}
	if (errno == ENOENT) {
		*exists = false;
		return 0;
	}
	return err_set(e, ERR_CANTCREAT, path, 0, 0, _("cannot examine the file: %s"), why(errno));
}

/* Writes the new version into the temporary file fd, with the old file's owner and mode (orig,
 * when it exists) or a new file's (`fresh`), flushed to disk; fd is closed either way. */
static int write_new(int fd, const char *path, const char *text, size_t len,
		     const struct stat *orig, bool exists, mode_t fresh, struct err *e)
{
	int rc = 0;
	if (write_all(fd, text, len) < 0)
		rc = err_set(e, ERR_IOERR, path, 0, 0,
			     _("not saved: writing the new version failed: %s"), why(errno));
	else if (exists)
		rc = copy_owner_mode(fd, orig, path, e);
	else if (fchmod(fd, fresh) < 0)
		rc = err_set(e, ERR_CANTCREAT, path, 0, 0,
			     _("not saved: cannot set the file's permissions: %s"), why(errno));
	if (!rc && fsync(fd) < 0)
		rc = err_set(e, ERR_IOERR, path, 0, 0,
			     _("not saved: flushing the new version to disk failed: %s"),
			     why(errno));
	if (rc) {
		close(fd);
		return rc;
	}
	if (close(fd) < 0)
		return err_set(e, ERR_IOERR, path, 0, 0,
			       _("not saved: writing the new version failed: %s"), why(errno));
	return 0;
}

/* The rename is durable only once the directory is flushed. Some file systems cannot fsync a
 * directory (EINVAL); that is no reason to report a failed save. */
static int flush_dir(const char *path, const char *dir, struct err *e)
{
	int rc = 0, dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		if (fsync(dfd) < 0 && errno != EINVAL && errno != ENOTSUP)
			rc = err_set(e, ERR_IOERR, path, 0, 0,
				     _("saved, but flushing the directory %s failed: %s"), dir,
				     why(errno));
		close(dfd);
	}
	return rc;
}

static int save_to(const char *path, const char *text, size_t len, const struct save_stamp *loaded,
		   unsigned flags, bool check_yaml, mode_t fresh, struct err *e)
{
	char *target = NULL, *dir = NULL, *tmp = NULL;
	int fd, rc;
	bool tmp_made = false;
	struct stat orig;
	bool exists;

	if (!path || !*path)
		return err_set(e, ERR_USAGE, NULL, 0, 0, "%s", _("no file name to save to"));
	if (!text)
		text = "";
	if (check_yaml && (rc = yaml_check(path, text, len, e)) != 0)
		return rc;
	ignore_sigxfsz();
	if ((rc = resolve_target(path, &target, e)) != 0)
		return rc;
	if ((rc = examine_target(path, target, &orig, &exists, e)) != 0)
		goto out;
	bool check = loaded && !(flags & SAVE_FORCE);
	/* Refuse early too, before writing anything; the decisive check is just before rename. */
	if (check && (rc = check_unchanged(path, target, loaded, e)) != 0)
		goto out;

	dir = dir_of(target);
	tmp = dir ? temp_template(dir, base_of(target)) : NULL;
	if (!tmp) {
		rc = oom(e, path);
		goto out;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		rc = err_set(e, ERR_CANTCREAT, path, 0, 0,
			     _("not saved: cannot create a temporary file in %s: %s"), dir,
			     why(errno));
		goto out;
	}
	tmp_made = true;
	if ((rc = write_new(fd, path, text, len, &orig, exists, fresh, e)) != 0)
		goto out;

	if (check && (rc = check_unchanged(path, target, loaded, e)) != 0)
		goto out;
	if (exists && (flags & SAVE_BACKUP) &&
	    (rc = make_backup(path, target, dir, base_of(target), &orig, e)) != 0)
		goto out;
	/* The backup may have taken a moment (a copy): look once more right before replacing. */
	if (check && (rc = check_unchanged(path, target, loaded, e)) != 0)
		goto out;
	if (rename(tmp, target) < 0) {
		rc = err_set(e, ERR_CANTCREAT, path, 0, 0,
			     _("not saved: cannot replace the file: %s"), why(errno));
		goto out;
	}
	tmp_made = false;
	rc = flush_dir(path, dir, e);
out:
	if (tmp_made)
		unlink(tmp);
	free(tmp);
	free(dir);
	free(target);
	return rc;
}

int save_file(const char *path, const char *text, size_t len, const struct save_stamp *loaded,
	      unsigned flags, bool check_yaml, struct err *e)
{
	return save_to(path, text, len, loaded, flags, check_yaml, new_file_mode(), e);
}

int save_output(const char *path, const char *text, size_t len, const char *job, struct err *e)
{
	/* What a private job holds must not land in a file others may read (like cp). */
	return save_to(path, text, len, NULL, 0, true, new_file_mode() & save_mode_for(job), e);
}

int save_private(const char *path, const char *text, size_t len, mode_t mode, struct err *e)
{
	char *dir = dir_of(path), *tmp = dir ? temp_template(dir, base_of(path)) : NULL;
	int rc = 0, fd = -1;
	if (!tmp) {
		free(dir);
		return oom(e, path);
	}
	/* mkstemp's file is new and ours (O_EXCL), and rename(2) replaces a link planted under
	 * the name rather than writing through it: no other file can be reached. */
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		rc = err_set(e, ERR_CANTCREAT, path, 0, 0,
			     _("not saved: cannot create a temporary file in %s: %s"), dir, why(errno));
		goto out;
	}
	if (write_all(fd, text, len) < 0 || fchmod(fd, mode & 0666) < 0 || fsync(fd) < 0) {
		rc = err_set(e, ERR_IOERR, path, 0, 0, _("not saved: writing the new version failed: %s"),
			     why(errno));
		close(fd);
		unlink(tmp);
		goto out;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		rc = err_set(e, ERR_CANTCREAT, path, 0, 0, _("not saved: cannot replace the file: %s"),
			     why(errno));
		unlink(tmp);
		goto out;
	}
	rc = flush_dir(path, dir, e);
out:
	free(tmp);
	free(dir);
	return rc;
}

/* Where an emergency save goes when the job's folder refuses it (D26), and what to say then:
 * computed outside any signal handler (save_emergency_prepare), read by save_emergency. */
static struct {
	char job[PATH_MAX];      /* the job path it was prepared for */
	char dirs[3][PATH_MAX];  /* the folders to create, outermost first ("" = none) */
	char name[PATH_MAX];     /* the fallback file */
	char said_ok[PATH_MAX + 256], said_failed[PATH_MAX + 256];
	volatile sig_atomic_t ready;
} fallback;

/* The job's path made absolute without touching the file (it may not exist). */
static char *absolute(const char *path)
{
	char *r = realpath(path, NULL);
	if (r || path[0] == '/')
		return r ? r : strdup(path);
	char *cwd = getcwd(NULL, 0);
	if (!cwd)
		return strdup(path);
	r = join3(cwd, "/", path);
	free(cwd);
	return r;
}

/* The state folders, outermost first ("" = none): $XDG_STATE_HOME, then oomfix in it; else
 * ~/.local, ~/.local/state, ~/.local/state/oomfix. Returns the length of the last, or -1 when
 * neither variable gives an absolute path. */
static int state_dirs(char dirs[3][PATH_MAX])
{
	const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	char base[PATH_MAX];
	if (xdg && xdg[0] == '/') {
		snprintf(dirs[0], PATH_MAX, "%s", xdg);
		dirs[1][0] = '\0';
		snprintf(base, sizeof base, "%s", xdg);
	} else if (home && home[0] == '/') {
		snprintf(dirs[0], PATH_MAX, "%s/.local", home);
		snprintf(dirs[1], PATH_MAX, "%s/.local/state", home);
		snprintf(base, sizeof base, "%s/.local/state", home);
	} else {
		return -1;
	}
	return snprintf(dirs[2], PATH_MAX, "%s/oomfix", base);
}

char *save_state_dir(void)
{
	static char dirs[3][PATH_MAX];
	int k = state_dirs(dirs);
	if (k < 0 || k >= PATH_MAX - 1)
		return NULL;
	for (int i = 0; i < 3; i++)
		if (dirs[i][0])
			mkdir(dirs[i], 0700);
	return strdup(dirs[2]);
}

void save_emergency_prepare(const char *path)
{
	fallback.ready = 0;
	int k = state_dirs(fallback.dirs);
	if (k < 0)
		return;
	char *abs = absolute(path);
	if (!abs || k < 0 || k >= PATH_MAX - 1) {
		free(abs);
		return;
	}
	/* One file per job: its absolute path with '/' as '%', the end kept if it is long. */
	size_t n = strlen(abs), keep = n > 200 ? 200 : n;
	char flat[256];
	for (size_t i = 0; i < keep; i++)
		flat[i] = abs[n - keep + i] == '/' ? '%' : abs[n - keep + i];
	flat[keep] = '\0';
	free(abs);
	k = snprintf(fallback.name, sizeof fallback.name, "%s/%s.oomfix-save", fallback.dirs[2], flat);
	if (k < 0 || (size_t)k >= sizeof fallback.name)
		return;
	snprintf(fallback.job, sizeof fallback.job, "%s", path);
	snprintf(fallback.said_ok, sizeof fallback.said_ok,
		 _("oomfix: the job's folder refused the emergency save; the unsaved edits are in %s\n"),
		 fallback.name);
	snprintf(fallback.said_failed, sizeof fallback.said_failed,
		 _("oomfix: the unsaved edits could not be saved, neither beside the job nor in %s\n"),
		 fallback.name);
	fallback.ready = 1;
}

/* Writes the whole text to `name` (mode 0600, not through a symlink); removes a partial copy.
 * Only async-signal-safe calls: it runs in the handler. */
static int emergency_write(const char *name, const char *text, size_t len, int *why)
{
	int ok = -1;
	/* O_NOFOLLOW: a link planted under this name must not redirect the write. O_NONBLOCK: a
	 * FIFO planted there must not hang the handler. No O_TRUNC before the checks below. */
	int fd = open(name, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
	if (fd < 0) {
		*why = errno;
		return -1;
	}
	/* A file already there that is not ours alone (someone else's, a hard link to another
	 * file, not a regular file) is refused like a folder that refuses: the state folder. */
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
	    st.st_uid != geteuid() || ((st.st_mode & 077) && fchmod(fd, 0600) < 0) ||
	    ftruncate(fd, 0) < 0) {
		close(fd);
		*why = EPERM;
		return -1;
	}
	const char *p = text;
	size_t left = len;
	while (left > 0) {
		ssize_t w = write(fd, p, left);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		p += w;
		left -= (size_t)w;
	}
	*why = errno;
	if (left == 0 && fsync(fd) == 0)
		ok = 0;
	if (close(fd) < 0)
		ok = -1;
	/* A partial copy must not be offered for recovery later. */
	if (ok < 0)
		unlink(name);
	return ok;
}

static void say_raw(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	ssize_t w = write(STDERR_FILENO, s, n);
	(void)w;
}

static bool same_str(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

int save_emergency(const char *path, const char *text, size_t len)
{
	/* Runs inside a signal handler: no malloc, no stdio, errno left as it was found. */
	static const char suffix[] = ".oomfix-save";
	char name[PATH_MAX];
	int saved_errno = errno, ok = -1, why = 0;
	size_t n = 0;

	if (!path || (!text && len))
		return -1;
	while (path[n]) {
		if (n + sizeof suffix >= sizeof name)
			return -1;
		name[n] = path[n];
		n++;
	}
	for (size_t i = 0; i < sizeof suffix; i++)
		name[n + i] = suffix[i];

	ok = emergency_write(name, text, len, &why);
	/* A folder that cannot take the file (read-only, full, not ours): the state folder, and a
	 * line on stderr that says where. A planted link (ELOOP) is not a reason to go elsewhere. */
	bool refused = why == EROFS || why == EACCES || why == EPERM || why == ENOSPC ||
		       why == EDQUOT;
	if (ok < 0 && refused && fallback.ready && same_str(fallback.job, path)) {
		for (int i = 0; i < 3; i++)
			if (fallback.dirs[i][0])
				mkdir(fallback.dirs[i], 0700);
		ok = emergency_write(fallback.name, text, len, &why);
		say_raw(ok == 0 ? fallback.said_ok : fallback.said_failed);
	}
	errno = saved_errno;
	return ok;
}

char *save_emergency_name(const char *path)
{
	char *beside = join3(path, ".oomfix-save", "");
	save_emergency_prepare(path);
	/* An emergency save that had to go to the state folder is the one to offer (and remove). */
	struct stat st;
	if (beside && stat(beside, &st) != 0 && fallback.ready && stat(fallback.name, &st) == 0) {
		free(beside);
		return strdup(fallback.name);
	}
	return beside;
}

char *save_journal_name(const char *path)
{
	return join3(path, ".oomfix.md", "");
}

/* Writes s with control characters made visible, so one value cannot break the line format. */
static void put_clean(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '\n')
			fputs("\\n", f);
		else if (ch == '\r')
			fputs("\\r", f);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(f, "\\x%02x", ch);
		else
			fputc(ch, f);
	}
}

/* "- `path`: old → new" from "path: old → new"; a path holding a backtick gets a longer fence. */
static void put_change(FILE *f, const char *change)
{
	const char *sep = strstr(change, ": ");
	fputs("- ", f);
	if (!sep || sep == change) {
		put_clean(f, change, strlen(change));
	} else {
		size_t plen = (size_t)(sep - change);
		bool tick = memchr(change, '`', plen) != NULL;
		fputs(tick ? "`` " : "`", f);
		put_clean(f, change, plen);
		fputs(tick ? " ``" : "`", f);
		put_clean(f, sep, strlen(sep));
	}
	fputc('\n', f);
}

/* The local time in ISO 8601 with the offset written as +hh:mm. */
static void iso_now(char *out, size_t size)
{
	time_t now = time(NULL);
	struct tm tm;
	char raw[64];
	if (!localtime_r(&now, &tm) || !strftime(raw, sizeof raw, "%Y-%m-%dT%H:%M:%S%z", &tm)) {
		snprintf(out, size, "%lld", (long long)now);
		return;
	}
	size_t n = strlen(raw);
	if (n >= 5 && (raw[n - 5] == '+' || raw[n - 5] == '-'))
		snprintf(out, size, "%.*s:%s", (int)(n - 2), raw, raw + n - 2);
	else
		snprintf(out, size, "%s", raw);
}

/* Why an open journal is not one to append to (NULL: it is): it must be one regular file of
 * this name only (a hard link would reach another file as surely as a symbolic one), and no
 * wider than `mode` — narrowed to it when it is ours, refused when it is not. */
static const char *journal_refused(int fd, mode_t mode)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return why(errno);
	if (!S_ISREG(st.st_mode))
		return _("not a regular file");
	if (st.st_nlink != 1)
		return _("the file has other names too (a hard link)");
	/* An older journal may be wider than its job (they were once all 0644). */
	if ((st.st_mode & 0777 & ~mode) && fchmod(fd, st.st_mode & 0777 & mode) < 0)
		return _("it can be read more widely than the job, and cannot be narrowed");
	return NULL;
}

/* Opens the journal for one more entry, never through a link planted in its place (O_NOFOLLOW)
 * and never stalled by a FIFO (O_NONBLOCK). A new one gets `mode`; *created says that it is
 * new, for the title. Returns the descriptor, or -1 with e set (e->code). */
static int open_journal(const char *name, mode_t mode, bool *created, struct err *e)
{
	const int flags = O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
	/* Created here means nobody else wrote the title; O_EXCL makes that decision atomic. */
	int fd = open(name, flags | O_CREAT | O_EXCL, mode);
	*created = fd >= 0;
	if (fd < 0 && errno == EEXIST)
		fd = open(name, flags);
	if (fd < 0) {
		if (errno == ELOOP)
			err_set(e, ERR_CANTCREAT, name, 0, 0, "%s",
				_("a symbolic link stands where the change journal goes; nothing was "
				  "written to it (a link could send the entry into another file)"));
		else
			err_set(e, ERR_CANTCREAT, name, 0, 0, _("cannot open the change journal: %s"),
				why(errno));
		return -1;
	}
	const char *no = journal_refused(fd, mode);
	if (!no)
		return fd;
	close(fd);
	err_set(e, ERR_CANTCREAT, name, 0, 0, _("not writing the change journal: %s"), no);
	return -1;
}

int save_journal(const char *path, const char *const *fixes, size_t nfixes,
		 const char *const *changes, size_t nchanges, struct err *e)
{
	return save_journal_note(path, NULL, fixes, nfixes, changes, nchanges, e);
}

int save_journal_note(const char *path, const char *note, const char *const *fixes,
		      size_t nfixes, const char *const *changes, size_t nchanges, struct err *e)
{
	return save_journal_titled(path, NULL, note, fixes, nfixes, changes, nchanges, e);
}

int save_journal_titled(const char *path, const char *title_name, const char *note,
			const char *const *fixes, size_t nfixes, const char *const *changes,
			size_t nchanges, struct err *e)
{
	return save_journal_run(path, title_name, note, NULL, fixes, nfixes, changes, nchanges, e);
}

#define RUN_LOG_MARK "<!-- oomfix run log: "

int save_journal_run(const char *path, const char *title_name, const char *note,
		     const char *run_log, const char *const *fixes, size_t nfixes,
		     const char *const *changes, size_t nchanges, struct err *e)
{
	struct stat rl;
	bool have_rl = run_log && stat(run_log, &rl) == 0 && S_ISREG(rl.st_mode);
	char *name = save_journal_name(path);
	char *entry = NULL;
	size_t entry_len = 0;
	char when[80];
	int rc = 0, fd = -1;

	if (!name)
		return oom(e, path);
	FILE *f = open_memstream(&entry, &entry_len);
	if (!f) {
		free(name);
		return oom(e, path);
	}
	iso_now(when, sizeof when);
	fprintf(f, "\n## %s\n\n", when);
	if (nfixes == 0) {
		fputs(_("Manual edits"), f);
	} else {
		fputs(_("Fixes:"), f);
		for (size_t i = 0; i < nfixes; i++) {
			fputs(i ? ", " : " ", f);
			put_clean(f, fixes[i], strlen(fixes[i]));
		}
	}
	fputs("\n\n", f);
	if (note && *note) {
		put_clean(f, note, strlen(note));
		fputs("\n\n", f);
	}
	if (have_rl)
		fprintf(f, RUN_LOG_MARK "%llu:%llu -->\n\n", (unsigned long long)rl.st_dev,
			(unsigned long long)rl.st_ino);
	for (size_t i = 0; i < nchanges; i++)
		put_change(f, changes[i]);
	if (fclose(f) != 0 || !entry) {
		rc = oom(e, path);
		goto out;
	}

	bool created;
	if ((fd = open_journal(name, save_mode_for(path), &created, e)) < 0) {
		rc = e->code;
		goto out;
	}
	if (created) {
		char title[600];
		snprintf(title, sizeof title, _("# Change journal for %s\n"),
			 title_name ? title_name : base_of(path));
		if (write_all(fd, title, strlen(title)) < 0)
			goto write_failed;
	}
	/* One write per entry: O_APPEND keeps concurrent entries whole. */
	if (write_all(fd, entry, entry_len) < 0 || fsync(fd) < 0)
		goto write_failed;
	int c = close(fd);
	fd = -1;
	if (c < 0)
		goto write_failed;
	goto out;
write_failed:
	rc = err_set(e, ERR_IOERR, name, 0, 0, _("cannot write the change journal: %s"),
		     why(errno));
out:
	if (fd >= 0)
		close(fd);
	free(entry);
	free(name);
	return rc;
}

/* Parses "2026-12-02T21:47:12+00:00" (or a bare number of seconds, iso_now's fallback). */
static bool parse_iso(const char *s, time_t *out)
{
	struct tm tm = { 0 };
	const char *rest = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	long off = 0;

	if (!rest) {
		char *end;
		long long v = strtoll(s, &end, 10);
		if (end == s || (*end && *end != '\n'))
			return false;
		*out = (time_t)v;
		return true;
	}
	if ((rest[0] == '+' || rest[0] == '-') && rest[1] && rest[2] && rest[3] == ':') {
		int h = (rest[1] - '0') * 10 + (rest[2] - '0');
		int m = (rest[4] - '0') * 10 + (rest[5] - '0');
		off = (h * 60L + m) * 60L * (rest[0] == '-' ? -1 : 1);
	}
	*out = timegm(&tm) - off;
	return true;
}

bool save_journal_last(const char *path, time_t *when)
{
	return save_journal_last_fixes(path, when, NULL, 0);
}

bool save_journal_last_fixes(const char *path, time_t *when, char *fixes, size_t size)
{
	char *name = save_journal_name(path);
	char buf[64 * 1024 + 1];
	bool found = false;
	FILE *f;

	if (fixes && size)
		fixes[0] = '\0';
	if (!name)
		return false;
	f = fopen(name, "rb");
	free(name);
	if (!f)
		return false;
	if (fseek(f, 0, SEEK_END) == 0) {
		long size_ = ftell(f);
		if (size_ > (long)(sizeof buf - 1))
			fseek(f, size_ - (long)(sizeof buf - 1), SEEK_SET);
		else
			rewind(f);
	}
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *entry = NULL;
	for (char *p = buf; (p = strstr(p, "\n## ")) != NULL; p += 4) {
		time_t t;
		if (parse_iso(p + 4, &t)) {
			*when = t;
			found = true;
			entry = p + 4;
		}
	}
	/* The entry's first line after its heading: "Fixes: a, b" in the language it was written
	 * in (the ids after the colon), or "Manual edits" (no colon: no fix). */
	if (found && fixes && size) {
		const char *l = strchr(entry, '\n');
		l = l ? l + strspn(l, "\n") : "";
		size_t ll = strcspn(l, "\n");
		const char *colon = memchr(l, ':', ll);
		if (colon) {
			colon += strspn(colon + 1, " ") + 1;
			snprintf(fixes, size, "%.*s", (int)(l + ll - colon), colon);
		}
	}
	return found;
}

void save_journal_entries_free(struct save_journal_entry *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		for (size_t k = 0; k < v[i].nfixes; k++)
			free(v[i].fixes[k]);
		free(v[i].fixes);
		free(v[i].note);
		for (size_t k = 0; k < v[i].nchanges; k++)
			free(v[i].changes[k]);
		free(v[i].changes);
	}
	free(v);
}

static bool push_str(char ***v, size_t *n, const char *s, size_t len)
{
	char **nv = realloc(*v, (*n + 1) * sizeof *nv);
	if (!nv)
		return false;
	*v = nv;
	if (!(nv[*n] = strndup(s, len)))
		return false;
	(*n)++;
	return true;
}

/* "Fixes: a, b" (in any language: the ids follow the first ':' or '：') into e->fixes. A line
 * without a colon is "Manual edits". */
static bool parse_fixes_line(struct save_journal_entry *e, const char *s, size_t len)
{
	const char *colon = memchr(s, ':', len);
	const char *wide = NULL;
	for (size_t i = 0; i + 3 <= len; i++)
		if (!memcmp(s + i, "\xef\xbc\x9a", 3)) { /* U+FF1A FULLWIDTH COLON */
			wide = s + i + 2;
			break;
		}
	if (!colon || (wide && wide < colon))
		colon = wide;
	if (!colon)
		return true;
	const char *p = colon + 1, *end = s + len;
	while (p < end) {
		while (p < end && (*p == ' ' || *p == ','))
			p++;
		const char *q = p;
		while (q < end && *q != ',' && *q != ' ')
			q++;
		if (q > p && !push_str(&e->fixes, &e->nfixes, p, (size_t)(q - p)))
			return false;
		p = q;
	}
	return true;
}

/* "- `path`: old → new" (or "- ``pa`th``: ...") back to "path: old → new". */
static bool parse_change_line(struct save_journal_entry *e, const char *s, size_t len)
{
	s += 2, len -= 2;
	size_t fence = 0;
	while (fence < len && s[fence] == '`')
		fence++;
	if (fence == 0)
		return push_str(&e->changes, &e->nchanges, s, len);
	const char *p = s + fence + (fence > 1), *end = s + len;
	const char *close = NULL;
	for (const char *q = p; q + fence <= end; q++)
		if (!memcmp(q, fence > 1 ? "``" : "`", fence) &&
		    (q + fence == end || q[fence] == ':')) {
			close = q;
			break;
		}
	if (!close)
		return push_str(&e->changes, &e->nchanges, s, len);
	size_t plen = (size_t)(close - p) - (fence > 1 && close > p && close[-1] == ' ');
	char *buf = malloc(len + 1);
	if (!buf)
		return false;
	const char *rest = close + fence;
	int k = snprintf(buf, len + 1, "%.*s%.*s", (int)plen, p, (int)(end - rest), rest);
	bool ok = k >= 0 && push_str(&e->changes, &e->nchanges, buf, (size_t)k);
	free(buf);
	return ok;
}

int save_journal_entries(const char *path, struct save_journal_entry **out, size_t *n,
			 struct err *e)
{
	enum { MAX = 1 << 20 };
	*out = NULL;
	*n = 0;
	char *name = save_journal_name(path);
	if (!name)
		return oom(e, path);
	FILE *f = fopen(name, "rb");
	if (!f) {
		int rc = errno == ENOENT ? 0
					 : err_set(e, ERR_NOINPUT, name, 0, 0,
						   _("cannot read the change journal: %s"), why(errno));
		free(name);
		return rc;
	}
	char *buf = malloc(MAX + 2);
	if (!buf) {
		fclose(f);
		free(name);
		return oom(e, path);
	}
	if (fseek(f, 0, SEEK_END) == 0) {
		long size = ftell(f);
		if (size > MAX)
			fseek(f, size - MAX, SEEK_SET);
		else
			rewind(f);
	}
	buf[0] = '\n';
	size_t len = fread(buf + 1, 1, MAX, f) + 1;
	fclose(f);
	free(name);
	buf[len] = '\0';

	struct save_journal_entry *v = NULL;
	size_t nv = 0, cap = 0;
	int rc = 0;
	for (char *p = strstr(buf, "\n## "); p; ) {
		char *next = strstr(p + 4, "\n## ");
		char *end = next ? next : buf + len;
		if (!ARRAY_GROW(v, nv + 1, cap)) {
			rc = oom(e, path);
			break;
		}
		struct save_journal_entry *en = &v[nv++];
		memset(en, 0, sizeof *en);
		time_t t;
		if (parse_iso(p + 4, &t))
			en->when = t;
		char *line = memchr(p + 4, '\n', (size_t)(end - p - 4));
		bool have_fixes = false, ok = true;
		while (ok && line && line < end) {
			char *s = line + 1;
			char *eol = memchr(s, '\n', (size_t)(end - s));
			if (!eol)
				eol = end;
			size_t l = (size_t)(eol - s);
			size_t ml = strlen(RUN_LOG_MARK);
			if (l == 0) {
			} else if (have_fixes && l > ml && !memcmp(s, RUN_LOG_MARK, ml)) {
				char id[64];
				snprintf(id, sizeof id, "%.*s", (int)(l - ml), s + ml);
				en->has_log_id = sscanf(id, "%llu:%llu", &en->log_dev, &en->log_ino) == 2;
			} else if (!have_fixes) {
				have_fixes = true;
				ok = parse_fixes_line(en, s, l);
			} else if (l >= 2 && s[0] == '-' && s[1] == ' ') {
				ok = parse_change_line(en, s, l);
			} else if (!en->note && !en->nchanges) {
				ok = (en->note = strndup(s, l)) != NULL;
			}
			line = eol < end ? eol : NULL;
		}
		if (!ok) {
			rc = oom(e, path);
			break;
		}
		p = next;
	}
	free(buf);
	if (rc) {
		save_journal_entries_free(v, nv);
		return rc;
	}
	*out = v;
	*n = nv;
	return 0;
}
