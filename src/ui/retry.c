/* retry.c — the retry loop run from the UI (SPEC §11): `oomfix retry --events` as a child.
 *
 * The UI does not run a second copy of the loop: it starts this very program's `retry` command
 * (found through /proc/self/exe) in a process group of its own, with the run's output going to
 * the try's log only, and reads the loop's events (one JSON object per line on descriptor 3)
 * without ever blocking. So the loop the UI shows is the one the CLI tests prove, a run that
 * hangs never freezes the screen, and stopping it is one SIGINT to the retry process, which stops
 * its run with the usual grace periods. PR_SET_PDEATHSIG makes it stop its run too when the UI
 * dies (a dropped SSH connection), as `oomfix retry` in a terminal stops on SIGHUP.
 *
 * No curses here: the views draw what this file collects in struct ui_retry.
 */
#include <errno.h>
#include <glob.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oomfix/buf.h"
#include "oomfix/estimate.h"
#include "oomfix/i18n.h"
#include "oomfix/retry_events.h"
#include "oomfix/save.h"
#include "oomfix/source.h"
#include "retry.h"

#define EVENT_FD 3
#define MAX_LINE (1u << 20) /* an event line longer than this is dropped, not buffered */

bool ui_retry_running(const struct ui_retry *r)
{
	return r->pid > 0;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* The fix a try's `fix` event carried: a second event for the same try replaces it whole. */
static void try_forget_fix(struct ui_try *t)
{
	free(t->fix);
	free(t->title);
	free(t->note);
	free(t->lesson);
	for (size_t i = 0; i < t->nchanges; i++)
		free(t->changes[i]);
	free(t->changes);
	t->fix = t->title = t->note = t->lesson = NULL;
	t->changes = NULL;
	t->nchanges = 0;
}

static void try_free(struct ui_try *t)
{
	free(t->log);
	free(t->taken);
	free(t->waiting);
	free(t->summary);
	try_forget_fix(t);
	free(t->estimate);
	memset(t, 0, sizeof *t);
}

/* Forgets the tries and the outcome of an earlier loop (the process is gone). */
static void clear_results(struct ui_retry *r)
{
	for (size_t i = 0; i < r->ntries; i++)
		try_free(&r->tries[i]);
	free(r->tries);
	r->tries = NULL;
	r->ntries = 0;
	free(r->text);
	r->text = NULL;
	r->ended = false;
	r->status = 0;
	r->outcome = RETRY_OUT_ERROR;
	r->errlen = 0;
	r->err[0] = '\0';
	r->len = 0;
}

void ui_retry_free(struct ui_retry *r)
{
	clear_results(r);
	free(r->line);
	free(r->cmd);
	if (r->ev_fd > 0)
		close(r->ev_fd);
	if (r->err_fd > 0)
		close(r->err_fd);
	unsigned loop = r->loop;
	memset(r, 0, sizeof *r);
	r->loop = loop; /* a later loop is still a new one */
}

/* ---- the command to run a file job ----------------------------------------------------------- */

static char *runs_file(const char *job_path)
{
	char *p = NULL;
	return asprintf(&p, "%s.oomfix-runs/command", job_path) < 0 ? NULL : p;
}

/* Appends s to the shell line in single quotes (a quote inside becomes '\''). */
static void sh_quote(char *out, size_t outsz, const char *s)
{
	size_t k = strlen(out);
	bool plain = *s != '\0';
	for (const char *p = s; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./+=:,",
			    *p))
			plain = false;
	if (plain) {
		snprintf(out + k, outsz - k, "%s", s);
		return;
	}
	if (k + 1 < outsz)
		out[k++] = '\'';
	for (; *s && k + 5 < outsz; s++) {
		if (*s == '\'') {
			memcpy(out + k, "'\\''", 4);
			k += 4;
		} else {
			out[k++] = *s;
		}
	}
	if (k + 1 < outsz)
		out[k++] = '\'';
	out[k] = '\0';
}

static bool is_exec(const char *dir, const char *rel)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/%s", dir, rel);
	return access(p, X_OK) == 0;
}

/* The command last remembered for any job beside `abs` (the newest DIR/\*.oomfix-runs/command),
 * or "" when there is none. Malloc'd. */
static char *sibling_command(const char *abs)
{
	char pat[PATH_MAX + 32], line[1024] = "";
	const char *slash = strrchr(abs, '/');
	int dirlen = slash ? (int)(slash - abs) : 1;
	glob_t g;
	time_t best = 0;

	snprintf(pat, sizeof pat, "%.*s/*.oomfix-runs/command", dirlen, slash ? abs : ".");
	if (glob(pat, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			struct stat st;
			FILE *fp;
			char l[1024];
			if (stat(g.gl_pathv[i], &st) != 0 || st.st_mtime < best ||
			    !(fp = fopen(g.gl_pathv[i], "r")))
				continue;
			if (fgets(l, sizeof l, fp) && (l[strcspn(l, "\n")] = '\0', l[0])) {
				best = st.st_mtime;
				memcpy(line, l, sizeof line);
			}
			fclose(fp);
		}
		globfree(&g);
	}
	return strdup(line);
}

char *ui_retry_guess_command(const char *job_path)
{
	char *f = runs_file(job_path);
	FILE *fp = f ? fopen(f, "r") : NULL;
	free(f);
	if (fp) {
		char line[1024];
		bool got = fgets(line, sizeof line, fp) != NULL;
		fclose(fp);
		line[strcspn(line, "\n")] = '\0';
		if (got && line[0])
			return strdup(line);
	}
	/* AI Toolkit runs a job as `python run.py JOB` from its own folder (run.py puts the working
	 * directory on the import path), usually from a venv inside it: look for run.py in the
	 * job's folder and up to three above it (config/ sits in the toolkit's folder). */
	char abs[PATH_MAX], dir[PATH_MAX], root[PATH_MAX] = "";
	if (!realpath(job_path, abs))
		snprintf(abs, sizeof abs, "%s", job_path);
	snprintf(dir, sizeof dir, "%s", abs);
	for (int up = 0; up < 4; up++) {
		char *slash = strrchr(dir, '/');
		if (!slash)
			break;
		*slash = '\0';
		char probe[PATH_MAX + 16];
		snprintf(probe, sizeof probe, "%s/run.py", dir[0] ? dir : "/");
		if (access(probe, R_OK) == 0) {
			snprintf(root, sizeof root, "%s", dir[0] ? dir : "/");
			break;
		}
		if (!dir[0])
			break;
	}
	char out[3 * PATH_MAX] = "";
	if (root[0]) {
		const char *py = is_exec(root, "venv/bin/python")    ? "venv/bin/python"
				 : is_exec(root, ".venv/bin/python") ? ".venv/bin/python"
								     : "python";
		snprintf(out, sizeof out, "cd ");
		sh_quote(out, sizeof out, root);
		size_t k = strlen(out);
		snprintf(out + k, sizeof out - k, " && %s run.py ", py);
		sh_quote(out, sizeof out, abs);
	} else {
		/* No run.py here: "python run.py JOB" could not work. The newest command typed for
		 * another job of this folder (its .oomfix-runs/command) is a better start, or nothing. */
		return sibling_command(abs);
	}
	return strdup(out);
}

void ui_retry_remember_command(const char *job_path, const char *cmd)
{
	char *f = runs_file(job_path), *line = NULL;
	if (!f)
		return;
	char *slash = strrchr(f, '/');
	*slash = '\0';
	struct stat st;
	/* The runs folder is oomfix's own (0700); a link planted in its place is not followed. */
	bool own = (mkdir(f, 0700) == 0 || errno == EEXIST) && lstat(f, &st) == 0 &&
		   S_ISDIR(st.st_mode);
	*slash = '/';
	/* A whole file or none, never written through a link, as private as the job. */
	struct err e;
	if (own && asprintf(&line, "%s\n", cmd) >= 0)
		(void)save_private(f, line, strlen(line), save_mode_for(job_path), &e);
	free(line);
	free(f);
}

/* ---- the child ----------------------------------------------------------------------------- */

static void close_from(int lowfd)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned)lowfd, ~0u, 0) == 0)
		return;
#endif
	long max = sysconf(_SC_OPEN_MAX);
	for (long fd = lowfd; fd < (max > 0 && max < 65536 ? max : 4096); fd++)
		close((int)fd);
}

/* The loop's command line (argv holds 24; the strings it points to are the caller's). */
static void retry_argv(const char **argv, const char *exe, const char *job, const char *log,
		       const char *cmd, const char *probe_s, const char *max_s, const char *vram)
{
	int k = 0;
	argv[k++] = exe;
	if (source_aitk_dir()) {
		argv[k++] = "--aitk";
		argv[k++] = source_aitk_dir();
	}
	argv[k++] = "retry";
	argv[k++] = "--events";
	argv[k++] = "3";
	argv[k++] = "--max-tries";
	argv[k++] = max_s;
	if (vram) { /* the card of the fit line, for each try's estimate */
		argv[k++] = "--vram";
		argv[k++] = vram;
	}
	if (probe_s) {
		argv[k++] = "--probe";
		argv[k++] = probe_s;
	}
	if (log) {
		argv[k++] = "--log";
		argv[k++] = log;
	}
	argv[k++] = job;
	if (cmd) {
		argv[k++] = "--";
		argv[k++] = "/bin/sh";
		argv[k++] = "-c";
		argv[k++] = cmd;
	}
	argv[k] = NULL;
}

/* In the child, after fork: its own process group, gone with the UI, the events on fd 3 and
 * what it says for people on the pipe xw; then exec. Only exec-safe calls here. */
static _Noreturn void child_exec(pid_t parent, int evw0, int xw0, const char *exe,
				 const char **argv)
{
	/* Its own group: a Ctrl-C typed at the UI is the UI's to answer, not the loop's. */
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGHUP);
	if (getppid() != parent)
		_exit(129); /* the UI died before the line above */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGXFSZ, SIG_DFL);
	/* Out of the way first: a pipe end may sit on 0-3 itself (dup2 onto the same number would
	 * keep its close-on-exec), and one must not be overwritten by the other. */
	int evw = fcntl(evw0, F_DUPFD, 10), errw = fcntl(xw0, F_DUPFD, 10);
	int dn = open("/dev/null", O_RDWR);
	if (evw < 0 || errw < 0 || dn < 0)
		_exit(127);
	if (dup2(evw, EVENT_FD) < 0 || dup2(errw, 2) < 0 || dup2(dn, 0) < 0 || dup2(dn, 1) < 0)
		_exit(127);
	close_from(EVENT_FD + 1);
	execv(exe, (char *const *)argv);
	_exit(127);
}

int ui_retry_start(struct ui_retry *r, const char *job, const char *log, const char *cmd,
		   long long probe, int max_tries, const char *vram, struct err *e)
{
	if (ui_retry_running(r))
		return err_set(e, ERR_TEMPFAIL, NULL, 0, 0, "%s", _("a retry is running already"));
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return err_set(e, ERR_UNAVAILABLE, "/proc/self/exe", 0, 0, "%s", strerror(errno));
	exe[n] = '\0';

	/* Everything the child needs is made before fork: after it, only exec-safe calls. */
	char probe_s[32], max_s[16];
	snprintf(probe_s, sizeof probe_s, "%lld", probe);
	snprintf(max_s, sizeof max_s, "%d", max_tries);
	const char *argv[24];
	retry_argv(argv, exe, job, log, cmd, probe > 0 ? probe_s : NULL, max_s, vram);

	int ep[2], xp[2];
	if (pipe2(ep, O_CLOEXEC) != 0)
		return err_set(e, ERR_UNAVAILABLE, NULL, 0, 0, "pipe: %s", strerror(errno));
	if (pipe2(xp, O_CLOEXEC) != 0) {
		int err = errno;
		close(ep[0]), close(ep[1]);
		return err_set(e, ERR_UNAVAILABLE, NULL, 0, 0, "pipe: %s", strerror(err));
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		int err = errno;
		close(ep[0]), close(ep[1]), close(xp[0]), close(xp[1]);
		return err_set(e, ERR_UNAVAILABLE, NULL, 0, 0, "fork: %s", strerror(err));
	}
	if (pid == 0)
		child_exec(parent, ep[1], xp[1], exe, argv);
	setpgid(pid, pid);
	close(ep[1]);
	close(xp[1]);
	fcntl(ep[0], F_SETFL, O_NONBLOCK);
	fcntl(xp[0], F_SETFL, O_NONBLOCK);

	clear_results(r);
	free(r->cmd);
	r->cmd = dup_or_null(cmd);
	r->pid = pid;
	r->ev_fd = ep[0];
	r->err_fd = xp[0];
	r->started = true;
	r->loop++;
	r->stopping = false;
	r->probe = probe;
	r->max_tries = max_tries;
	return ERR_OK;
}

void ui_retry_stop(struct ui_retry *r)
{
	/* The retry process stops its run (SIGINT, then SIGTERM and SIGKILL after the grace); a
	 * second request skips the wait, as a second Ctrl-C does. */
	if (ui_retry_running(r))
		kill(r->pid, SIGINT);
	r->stopping = true;
}

/* ---- events -------------------------------------------------------------------------------- */

static char *str_at(const struct doc *d, const char *path)
{
	const struct doc_node *n = doc_deref(doc_get(d, path));
	if (!n || n->kind != DOC_SCALAR || doc_is_null(n))
		return NULL;
	return strdup(n->value);
}

static long long int_at(const struct doc *d, const char *path, long long dflt)
{
	long long v;
	const struct doc_node *n = doc_get(d, path);
	return n && doc_as_long(n, &v) ? v : dflt;
}

static struct ui_try *try_numbered(struct ui_retry *r, long long n)
{
	for (size_t i = r->ntries; i-- > 0;)
		if (r->tries[i].n == n)
			return &r->tries[i];
	return NULL;
}

/* The try's estimate (the try event's "estimate" object) in the words the CLI prints for it;
 * NULL when the event has none. */
static char *estimate_words(const struct doc *d)
{
	const struct doc_node *o = doc_deref(doc_get(d, "estimate"));
	const struct doc_node *k = doc_get(d, "estimate.known");
	bool known = false;
	char buf[256];
	if (!o || o->kind != DOC_MAP)
		return NULL;
	if (!k || !doc_as_bool(k, &known) || !known)
		return strdup(_("no estimate for this arch (no memory table)"));
	enum est_phase peak = EST_TRAINING, at = EST_TRAINING;
	char *pk = str_at(d, "estimate.peak_phase"), *vs = str_at(d, "estimate.verdict");
	char *as = str_at(d, "estimate.verdict_phase");
	bool ok = est_phase_parse(pk, &peak);
	enum est_verdict v = est_verdict_parse(vs);
	if (v != EST_V_UNKNOWN && !est_phase_parse(as, &at))
		v = EST_V_UNKNOWN;
	free(pk);
	free(vs);
	free(as);
	long long bytes = int_at(d, "estimate.bytes", -1), card = int_at(d, "estimate.card", 0);
	if (!ok || bytes < 0)
		return NULL;
	estimate_peak_words(bytes, peak, card > 0 ? card : 0, card > 0 ? v : EST_V_UNKNOWN, at,
			    buf, sizeof buf);
	return strdup(buf);
}

/* Takes one event line; returns UI_RT_* bits. */
static unsigned take_event(struct ui_retry *r, const char *line, size_t len)
{
	struct doc *d = NULL;
	struct err e;
	if (doc_load("events", line, len, &d, &e) != ERR_OK)
		return 0;
	unsigned bits = UI_RT_CHANGED;
	char *type = str_at(d, "event");
	enum retry_event ev = retry_event_parse(type); /* RETRY_EV_COUNT: not one of ours */
	long long n = int_at(d, "try", -1);
	struct ui_try *t = try_numbered(r, n);
	if (ev == RETRY_EV_COUNT) {
		bits = 0;
	} else if (ev == RETRY_EV_TRY) {
		struct ui_try *nt = realloc(r->tries, (r->ntries + 1) * sizeof *nt);
		if (nt) {
			r->tries = nt;
			t = &r->tries[r->ntries++];
			memset(t, 0, sizeof *t);
			t->n = (int)n;
			t->index = (int)int_at(d, "index", 0);
			t->log = str_at(d, "log");
			t->estimate = estimate_words(d);
			bits |= UI_RT_TRY;
		}
	} else if (ev == RETRY_EV_TAKEN && t) {
		free(t->taken);
		t->taken = str_at(d, "status");
	} else if (ev == RETRY_EV_WAITING && t) {
		free(t->waiting);
		t->waiting = str_at(d, "text");
	} else if (ev == RETRY_EV_VERDICT && t) {
		bool b = false;
		const struct doc_node *o = doc_get(d, "oom");
		t->judged = true;
		t->oom = o && doc_as_bool(o, &b) && b;
		char *timing = str_at(d, "timing_letter");
		snprintf(t->timing, sizeof t->timing, "%s", timing ? timing : "");
		free(timing);
		free(t->summary);
		t->summary = str_at(d, "summary");
	} else if (ev == RETRY_EV_FIX && t) {
		try_forget_fix(t);
		t->fix = str_at(d, "fix");
		t->title = str_at(d, "title");
		t->note = str_at(d, "note");
		t->lesson = str_at(d, "lesson");
		const struct doc_node *c = doc_deref(doc_get(d, "changes"));
		if (c && c->kind == DOC_SEQ && c->n && (t->changes = calloc(c->n, sizeof *t->changes))) {
			for (size_t i = 0; i < c->n; i++) {
				const struct doc_node *it = doc_deref(c->items[i]);
				if (it && it->kind == DOC_SCALAR && (t->changes[t->nchanges] = strdup(it->value)))
					t->nchanges++;
			}
		}
		bits |= UI_RT_FIX;
	} else if (ev == RETRY_EV_END) {
		r->ended = true;
		r->status = (int)int_at(d, "status", ERR_SOFTWARE);
		char *o = str_at(d, "outcome");
		/* through the table: an outcome this build does not know is an error */
		r->outcome = retry_outcome_parse(o);
		free(o);
		free(r->text);
		r->text = str_at(d, "text");
	}
	free(type);
	doc_free(&d);
	return bits;
}

/* Reads what the events pipe holds now; true at its end. */
static bool read_events(struct ui_retry *r, unsigned *bits)
{
	char buf[8192];
	for (;;) {
		ssize_t got = read(r->ev_fd, buf, sizeof buf);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return false; /* EAGAIN: nothing more now */
		if (got == 0)
			return true;
		for (ssize_t i = 0; i < got; i++) {
			if (buf[i] == '\n') {
				if (r->len && r->len <= MAX_LINE)
					*bits |= take_event(r, r->line, r->len);
				r->len = 0;
				continue;
			}
			if (r->len >= MAX_LINE) {
				r->len = MAX_LINE + 1; /* too long: dropped at its newline */
				continue;
			}
			if (!ARRAY_GROW(r->line, r->len + 2, r->cap))
				continue;
			r->line[r->len++] = buf[i];
		}
	}
}

/* Keeps the last lines of what the retry printed for people (its errors say file and line). */
static bool read_err(struct ui_retry *r)
{
	char buf[4096];
	for (;;) {
		ssize_t got = read(r->err_fd, buf, sizeof buf);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return got == 0;
		size_t g = (size_t)got, cap = sizeof r->err - 1;
		if (g >= cap) {
			memcpy(r->err, buf + g - cap, cap);
			r->errlen = cap;
		} else {
			if (r->errlen + g > cap) {
				size_t drop = r->errlen + g - cap;
				memmove(r->err, r->err + drop, r->errlen - drop);
				r->errlen -= drop;
			}
			memcpy(r->err + r->errlen, buf, g);
			r->errlen += g;
		}
		r->err[r->errlen] = '\0';
	}
}

void ui_retry_last_error(const struct ui_retry *r, char *buf, size_t sz)
{
	/* the last line that says something */
	size_t end = r->errlen;
	while (end && (r->err[end - 1] == '\n' || r->err[end - 1] == ' '))
		end--;
	size_t start = end;
	while (start && r->err[start - 1] != '\n')
		start--;
	snprintf(buf, sz, "%.*s", (int)(end - start), r->err + start);
}

unsigned ui_retry_poll(struct ui_retry *r)
{
	unsigned bits = 0;
	if (!ui_retry_running(r))
		return 0;
	bool ev_end = r->ev_fd < 0 || read_events(r, &bits);
	bool err_end = r->err_fd < 0 || read_err(r);
	if (ev_end && r->ev_fd >= 0) {
		close(r->ev_fd);
		r->ev_fd = -1;
	}
	if (err_end && r->err_fd >= 0) {
		close(r->err_fd);
		r->err_fd = -1;
	}
	int st;
	pid_t w = waitpid(r->pid, &st, WNOHANG);
	if (w == r->pid || (w < 0 && errno == ECHILD)) {
		/* Gone: whatever it still had written is read first. */
		if (r->ev_fd >= 0) {
			read_events(r, &bits);
			close(r->ev_fd);
			r->ev_fd = -1;
		}
		if (r->err_fd >= 0) {
			read_err(r);
			close(r->err_fd);
			r->err_fd = -1;
		}
		if (!r->ended) {
			/* it died without saying how the loop ended */
			r->ended = true;
			r->status = w == r->pid && WIFEXITED(st) ? WEXITSTATUS(st) : ERR_SOFTWARE;
			r->outcome = RETRY_OUT_ERROR;
		}
		r->pid = 0;
		bits |= UI_RT_END | UI_RT_CHANGED;
	}
	return bits;
}

/* Appends "  retry T/M" (the T-th run of at most M) to a header while a retry runs. */
void ui_retry_progress(const struct ui_retry *r, char *buf, size_t sz)
{
	size_t k = strlen(buf);
	if (!ui_retry_running(r) || !r->ntries || k >= sz)
		return;
	const struct ui_try *t = &r->tries[r->ntries - 1];
	if (t->index > 0) /* the try's number is in its log's name, beside */
		snprintf(buf + k, sz - k, _("  retry %d/%d"), t->index, r->max_tries);
}
