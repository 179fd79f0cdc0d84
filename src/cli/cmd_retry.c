/* cmd_retry.c — `oomfix retry [--max-tries N] [--probe STEPS] [--grace SECONDS] JOB -- CMD...`:
 * run the training command; while it dies of GPU out-of-memory, apply the first fix for that
 * failure (SPEC §3.4) to JOB and run it again — one change, then a run (SPEC §11).
 *
 * Each try runs CMD in a process group of its own, with its output shown and written to
 * JOB.oomfix-runs/<n>.log. A failed try is diagnosed from that log with the job; the fix is saved
 * with the careful save (JOB~ keeps the previous version) and a journal entry naming the try.
 * Exit status: 0 when a run finishes (or passes the probe), 65 when a run fails for a reason that
 * is not GPU memory, 69 when the verdict is E, when no fix acts on the failing phase, when CMD
 * cannot be run, or after N tries, 130 on Ctrl-C (the child's group gets SIGINT, then SIGTERM
 * after the grace period, then SIGKILL; nothing of it is left running).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include "oomfix/diag.h"
#include "oomfix/doc.h"
#include "oomfix/err.h"
#include "oomfix/i18n.h"
#include "oomfix/job.h"
#include "oomfix/plan.h"
#include "oomfix/save.h"
#include "oomfix/text.h"
#include "cli.h"

#define EXIT_INTERRUPTED 130
#define DEFAULT_TRIES 6
#define DEFAULT_GRACE 10.0

static volatile sig_atomic_t stop_requests; /* Ctrl-C, SIGTERM, SIGHUP received */

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requests++;
}

static void help(FILE *fp)
{
	fputs(_("Usage: oomfix retry [--max-tries N] [--probe STEPS] [--grace SECONDS] JOB -- CMD [ARG...]\n"
		"\n"
		"Runs CMD (for example: python run.py JOB) until the job fits on the card. When a run\n"
		"dies of GPU out-of-memory, the first fix for that failure is applied to JOB (only a\n"
		"fix that acts on the phase that failed), saved (JOB~ keeps the previous version, the\n"
		"journal JOB.oomfix.md names the try), and CMD runs again. Each run's output is shown\n"
		"and written to JOB.oomfix-runs/<n>.log.\n"
		"\n"
		"  --max-tries N     stop after N runs (default 6)\n"
		"  --probe STEPS     a run that gets STEPS training steps past the step where the\n"
		"                    previous one failed, and through a sampling round, fits: it is\n"
		"                    stopped and the job is kept\n"
		"  --grace SECONDS   how long a stopped run gets after SIGINT before SIGTERM, and\n"
		"                    after SIGTERM before SIGKILL (default 10)\n"
		"\n"
		"Exit status: 0 a run finished or passed the probe; 65 a run failed for a reason that\n"
		"is not GPU memory, or the job is invalid; 69 the worker is at fault (verdict E), no\n"
		"fix acts on the failing phase, CMD cannot be run, or N runs did not fit; 64 usage;\n"
		"66 cannot open JOB; 75 JOB changed on disk while a run went on; 130 interrupted.\n"),
	      fp);
}

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "oomfix retry: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	fprintf(stderr, "%s\n", _("Try 'oomfix retry --help'."));
	return ERR_USAGE;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Writes everything (short writes, EINTR). */
static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Prints s wrapped to 78 cells after `indent` blanks, on stderr. */
static void put_wrapped(const char *s, int indent)
{
	size_t len = strlen(s);
	while (len) {
		size_t next, cut = text_wrap_next(s, len, 78 - indent, &next);
		fprintf(stderr, "%*s%.*s\n", indent, "", (int)cut, s);
		s += next;
		len -= next;
	}
}

/* ---- watching a run ---------------------------------------------------------------------- */

/* What a running try has shown so far, read from its output as it comes (ANSI codes dropped,
 * split on \r and \n): the training bar's step and the sampling rounds completed. */
struct live {
	const char *name;  /* config.name: the training bar's description */
	long long step;    /* completed training steps, -1 before the training bar */
	unsigned rounds;   /* sampling rounds that reached their total */
	bool sampling;     /* a sampling bar is below its total */
	long long skip_step; /* the step of the last OOM skip banner, -1 when none */
	char seg[4096];
	size_t len;
	int esc;           /* 0 text, 1 after ESC, 2 inside ESC [ ... */
};

static void live_segment(struct live *lv)
{
	static const char skip[] = "OOM during training step, skipping batch";
	struct diag_bar b;
	if (lv->len && memmem(lv->seg, lv->len, skip, sizeof skip - 1)) {
		/* the bar still advances over a skipped batch: that step did not fit */
		lv->skip_step = lv->step + 1;
		return;
	}
	if (!lv->len || !diag_parse_bar(lv->seg, lv->len, &b))
		return;
	size_t nl = lv->name ? strlen(lv->name) : 0;
	if ((nl && b.dlen == nl && !memcmp(b.desc, lv->name, nl)) || b.lrloss) {
		lv->step = b.n;
	} else if (diag_is_sampling_bar(b.desc, b.dlen)) {
		if (b.n < b.total)
			lv->sampling = true;
		else if (lv->sampling && b.total > 0) {
			lv->rounds++;
			lv->sampling = false;
		}
	}
}

static void live_feed(struct live *lv, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		if (lv->esc == 1) {
			lv->esc = c == '[' ? 2 : 0;
			continue;
		}
		if (lv->esc == 2) {
			if (c >= 0x40 && c <= 0x7e)
				lv->esc = 0;
			continue;
		}
		if (c == 0x1b) {
			lv->esc = 1;
		} else if (c == '\r' || c == '\n') {
			live_segment(lv);
			lv->len = 0;
		} else if (lv->len < sizeof lv->seg) {
			lv->seg[lv->len++] = (char)c;
		}
	}
	live_segment(lv); /* a bar frame is complete without its \r: tqdm writes \r first */
}

struct try_result {
	bool exited;          /* exited normally with `status` */
	int status;
	int signal;           /* killed by this signal, or 0 */
	int exec_errno;       /* CMD could not be started */
	bool interrupted;     /* the user stopped the loop */
	bool probe_passed;    /* stopped by us because the probe was passed */
	long long step;       /* the last training step seen */
};

struct retry {
	const char *job_path;
	char **cmd;
	int max_tries;
	long long probe;      /* 0 = no probe */
	double grace;
};

/* Sends `sig` to the whole process group of the try. */
static void signal_group(pid_t pgid, int sig)
{
	if (kill(-pgid, sig) != 0 && errno == ESRCH)
		return;
}

static bool group_alive(pid_t pgid)
{
	return kill(-pgid, 0) == 0 || errno == EPERM;
}

/* Waits at most `secs` for every process of the group to be gone. */
static void wait_group_gone(pid_t pgid, double secs)
{
	double until = now_s() + secs;
	while (group_alive(pgid) && now_s() < until) {
		struct timespec ts = { 0, 20 * 1000000L };
		nanosleep(&ts, NULL);
	}
}

/* Starts CMD in a new process group with stdout and stderr into a pipe and stdin from
 * /dev/null (it must never read the terminal oomfix is reading). Returns the child's pid, or -1
 * with *exec_errno set when CMD could not be started. */
static pid_t spawn(char **cmd, int *out_fd, int *exec_errno)
{
	int p[2], ep[2];
	*exec_errno = 0;
	if (pipe2(p, O_CLOEXEC) != 0)
		return *exec_errno = errno, -1;
	if (pipe2(ep, O_CLOEXEC) != 0) {
		*exec_errno = errno;
		close(p[0]), close(p[1]);
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		*exec_errno = errno;
		close(p[0]), close(p[1]), close(ep[0]), close(ep[1]);
		return -1;
	}
	if (pid == 0) {
		setpgid(0, 0);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		int dn = open("/dev/null", O_RDONLY);
		if (dn >= 0)
			dup2(dn, 0);
		dup2(p[1], 1);
		dup2(p[1], 2);
		execvp(cmd[0], cmd);
		int err = errno;
		if (write(ep[1], &err, sizeof err) < 0)
			_exit(127);
		_exit(127);
	}
	setpgid(pid, pid); /* also here: whichever runs first, the group exists before a signal */
	close(p[1]);
	close(ep[1]);
	int err = 0;
	ssize_t r;
	while ((r = read(ep[0], &err, sizeof err)) < 0 && errno == EINTR)
		;
	close(ep[0]);
	if (r == (ssize_t)sizeof err) {
		*exec_errno = err;
		waitpid(pid, NULL, 0);
		close(p[0]);
		return -1;
	}
	*out_fd = p[0];
	return pid;
}

/* Runs one try; its output goes to the terminal and to `logfd`. */
static void run_try(const struct retry *r, const struct job *j, long long probe_target, int logfd,
		    struct try_result *out)
{
	memset(out, 0, sizeof *out);
	out->step = -1;
	struct live lv = { .name = j->name, .step = -1, .skip_step = -1 };
	int fd;
	pid_t pid = spawn(r->cmd, &fd, &out->exec_errno);
	if (pid < 0)
		return;

	/* Stopping escalates: SIGINT (the trainer stops cleanly), then SIGTERM, then SIGKILL. */
	int stage = 0;
	double deadline = 0;
	sig_atomic_t seen = stop_requests;
	bool eof = false, reaped = false;
	double reaped_at = 0;
	int wst = 0;
	char buf[65536];

	for (;;) {
		if (stop_requests != seen) {
			seen = stop_requests;
			out->interrupted = true;
			if (stage == 0) {
				fprintf(stderr, "\n%s\n", _("oomfix retry: stopping the run (SIGINT to its "
							      "process group)..."));
				signal_group(pid, SIGINT);
				stage = 1;
				deadline = now_s() + r->grace;
			} else {
				deadline = now_s(); /* another Ctrl-C: no more waiting */
			}
		}
		if (stage > 0 && now_s() >= deadline && (!reaped || group_alive(pid))) {
			if (stage == 1) {
				signal_group(pid, SIGTERM);
				stage = 2;
				deadline = now_s() + r->grace;
			} else if (stage == 2) {
				signal_group(pid, SIGKILL);
				stage = 3;
			}
		}
		if (!reaped) {
			pid_t w = waitpid(pid, &wst, WNOHANG);
			if (w == pid) {
				reaped = true;
				reaped_at = now_s();
			}
		}
		/* Done when the output is closed and the child is gone; a grandchild that keeps the
		 * pipe open gets a second to finish, then the group is stopped below. */
		if (reaped && (eof || now_s() - reaped_at > 1.0))
			break;
		if (eof && !reaped) {
			struct timespec ts = { 0, 50 * 1000000L };
			nanosleep(&ts, NULL);
			continue;
		}
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		int pr = poll(&pf, 1, 100);
		if (pr < 0 && errno != EINTR)
			break;
		if (pr <= 0)
			continue;
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			eof = true;
			continue;
		}
		write_all(STDOUT_FILENO, buf, (size_t)n); /* a closed terminal does not stop the run */
		if (write_all(logfd, buf, (size_t)n) != 0 && !out->interrupted)
			fprintf(stderr, "%s\n", _("oomfix retry: cannot write the run's log"));
		live_feed(&lv, buf, (size_t)n);
		if (probe_target > 0 && stage == 0 && lv.step >= probe_target &&
		    (lv.skip_step < 0 || lv.step >= lv.skip_step + r->probe) &&
		    (j->disable_sampling || lv.rounds > 0)) {
			out->probe_passed = true;
			fprintf(stderr, "\n%s\n", _("oomfix retry: the probe is passed; stopping the run..."));
			signal_group(pid, SIGINT);
			stage = 1;
			deadline = now_s() + r->grace;
		}
	}
	close(fd);
	if (!reaped)
		waitpid(pid, &wst, 0);
	/* Nothing of the try may outlive it: whatever is left in its group is stopped too, and
	 * oomfix returns only once the group is gone (a killed process lingers until reaped). */
	if (group_alive(pid) && stage < 3) {
		signal_group(pid, SIGTERM);
		wait_group_gone(pid, r->grace);
	}
	if (group_alive(pid)) {
		signal_group(pid, SIGKILL);
		wait_group_gone(pid, 5.0);
	}
	out->step = lv.step;
	if (WIFEXITED(wst)) {
		out->exited = true;
		out->status = WEXITSTATUS(wst);
	} else if (WIFSIGNALED(wst)) {
		out->signal = WTERMSIG(wst);
	}
}

/* ---- the loop ---------------------------------------------------------------------------- */

/* "B: out of memory in training step 5" — the verdict in a few words. */
static void verdict_words(const struct diag_result *v, char *buf, size_t sz)
{
	static const char letters[DIAG_T_COUNT] = { '-', 'A', 'B', 'C', 'D', 'E' };
	char what[300];
	switch (v->timing) {
	case DIAG_T_BEFORE_TRAINING:
		snprintf(what, sizeof what, _("out of memory before training, %s"),
			 diag_phase_label(v->phase));
		break;
	case DIAG_T_FIRST_STEPS:
		snprintf(what, sizeof what, _("out of memory in training step %lld, one of the first"),
			 v->failed_step);
		break;
	case DIAG_T_SAMPLING:
		snprintf(what, sizeof what, _("out of memory while sampling at step %lld"),
			 v->failed_step);
		break;
	case DIAG_T_INTERMITTENT:
		snprintf(what, sizeof what, _("out of memory now and then, last in training step %lld"),
			 v->failed_step);
		break;
	case DIAG_T_ENVIRONMENT:
		snprintf(what, sizeof what, _("out of memory with the card held elsewhere, %s"),
			 diag_phase_label(v->phase));
		break;
	default:
		snprintf(what, sizeof what, "%s", _("out of memory"));
		break;
	}
	snprintf(buf, sz, "%c: %s", letters[v->timing < DIAG_T_COUNT ? v->timing : 0], what);
}

/* The number after the highest "<n>.log" in dir (1 for an empty or new folder), so a second
 * retry never overwrites the logs of an earlier one. */
static int next_log_number(const char *dir)
{
	int max = 0;
	DIR *d = opendir(dir);
	if (!d)
		return 1;
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		long v = strtol(de->d_name, &end, 10);
		if (end != de->d_name && !strcmp(end, ".log") && v > max && v < 1000000)
			max = (int)v;
	}
	closedir(d);
	return max + 1;
}

static int load_job(const char *path, struct save_stamp *st, struct doc **d, struct job **j,
		    struct err *e)
{
	int rc = save_stamp(path, st, e);
	if (rc)
		return rc;
	if ((rc = doc_load_file(path, d, e)) != ERR_OK)
		return rc;
	if ((rc = job_from_doc(*d, j, e)) != ERR_OK)
		doc_free(d);
	return rc;
}

/* Applies `id` to the job and saves it with a journal entry naming the try. Prints the try's
 * line: "try N: <verdict> → fix: path: old → new; ...". */
static int apply_fix(const struct retry *r, int n, const char *logpath, const char *words,
		     struct doc *d, const struct job *j, const struct save_stamp *st, enum fix_id id,
		     struct err *e)
{
	struct fix_edit_list l;
	int rc = fix_edits(j, id, true, &l, e);
	if (rc)
		return rc;
	struct doc *nd = NULL;
	rc = doc_apply(d, l.edits, l.n, &nd, e);
	char note[512];
	snprintf(note, sizeof note, "%s", l.note);
	fix_edits_free(&l);
	if (rc) {
		doc_free(&nd);
		return rc;
	}
	size_t len;
	const char *text = doc_text(nd, &len);
	rc = save_file(r->job_path, text, len, st, SAVE_BACKUP, true, e);
	if (rc) {
		doc_free(&nd);
		return rc;
	}
	char **changes;
	size_t nchanges = doc_changes(d, nd, &changes);
	char jnote[1024];
	snprintf(jnote, sizeof jnote, _("oomfix retry, try %d (%s); its log: %s"), n, words, logpath);
	const char *fixes[1] = { fix_name(id) };
	struct err je;
	if (save_journal_note(r->job_path, jnote, fixes, 1, (const char *const *)changes, nchanges,
			      &je) != ERR_OK)
		err_print(&je, stderr);

	fprintf(stderr, _("oomfix retry: try %d: %s → %s:"), n, words, fix_name(id));
	for (size_t i = 0; i < nchanges; i++)
		fprintf(stderr, "%s %s", i ? ";" : "", changes[i]);
	fputc('\n', stderr);
	doc_changes_free(changes, nchanges);
	doc_free(&nd);
	if (note[0])
		put_wrapped(note, 2);
	char lesson[1024];
	snprintf(lesson, sizeof lesson, _("Lesson: %s"), _(fix_defs[id].lesson));
	put_wrapped(lesson, 2);
	return ERR_OK;
}

static int retry_loop(const struct retry *r)
{
	char *dir = NULL, *logpath = NULL;
	if (asprintf(&dir, "%s.oomfix-runs", r->job_path) < 0)
		return ERR_SOFTWARE;
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, _("oomfix retry: cannot create %s: %s\n"), dir, strerror(errno));
		free(dir);
		return ERR_CANTCREAT;
	}
	int first = next_log_number(dir);
	long long prev_fail = 0; /* the step the previous try failed at (0: before training) */
	int status = ERR_UNAVAILABLE;

	for (int t = 1; t <= r->max_tries; t++) {
		int n = first + t - 1;
		if (stop_requests) {
			/* Ctrl-C while the last log was read or the fix saved: no new run. */
			fprintf(stderr, "%s\n", _("oomfix retry: interrupted before the next run."));
			status = EXIT_INTERRUPTED;
			break;
		}
		struct err e;
		err_clear(&e);
		struct save_stamp st;
		struct doc *d = NULL;
		struct job *j = NULL;
		int rc = load_job(r->job_path, &st, &d, &j, &e);
		if (rc) {
			err_print(&e, stderr);
			status = rc;
			break;
		}
		free(logpath);
		logpath = NULL;
		if (asprintf(&logpath, "%s/%d.log", dir, n) < 0) {
			job_free(&j), doc_free(&d);
			status = ERR_SOFTWARE;
			break;
		}
		int logfd = open(logpath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (logfd < 0) {
			fprintf(stderr, _("oomfix retry: cannot create %s: %s\n"), logpath, strerror(errno));
			job_free(&j), doc_free(&d);
			status = ERR_CANTCREAT;
			break;
		}
		fprintf(stderr, _("oomfix retry: try %d (%d of at most %d), log %s\n"), n, t,
			r->max_tries, logpath);
		struct try_result tr;
		long long target = r->probe > 0 ? prev_fail + r->probe : 0;
		run_try(r, j, target, logfd, &tr);
		close(logfd);

		if (tr.exec_errno) {
			fprintf(stderr, _("oomfix retry: cannot run %s: %s\n"), r->cmd[0],
				strerror(tr.exec_errno));
			status = ERR_UNAVAILABLE;
		} else if (tr.interrupted) {
			fprintf(stderr, _("oomfix retry: try %d: interrupted; the run was stopped and the "
					  "job is as the last try left it.\n"), n);
			status = EXIT_INTERRUPTED;
		} else if (tr.probe_passed) {
			fprintf(stderr, _("oomfix retry: try %d: passed the probe at step %lld: the job "
					  "fits.\n"), n, tr.step);
			status = 0;
		} else {
			status = -1; /* decided below from the log */
		}
		if (status != -1) {
			job_free(&j), doc_free(&d);
			break;
		}

		struct diag_result *v = calloc(1, sizeof *v);
		struct diag_job_info info = { j->name, (int)j->kind, job_is_conservative(j) ? 1 : 0 };
		if (!v || diag_file(logpath, &info, v, &e) != ERR_OK) {
			if (v)
				err_print(&e, stderr);
			free(v);
			job_free(&j), doc_free(&d);
			status = ERR_IOERR;
			break;
		}
		char words[400];
		if (tr.exited && tr.status == 0) {
			fprintf(stderr, _("oomfix retry: try %d: the run finished: the job fits.\n"), n);
			if (v->oom && v->survived) {
				verdict_words(v, words, sizeof words);
				fprintf(stderr, _("  It survived out-of-memory skips (%s); they cost those "
						  "batches.\n"), words);
			}
			char text[512];
			if (scaleup_next(j, SCALEUP_NONE, text, sizeof text) != SCALEUP_NONE)
				put_wrapped(text, 2);
			status = 0;
		} else if (!v->oom) {
			const char *why = diag_other_name(v->other);
			fprintf(stderr, _("oomfix retry: try %d failed, but not for GPU memory (%s): no "
					  "memory fix applies; see oomfix diagnose %s\n"), n,
				why ? why : _("see the log"), logpath);
			status = ERR_DATA;
		} else {
			struct plan p;
			plan_build(j, v, &p);
			verdict_words(v, words, sizeof words);
			if (p.first_fix == FIX_FRESH_WORKER) {
				fprintf(stderr, _("oomfix retry: try %d: %s → %s\n"), n, words,
					fix_name(FIX_FRESH_WORKER));
				put_wrapped(_(fix_defs[FIX_FRESH_WORKER].why), 2);
				status = ERR_UNAVAILABLE;
			} else if (p.first_fix == FIX_NONE) {
				char text[512];
				plan_exhausted_text(&p, j, text, sizeof text);
				fprintf(stderr, _("oomfix retry: try %d: %s\n"), n, words);
				put_wrapped(text[0] ? text : _("No fix is left for this failure."), 2);
				status = ERR_UNAVAILABLE;
			} else if (t == r->max_tries) {
				/* One change, then a run: a change no run will test is not made. */
				fprintf(stderr, _("oomfix retry: try %d: %s; stopping after %d tries (the next "
						  "fix would be %s).\n"), n, words, r->max_tries,
					fix_name(p.first_fix));
				status = ERR_UNAVAILABLE;
			} else {
				rc = apply_fix(r, n, logpath, words, d, j, &st, p.first_fix, &e);
				if (rc) {
					err_print(&e, stderr);
					status = rc;
				}
				prev_fail = v->failed_step > 0 ? v->failed_step : 0;
			}
		}
		free(v);
		job_free(&j);
		doc_free(&d);
		if (status != -1)
			break;
	}
	free(logpath);
	free(dir);
	return status;
}

int cmd_retry(int argc, char **argv)
{
	enum { O_PROBE = 256, O_GRACE };
	static const struct option opts[] = {
		{ "max-tries", required_argument, NULL, 'n' },
		{ "probe", required_argument, NULL, O_PROBE },
		{ "grace", required_argument, NULL, O_GRACE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct retry r = { .max_tries = DEFAULT_TRIES, .grace = DEFAULT_GRACE };
	int c;
	char *end;
	optind = 1;
	opterr = 0;
	/* '+': options end at JOB, so CMD's own options are never read as ours */
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			r.max_tries = (int)strtol(optarg, &end, 10);
			if (*end || r.max_tries < 1 || r.max_tries > 1000)
				return usage_error(_("--max-tries wants a number from 1 to 1000, not '%s'"),
						   optarg);
			break;
		case O_PROBE:
			r.probe = strtoll(optarg, &end, 10);
			if (*end || r.probe < 1)
				return usage_error(_("--probe wants a positive number of steps, not '%s'"),
						   optarg);
			break;
		case O_GRACE:
			r.grace = strtod(optarg, &end);
			if (*end || !(r.grace >= 0 && r.grace <= 3600))
				return usage_error(_("--grace wants seconds from 0 to 3600, not '%s'"), optarg);
			break;
		case 'h':
			help(stdout);
			return 0;
		default:
			return usage_error(_("unknown or incomplete option '%s'"), argv[optind - 1]);
		}
	}
	if (optind < argc && !strcmp(argv[optind], "--"))
		optind++;
	if (optind >= argc)
		return usage_error("%s", _("expected JOB -- CMD [ARG...]"));
	r.job_path = argv[optind++];
	if (optind >= argc || strcmp(argv[optind], "--") != 0 || optind + 1 >= argc)
		return usage_error("%s", _("expected JOB -- CMD [ARG...]"));
	r.cmd = argv + optind + 1;

	if (!strncmp(r.job_path, "aitk:", 5)) {
		/* Hook for the web UI's jobs (SPEC §10, §11): there is no CMD then; oomfix queues the
		 * job in aitk_db.db and follows the UI's worker through the database. A try is one
		 * queued run, and its log is <training_folder>/<name>/log.txt. */
		fprintf(stderr, "%s\n", _("oomfix retry: jobs of the AI Toolkit web UI (aitk:NAME) "
					  "are not supported by this build yet; retry the job file "
					  "with a command instead."));
		return ERR_USAGE;
	}

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop_signal; /* no SA_RESTART: poll() wakes up at once */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return retry_loop(&r);
}
