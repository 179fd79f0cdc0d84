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
#include <stdarg.h>
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
#include "oomfix/json.h"
#include "oomfix/plan.h"
#include "oomfix/save.h"
#include "oomfix/source.h"
#include "oomfix/aitkdb.h"
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

/* ---- events for a program driving the loop (--events FD) --------------------------------
 *
 * One JSON object per line, flushed as it happens, so another program (the UI's retry key, a
 * script with jq) can list the tries without reading the sentences meant for people:
 *   {"event":"try","try":N,"index":T,"max_tries":M,"log":PATH}  a run starts (or is queued)
 *   {"event":"taken","try":N,"status":S}          the web UI's worker took the queued job
 *   {"event":"waiting","try":N,"text":S}         it has not, for long: what the worker needs
 *   {"event":"verdict","try":N,"oom":B,"timing":T,"phase":P,"step":K,"summary":S}
 *   {"event":"fix","try":N,"fix":ID,"title":S,"changes":[...],"note":S,"lesson":S}
 *   {"event":"end","try":N,"status":X,"outcome":O,"text":S}   the loop is over; X its exit status
 * Outcomes: fits, probe, not_oom, worker, exhausted, unknown (the log does not show when it ran
 * out), max_tries, interrupted, stopped, error.
 */
static FILE *events;           /* NULL: no events asked for */
static struct json ev;
static const char *outcome;    /* how the loop ended, for the end event */
static char outcome_text[1024];

static void ev_open(const char *type, int n)
{
	json_init(&ev, events, false);
	json_obj_begin(&ev);
	json_key(&ev, "event");
	json_str(&ev, type);
	if (n >= 0) {
		json_key(&ev, "try");
		json_int(&ev, n);
	}
}

static void ev_close(void)
{
	json_obj_end(&ev);
	json_finish(&ev);
	fflush(events);
}

/* Remembers how the loop ended (the first outcome set wins: it is the cause). */
static void set_outcome(const char *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_outcome(const char *o, const char *fmt, ...)
{
	if (outcome)
		return;
	outcome = o;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(outcome_text, sizeof outcome_text, fmt, ap);
	va_end(ap);
}

static const char interrupted_text[] =
	N_("Interrupted: the run was stopped, and the job is as the last try left it.");
static const char probe_text[] = N_("The run passed the probe at step %lld: the job fits.");

static int ev_try_n = -1; /* the try under way (0: the log given with --log) */

static void ev_try(int n, int t, int max, const char *logpath)
{
	ev_try_n = n;
	if (!events)
		return;
	ev_open("try", n);
	json_key(&ev, "index");
	json_int(&ev, t);
	json_key(&ev, "max_tries");
	json_int(&ev, max);
	json_key(&ev, "log");
	json_str(&ev, logpath);
	ev_close();
}

static void help(FILE *fp)
{
	fputs(_("Usage: oomfix retry [--max-tries N] [--probe STEPS] [--grace SECONDS] [--log LOG]\n"
		"                    [--events FD] JOB -- CMD [ARG...]\n"
		"       oomfix retry [--aitk DIR] [--max-tries N] [--probe STEPS] [--log LOG]\n"
		"                    [--events FD] aitk:NAME\n"
		"\n"
		"Runs CMD (for example: python run.py JOB) until the job fits on the card. When a run\n"
		"dies of GPU out-of-memory, the first fix for that failure is applied to JOB (only a\n"
		"fix that acts on the phase that failed), saved (JOB~ keeps the previous version, the\n"
		"journal JOB.oomfix.md names the try), and CMD runs again. Each run's output is shown\n"
		"and written to JOB.oomfix-runs/<n>.log.\n"
		"\n"
		"A web UI job (aitk:NAME) takes no CMD: oomfix queues it as the UI's start button\n"
		"does, follows the UI's worker through the database and shows the run's log.txt (a\n"
		"copy is kept in its run folder, job_config.json.oomfix-runs/<n>.log); fixes are\n"
		"saved into the database. The probe stops a run with the job's stop flag, as the\n"
		"UI's stop button does. Ctrl-C leaves the job alone in the UI. A job that is\n"
		"running is refused (75): oomfix starts the runs itself.\n"
		"\n"
		"  --max-tries N     stop after N runs (default 6)\n"
		"  --probe STEPS     a run that gets STEPS training steps past the step where the\n"
		"                    previous one failed, and through a sampling round, fits: it is\n"
		"                    stopped and the job is kept\n"
		"  --grace SECONDS   how long a stopped run gets after SIGINT before SIGTERM, and\n"
		"                    after SIGTERM before SIGKILL (default 10)\n"
		"  --log LOG         LOG is a failed run of JOB as it is now: apply its fix before\n"
		"                    the first run instead of repeating that run\n"
		"  --events FD       also write each try, verdict, fix and the end as one JSON\n"
		"                    object per line to file descriptor FD (for programs)\n"
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
	const char *from_log; /* --log: a failed run of the job as it is, whose fix comes first */
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

/* How a try is named in what is printed: "try 3", or the log given with --log (number 0). */
static void try_label(int n, char *buf, size_t sz)
{
	if (n > 0)
		snprintf(buf, sz, _("try %d"), n);
	else
		snprintf(buf, sz, "%s", _("the log given"));
}

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
		if (v->phase != DIAG_P_NONE)
			snprintf(what, sizeof what, _("out of memory, %s (the log does not show the "
						      "step)"), diag_phase_label(v->phase));
		else
			snprintf(what, sizeof what, "%s", _("out of memory (the log does not show when)"));
		snprintf(buf, sz, "?: %s", what);
		return;
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
		     struct doc *d, const struct job *j, const struct save_stamp *st,
		     struct source *src, enum fix_id id, struct err *e)
{
	/* src: a web UI job, saved into its database row (the previous job_config kept beside
	 * its log); NULL: the file r->job_path. */
	const char *jpath = src ? source_path(src) : r->job_path;
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
	rc = src ? source_save(src, text, len, 0, e)
		 : save_file(r->job_path, text, len, st, SAVE_BACKUP, true, e);
	if (rc) {
		doc_free(&nd);
		return rc;
	}
	char **changes;
	size_t nchanges = doc_changes(d, nd, &changes);
	char jnote[1024];
	char label[64];
	try_label(n, label, sizeof label);
	snprintf(jnote, sizeof jnote, _("oomfix retry, %s (%s); its log: %s"), label, words, logpath);
	const char *fixes[1] = { fix_name(id) };
	struct err je;
	if (save_journal_note(jpath, jnote, fixes, 1, (const char *const *)changes, nchanges,
			      &je) != ERR_OK)
		err_print(&je, stderr);

	if (events) {
		ev_open("fix", n);
		json_key(&ev, "fix");
		json_str(&ev, fix_name(id));
		json_key(&ev, "title");
		json_str(&ev, _(fix_defs[id].title));
		json_key(&ev, "changes");
		json_arr_begin(&ev);
		for (size_t i = 0; i < nchanges; i++)
			json_str(&ev, changes[i]);
		json_arr_end(&ev);
		json_key(&ev, "note");
		json_str(&ev, note);
		json_key(&ev, "lesson");
		json_str(&ev, _(fix_defs[id].lesson));
		ev_close();
	}
	fprintf(stderr, _("oomfix retry: %s: %s → %s:"), label, words, fix_name(id));
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

/* Decides what a finished try means from its log (SPEC §11): the exit status of the loop, or -1
 * when the fix for its failure was applied and the loop goes on (*prev_fail gets the step it
 * failed at). */
static int judge(const struct retry *r, int n, int t, const struct try_result *tr,
		 const char *logpath, struct doc *d, const struct job *j, const struct save_stamp *st,
		 struct source *src, long long *prev_fail)
{
	struct err e;
	err_clear(&e);
	int rc, status = -1;
	struct diag_result *v = calloc(1, sizeof *v);
	struct diag_job_info info = { j->name, (int)j->kind, job_is_conservative(j) ? 1 : 0 };
	if (!v || diag_file(logpath, &info, v, &e) != ERR_OK) {
		if (v)
			err_print(&e, stderr);
		free(v);
		return ERR_IOERR;
	}
	char words[400], label[64];
	verdict_words(v, words, sizeof words);
	try_label(n, label, sizeof label);
	/* The log decides, not the exit status alone: a command that hides the trainer's status
	 * (`... | tee log`, a wrapper script) exits 0 over an out-of-memory that ended the run. */
	bool finished = tr->exited && tr->status == 0 && !(v->oom && !v->survived);
	if (tr->exited && tr->status == 0 && !finished)
		fprintf(stderr, _("oomfix retry: %s: the command exited 0, but its log shows the job "
				  "ran out of memory.\n"), label);
	if (events) {
		static const char letters[DIAG_T_COUNT][2] = { "", "A", "B", "C", "D", "E" };
		ev_open("verdict", n);
		json_key(&ev, "oom");
		json_bool(&ev, v->oom);
		json_key(&ev, "timing");
		if (v->oom && v->timing > 0 && v->timing < DIAG_T_COUNT)
			json_str(&ev, letters[v->timing]);
		else
			json_null(&ev);
		json_key(&ev, "phase");
		json_str(&ev, diag_phase_name(v->phase));
		json_key(&ev, "step");
		if (v->failed_step > 0)
			json_int(&ev, v->failed_step);
		else
			json_null(&ev);
		json_key(&ev, "summary");
		if (finished && v->oom) {
			char done[600];
			snprintf(done, sizeof done, _("the run finished, surviving out-of-memory skips "
						      "(%s)"), words);
			json_str(&ev, done);
		} else if (finished) {
			json_str(&ev, _("the run finished"));
		} else if (v->oom) {
			json_str(&ev, words);
		} else {
			char sentence[1024];
			diag_sentence(v, sentence, sizeof sentence);
			json_str(&ev, sentence);
		}
		ev_close();
	}
	if (finished) {
		fprintf(stderr, _("oomfix retry: try %d: the run finished: the job fits.\n"), n);
		set_outcome("fits", "%s", _("The run finished: the job fits."));
		if (v->oom && v->survived) {
			fprintf(stderr, _("  It survived out-of-memory skips (%s); they cost those "
					  "batches.\n"), words);
		}
		char text[512];
		if (scaleup_next(j, SCALEUP_NONE, text, sizeof text) != SCALEUP_NONE)
			put_wrapped(text, 2);
		status = 0;
	} else if (!v->oom) {
		const char *why = diag_other_name(v->other);
		fprintf(stderr, _("oomfix retry: %s failed, but not for GPU memory (%s): no "
				  "memory fix applies; see oomfix diagnose %s\n"), label,
			why ? why : _("see the log"), logpath);
		set_outcome("not_oom", _("The run failed, but not for GPU memory (%s): no memory fix "
					 "applies."), why ? why : _("see the log"));
		status = ERR_DATA;
	} else {
		struct plan p;
		plan_build(j, v, &p);
		if (p.first_fix == FIX_FRESH_WORKER) {
			fprintf(stderr, _("oomfix retry: %s: %s → %s\n"), label, words,
				fix_name(FIX_FRESH_WORKER));
			put_wrapped(_(fix_defs[FIX_FRESH_WORKER].why), 2);
			set_outcome("worker", "%s", _(fix_defs[FIX_FRESH_WORKER].why));
			status = ERR_UNAVAILABLE;
		} else if (p.first_fix == FIX_NONE && !p.exhausted) {
			/* The log does not show when it ran out (B or D cannot be told): no fix is
			 * chosen on a guess. */
			char text[512];
			snprintf(text, sizeof text, _("The log does not show when the job ran out of "
						      "memory, so no fix is chosen on a guess; oomfix "
						      "diagnose %s shows what it does show."), logpath);
			fprintf(stderr, _("oomfix retry: %s: %s\n"), label, words);
			put_wrapped(text, 2);
			set_outcome("unknown", "%s", text);
			status = ERR_UNAVAILABLE;
		} else if (p.first_fix == FIX_NONE) {
			char text[512];
			plan_exhausted_text(&p, j, text, sizeof text);
			fprintf(stderr, _("oomfix retry: %s: %s\n"), label, words);
			put_wrapped(text[0] ? text : _("No fix is left for this failure."), 2);
			set_outcome("exhausted", "%s", text[0] ? text : _("No fix is left for this failure."));
			status = ERR_UNAVAILABLE;
		} else if (t == r->max_tries) {
			/* One change, then a run: a change no run will test is not made. */
			fprintf(stderr, _("oomfix retry: try %d: %s; stopping after %d tries (the next "
					  "fix would be %s).\n"), n, words, r->max_tries,
				fix_name(p.first_fix));
			set_outcome("max_tries", _("Stopped after %d tries; the next fix would be %s."),
				    r->max_tries, fix_name(p.first_fix));
			status = ERR_UNAVAILABLE;
		} else {
			rc = apply_fix(r, n, logpath, words, d, j, st, src, p.first_fix, &e);
			if (rc) {
				err_print(&e, stderr);
				status = rc;
			}
			*prev_fail = v->failed_step > 0 ? v->failed_step : 0;
		}
	}
	free(v);
	return status;
}

/* A web UI job that is running is the UI's: the loop starts its runs itself (75). */
static int refuse_running(const struct source *s)
{
	fprintf(stderr, _("oomfix retry: %s is running in the web UI; oomfix starts the runs "
			  "itself: stop it there (or let it end), then try again.\n"),
		source_label(s));
	set_outcome("error", _("%s is running in the web UI: stop it there (or let it end), then "
			       "try again."), source_label(s));
	return ERR_TEMPFAIL;
}

/* True when the log shows an OOM the job did not survive; false with e set when it cannot be read. */
static bool log_shows_oom(const char *log, const struct job *j, struct err *e)
{
	struct diag_result *v = calloc(1, sizeof *v);
	struct diag_job_info info = { j->name, (int)j->kind, job_is_conservative(j) ? 1 : 0 };
	if (!v) {
		err_set(e, ERR_SOFTWARE, NULL, 0, 0, "%s", strerror(ENOMEM));
		return false;
	}
	bool oom = diag_file(log, &info, v, e) == ERR_OK && v->oom && !v->survived;
	free(v);
	return oom;
}

/* --log LOG: LOG is the log of a run of JOB as it is now. Its failure is known, so its fix is
 * applied before the first run instead of repeating that run (it is "try 0": one change, then a
 * run, as ever). Refused (75) when a change was saved after LOG was written: LOG cannot show
 * whether that change helped. Returns the loop's exit status, or -1 to go on. */
static int start_from_log(const struct retry *r, long long *prev_fail)
{
	struct err e;
	err_clear(&e);
	struct source *s = NULL;
	struct doc *d = NULL;
	struct job *j = NULL;
	int status;
	int rc = cli_open_job(r->job_path, &s, &d, &j, &e);
	if (rc) {
		err_print(&e, stderr);
		set_outcome("error", "%s", e.msg);
		return rc;
	}
	time_t changed;
	if (source_log_untried(s, r->from_log, &changed)) {
		err_set(&e, ERR_TEMPFAIL, r->from_log, 0, 0, "%s",
			_("this log is older than the last change saved to the job, so it cannot show "
			  "whether that change helped; retry without --log runs the job first"));
		err_print(&e, stderr);
		set_outcome("error", "%s", e.msg);
		status = ERR_TEMPFAIL;
	} else if (source_running(s)) {
		status = refuse_running(s);
	} else if (!log_shows_oom(r->from_log, j, &e)) {
		if (e.code) {
			err_print(&e, stderr);
			set_outcome("error", "%s", e.msg);
			status = e.code;
		} else {
			fprintf(stderr, _("oomfix retry: %s shows no GPU out-of-memory error; the first "
					  "run is of the job as it is.\n"), r->from_log);
			status = -1;
		}
	} else {
		fprintf(stderr, _("oomfix retry: starting from %s\n"), r->from_log);
		ev_try(0, 0, r->max_tries, r->from_log);
		struct try_result tr = { .exited = true, .status = 1, .step = -1 };
		status = judge(r, 0, 0, &tr, r->from_log, d, j, NULL, s, prev_fail);
	}
	job_free(&j);
	doc_free(&d);
	source_free(&s);
	return status;
}

/* Ctrl-C while the last log was read or the fix saved: no new run is started. */
static bool interrupted_before_run(void)
{
	if (!stop_requests)
		return false;
	fprintf(stderr, "%s\n", _("oomfix retry: interrupted before the next run."));
	set_outcome("interrupted", "%s", _("Interrupted before the next run."));
	return true;
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
	int status = r->from_log ? start_from_log(r, &prev_fail) : -1;
	if (status != -1) {
		free(dir);
		return status;
	}
	status = ERR_UNAVAILABLE;

	for (int t = 1; t <= r->max_tries; t++) {
		int n = first + t - 1;
		if (interrupted_before_run()) {
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
		ev_try(n, t, r->max_tries, logpath);
		struct try_result tr;
		long long target = r->probe > 0 ? prev_fail + r->probe : 0;
		run_try(r, j, target, logfd, &tr);
		close(logfd);

		if (tr.exec_errno) {
			fprintf(stderr, _("oomfix retry: cannot run %s: %s\n"), r->cmd[0],
				strerror(tr.exec_errno));
			set_outcome("error", _("Cannot run %s: %s."), r->cmd[0], strerror(tr.exec_errno));
			status = ERR_UNAVAILABLE;
		} else if (tr.interrupted) {
			fprintf(stderr, _("oomfix retry: try %d: interrupted; the run was stopped and the "
					  "job is as the last try left it.\n"), n);
			set_outcome("interrupted", "%s", _(interrupted_text));
			status = EXIT_INTERRUPTED;
		} else if (tr.probe_passed) {
			fprintf(stderr, _("oomfix retry: try %d: passed the probe at step %lld: the job "
					  "fits.\n"), n, tr.step);
			set_outcome("probe", _(probe_text), tr.step);
			status = 0;
		} else {
			status = -1; /* decided below from the log */
		}
		if (status != -1) {
			job_free(&j), doc_free(&d);
			break;
		}

		status = judge(r, n, t, &tr, logpath, d, j, &st, NULL, &prev_fail);
		job_free(&j);
		doc_free(&d);
		if (status != -1)
			break;
	}
	free(logpath);
	free(dir);
	return status;
}

/* ---- jobs of the web UI (aitk:NAME) ------------------------------------------------------ */

#define POLL_MS 100      /* how often the row and the log are looked at while following a run */
#define DRAIN_QUIET 1.5  /* seconds of silence that end a run whose trainer cannot be seen */
#define DRAIN_MAX 60.0   /* the longest wait for a trainer to exit once its row says it ended */
#define QUEUE_HINT_S 30.0 /* still queued after this long: say what the worker needs */

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL); /* a signal cuts it short: Ctrl-C is seen at once */
}

/* Which file a path names now, so the log of this run is told from the one before it (the
 * worker moves the old log.txt to logs/<n>_log.txt when it starts a run). */
struct logid {
	bool exists;
	dev_t dev;
	ino_t ino;
};

static void log_identity(const char *path, struct logid *id)
{
	struct stat st;
	memset(id, 0, sizeof *id);
	if (path && stat(path, &st) == 0) {
		id->exists = true;
		id->dev = st.st_dev;
		id->ino = st.st_ino;
	}
}

static bool log_is_new(const char *path, const struct logid *before)
{
	struct logid now;
	log_identity(path, &now);
	return now.exists && (!before->exists || now.dev != before->dev || now.ino != before->ino);
}

static bool status_ended(const char *s)
{
	return s[0] && strcmp(s, "queued") != 0 && strcmp(s, "running") != 0;
}

/* How a followed run of a web UI job went. */
struct ui_run {
	bool taken;            /* the worker took the job from the queue */
	char status[16];       /* the status the run ended with */
	char info[256];
};

/* Follows one queued run of job NAME: waits for the worker to take it, shows this run's log.txt
 * as it grows (copied to `copyfd`), stops it through the `stop` flag once the probe is passed,
 * and returns when its status says it ended and its trainer has exited (or gone quiet). Only
 * autocommit SELECTs are made while waiting, at POLL_MS. */
static int follow_ui_run(struct aitk_db *db, const char *name, const char *log,
			 const struct logid *before, const struct retry *r, const struct job *j,
			 long long probe_target, int copyfd, struct try_result *out, struct ui_run *ur)
{
	memset(out, 0, sizeof *out);
	memset(ur, 0, sizeof *ur);
	out->step = -1;
	struct live lv = { .name = j->name, .step = -1, .skip_step = -1 };
	struct logid prev = *before; /* the log that is not this run's */
	struct logid cur = { 0 };    /* the log being read */
	double started = now_s(), hint_after = QUEUE_HINT_S;
	const char *hs = getenv("OOMFIX_QUEUE_HINT_MS"); /* a test hook: tests cannot wait 30 s */
	if (hs && *hs && atof(hs) > 0)
		hint_after = atof(hs) / 1000;
	bool hinted = false;
	int fd = -1;
	double ended_at = 0, last_data = now_s();
	long long pid = -1;
	sig_atomic_t seen = stop_requests;
	char buf[65536];
	struct err e;
	err_clear(&e);

	for (;;) {
		if (stop_requests != seen) {
			out->interrupted = true;
			break;
		}
		struct aitk_status as;
		int rc = aitkdb_status(db, name, &as, &e);
		if (rc) {
			err_print(&e, stderr);
			if (fd >= 0)
				close(fd);
			return rc;
		}
		if (!ur->taken && !hinted && now_s() - started > hint_after) {
			hinted = true;
			fprintf(stderr, _("oomfix retry: still queued after %.0f s: the web UI's worker "
					  "takes queued jobs only while the UI runs and the job's GPU queue "
					  "is started (oomfix starts it when it queues the job).\n"),
				hint_after);
			if (events) {
				char text[512];
				snprintf(text, sizeof text, _("Still queued after %.0f s: the web UI's "
							      "worker takes queued jobs only while the UI "
							      "runs and the job's GPU queue is started."),
					 hint_after);
				ev_open("waiting", ev_try_n);
				json_key(&ev, "text");
				json_str(&ev, text);
				ev_close();
			}
		}
		if (!ur->taken && strcmp(as.status, "queued") != 0) {
			ur->taken = true;
			fprintf(stderr, _("oomfix retry: the web UI's worker took the job (%s).\n"),
				as.status);
			if (events) {
				ev_open("taken", ev_try_n);
				json_key(&ev, "status");
				json_str(&ev, as.status);
				ev_close();
			}
		} else if (ended_at == 0 && ((ur->taken && !strcmp(as.status, "queued")) ||
					     (fd >= 0 && log_is_new(log, &cur)))) {
			/* returned to the queue (its return_to_queue flag), or already started again
			 * (a new log.txt): that run ends without a verdict; the next one is the try */
			fprintf(stderr, "\n%s\n", _("oomfix retry: the job went back to the queue; "
						      "following its next run."));
			if (fd >= 0)
				prev = cur;
			else
				log_identity(log, &prev);
			if (fd >= 0)
				close(fd);
			fd = -1;
			if (ftruncate(copyfd, 0) != 0 || lseek(copyfd, 0, SEEK_SET) != 0)
				fprintf(stderr, "%s\n", _("oomfix retry: cannot write the run's log"));
			lv = (struct live){ .name = j->name, .step = -1, .skip_step = -1 };
			ur->taken = strcmp(as.status, "queued") != 0;
		}
		if (ur->taken && fd < 0 && log_is_new(log, &prev)) {
			fd = open(log, O_RDONLY | O_CLOEXEC);
			struct stat fs;
			if (fd >= 0 && fstat(fd, &fs) == 0)
				cur = (struct logid){ true, fs.st_dev, fs.st_ino };
		}
		bool gone = false;
		if (ur->taken && status_ended(as.status)) {
			if (ended_at == 0) {
				ended_at = now_s();
				pid = as.pid;
				snprintf(ur->status, sizeof ur->status, "%s", as.status);
				snprintf(ur->info, sizeof ur->info, "%s", as.info);
			}
			/* The trainer writes its status before its last lines (run.py prints the
			 * traceback after on_error): read on until it has exited. */
			bool alive = pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
			double quiet = now_s() - last_data;
			gone = (!alive && quiet >= (pid > 0 ? 0.2 : DRAIN_QUIET)) ||
			       now_s() - ended_at > DRAIN_MAX;
		}
		/* Everything the log holds now, after `gone` was decided: nothing written before the
		 * trainer exited is missed. */
		ssize_t n;
		while (fd >= 0 && (n = read(fd, buf, sizeof buf)) > 0) {
			write_all(STDOUT_FILENO, buf, (size_t)n);
			if (write_all(copyfd, buf, (size_t)n) != 0)
				fprintf(stderr, "%s\n", _("oomfix retry: cannot write the run's log"));
			live_feed(&lv, buf, (size_t)n);
			last_data = now_s();
		}
		if (probe_target > 0 && !out->probe_passed && !status_ended(as.status) &&
		    lv.step >= probe_target && (lv.skip_step < 0 || lv.step >= lv.skip_step + r->probe) &&
		    (j->disable_sampling || lv.rounds > 0)) {
			bool asked;
			fprintf(stderr, "\n%s\n", _("oomfix retry: the probe is passed; asking the web UI "
						      "job to stop (its stop flag)..."));
			if ((rc = aitkdb_request_stop(db, name, &asked, &e)) != ERR_OK) {
				err_print(&e, stderr);
				if (fd >= 0)
					close(fd);
				return rc;
			}
			out->probe_passed = true;
			out->step = lv.step; /* the run goes on a little until the trainer sees the flag */
		}
		if (gone)
			break;
		sleep_ms(POLL_MS);
	}
	if (fd >= 0)
		close(fd);
	if (!out->probe_passed)
		out->step = lv.step;
	return ERR_OK;
}

static int open_ui_db(struct aitk_db **db)
{
	struct err e;
	err_clear(&e);
	char *root = NULL;
	int rc = aitkdb_find(source_aitk_dir(), &root, &e);
	if (rc == ERR_OK)
		rc = aitkdb_open(root, db, &e);
	free(root);
	if (rc)
		err_print(&e, stderr);
	return rc;
}

/* Creates the folder for the copies of the runs' logs: <run folder>/job_config.json.oomfix-runs
 * (the run folder too, as the worker would). *dir is malloc'd. */
static int make_runs_dir(const struct source *s, char **dir)
{
	/* the training folder first, as the worker creates both (mkdir -p) */
	char *parent = strdup(source_run_dir(s));
	char *slash = parent ? strrchr(parent, '/') : NULL;
	if (slash && slash != parent) {
		*slash = 0;
		if (mkdir(parent, 0777) != 0 && errno != EEXIST)
			fprintf(stderr, _("oomfix retry: cannot create %s: %s\n"), parent, strerror(errno));
	}
	free(parent);
	if (mkdir(source_run_dir(s), 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, _("oomfix retry: cannot create %s: %s\n"), source_run_dir(s),
			strerror(errno));
		return ERR_CANTCREAT;
	}
	if (asprintf(dir, "%s.oomfix-runs", source_path(s)) < 0)
		return ERR_SOFTWARE;
	if (mkdir(*dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, _("oomfix retry: cannot create %s: %s\n"), *dir, strerror(errno));
		free(*dir);
		*dir = NULL;
		return ERR_CANTCREAT;
	}
	return ERR_OK;
}

/* One try of a web UI job: queue it, follow the worker's run, and decide (the same decisions
 * and lines as for a file job). Returns the loop's exit status, or -1 to go on. */
static int ui_try(const struct retry *r, struct aitk_db *db, const char *name, int n, int t,
		  const char *logpath, long long *prev_fail)
{
	struct err e;
	err_clear(&e);
	struct source *s = NULL;
	struct doc *d = NULL;
	struct job *j = NULL;
	int rc = cli_open_job(r->job_path, &s, &d, &j, &e);
	if (rc) {
		err_print(&e, stderr);
		return rc;
	}
	int status = -1;
	if (source_running(s)) {
		status = refuse_running(s);
		goto out;
	}
	int copyfd = open(logpath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (copyfd < 0) {
		fprintf(stderr, _("oomfix retry: cannot create %s: %s\n"), logpath, strerror(errno));
		status = ERR_CANTCREAT;
		goto out;
	}
	struct logid before;
	log_identity(source_log(s), &before);
	char *was = NULL;
	const struct aitk_job *row = source_row(s);
	bool queued_here = !(row && row->status && !strcmp(row->status, "queued"));
	if (!queued_here) {
		/* queued already (by the UI or by hand): queueing again would only move it back */
		fprintf(stderr, _("oomfix retry: try %d (%d of at most %d): %s is queued already; "
				  "waiting for the web UI's worker; a copy of its log goes to %s\n"),
			n, t, r->max_tries, source_label(s), logpath);
		ev_try(n, t, r->max_tries, logpath);
	} else if ((rc = aitkdb_queue(db, name, &was, &e)) != ERR_OK) {
		err_print(&e, stderr);
		close(copyfd);
		unlink(logpath);
		status = rc;
		goto out;
	} else if (aitkdb_was_queued(was)) {
		/* queued meanwhile, by the UI or by hand: left in its place, as found */
		queued_here = false;
		fprintf(stderr, _("oomfix retry: try %d (%d of at most %d): %s is queued already; "
				  "waiting for the web UI's worker; a copy of its log goes to %s\n"),
			n, t, r->max_tries, source_label(s), logpath);
		ev_try(n, t, r->max_tries, logpath);
	} else {
		fprintf(stderr, _("oomfix retry: try %d (%d of at most %d): %s queued (it was %s); "
				  "waiting for the web UI's worker; a copy of its log goes to %s\n"),
			n, t, r->max_tries, source_label(s), was ? was : "?", logpath);
		ev_try(n, t, r->max_tries, logpath);
	}
	free(was);
	struct try_result tr;
	struct ui_run ur;
	long long target = r->probe > 0 ? *prev_fail + r->probe : 0;
	rc = follow_ui_run(db, name, source_log(s), &before, r, j, target, copyfd, &tr, &ur);
	close(copyfd);
	if (rc) {
		status = rc;
	} else if (tr.interrupted) {
		if (!ur.taken && queued_here)
			fprintf(stderr, _("\noomfix retry: interrupted. %s is still queued (oomfix queued "
					  "it): the web UI's worker will run it unless you remove it from "
					  "the queue in the UI.\n"), source_label(s));
		else if (!ur.taken)
			fprintf(stderr, _("\noomfix retry: interrupted. %s is still queued, as it was "
					  "before.\n"), source_label(s));
		else if (!ur.status[0])
			fprintf(stderr, _("\noomfix retry: interrupted. %s goes on running in the web UI; "
					  "oomfix leaves it alone (stop it there if you want).\n"),
				source_label(s));
		else
			fprintf(stderr, "\n%s\n", _("oomfix retry: interrupted."));
		set_outcome("interrupted", "%s", !ur.taken ? _("Interrupted; the job is still queued "
							      "in the web UI.")
				: !ur.status[0] ? _("Interrupted; the job goes on running in the web UI.")
				: _("Interrupted."));
		status = EXIT_INTERRUPTED;
	} else if (!strcmp(ur.status, "stopped")) {
		if (tr.probe_passed) {
			fprintf(stderr, _("oomfix retry: try %d: passed the probe at step %lld: the job "
					  "fits.\n"), n, tr.step);
			set_outcome("probe", _(probe_text), tr.step);
			status = 0;
		} else {
			fprintf(stderr, _("oomfix retry: try %d: the job was stopped in the web UI; the "
					  "job is as the last try left it.\n"), n);
			set_outcome("stopped", "%s", _("The job was stopped in the web UI; it is as the "
						       "last try left it."));
			status = EXIT_INTERRUPTED;
		}
	} else {
		tr.exited = true;
		tr.status = !strcmp(ur.status, "completed") ? 0 : 1;
		if (tr.status && ur.info[0]) {
			/* the first sentence of the trainer's exception text is enough here */
			char *dot = strstr(ur.info, ". ");
			if (dot)
				dot[1] = 0;
			fprintf(stderr, _("oomfix retry: try %d ended with status %s: %s\n"), n,
				ur.status, ur.info);
		}
		status = judge(r, n, t, &tr, logpath, d, j, NULL, s, prev_fail);
	}
out:
	job_free(&j);
	doc_free(&d);
	source_free(&s);
	return status;
}

/* The loop for a web UI job: no CMD; each try is a run of the UI's worker (SPEC §11). */
static int retry_ui(const struct retry *r)
{
	const char *name = r->job_path + strlen(SOURCE_AITK_PREFIX);
	struct aitk_db *db = NULL;
	int status = open_ui_db(&db);
	if (status)
		return status;
	struct err e;
	err_clear(&e);
	struct source *s = NULL;
	char *dir = NULL, *logpath = NULL;
	if ((status = source_open(r->job_path, &s, &e)) != ERR_OK) {
		err_print(&e, stderr);
		aitkdb_close(&db);
		return status;
	}
	status = make_runs_dir(s, &dir);
	source_free(&s);
	if (status) {
		aitkdb_close(&db);
		return status;
	}
	int first = next_log_number(dir);
	long long prev_fail = 0;
	status = r->from_log ? start_from_log(r, &prev_fail) : -1;
	if (status != -1) {
		free(dir);
		aitkdb_close(&db);
		return status;
	}
	status = ERR_UNAVAILABLE;
	for (int t = 1; t <= r->max_tries; t++) {
		int n = first + t - 1;
		if (interrupted_before_run()) {
			status = EXIT_INTERRUPTED;
			break;
		}
		free(logpath);
		logpath = NULL;
		if (asprintf(&logpath, "%s/%d.log", dir, n) < 0) {
			status = ERR_SOFTWARE;
			break;
		}
		status = ui_try(r, db, name, n, t, logpath, &prev_fail);
		if (status != -1)
			break;
	}
	free(logpath);
	free(dir);
	aitkdb_close(&db);
	return status;
}

int cmd_retry(int argc, char **argv)
{
	enum { O_PROBE = 256, O_GRACE, O_EVENTS, O_LOG };
	static const struct option opts[] = {
		{ "max-tries", required_argument, NULL, 'n' },
		{ "probe", required_argument, NULL, O_PROBE },
		{ "grace", required_argument, NULL, O_GRACE },
		{ "events", required_argument, NULL, O_EVENTS },
		{ "log", required_argument, NULL, O_LOG },
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
		case O_LOG:
			r.from_log = optarg;
			break;
		case O_EVENTS: {
			long fd = strtol(optarg, &end, 10);
			if (*end || fd < 1 || fd > 1000 || fd == STDIN_FILENO)
				return usage_error(_("--events wants an open file descriptor, not '%s'"),
						   optarg);
			if (events)
				fclose(events);
			int dfd = fcntl((int)fd, F_DUPFD_CLOEXEC, 3); /* the runs never inherit it */
			if (dfd < 0 || !(events = fdopen(dfd, "w"))) {
				if (dfd >= 0)
					close(dfd);
				return usage_error(_("--events wants an open file descriptor, not '%s'"),
						   optarg);
			}
			if (fd > STDERR_FILENO)
				close((int)fd);
			break;
		}
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
		return usage_error("%s", _("expected JOB -- CMD [ARG...], or aitk:NAME"));
	r.job_path = argv[optind++];
	bool ui = source_is_aitk_arg(r.job_path);
	if (ui && optind < argc)
		/* the web UI's worker runs the job: there is nothing to run here */
		return usage_error("%s", _("a web UI job (aitk:NAME) takes no CMD: its runs are "
					   "started by the UI's worker"));
	if (!ui && (optind >= argc || strcmp(argv[optind], "--") != 0 || optind + 1 >= argc))
		return usage_error("%s", _("expected JOB -- CMD [ARG...], or aitk:NAME"));
	r.cmd = ui ? NULL : argv + optind + 1;

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop_signal; /* no SA_RESTART: poll() wakes up at once */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	int status = ui ? retry_ui(&r) : retry_loop(&r);
	if (events) {
		ev_open("end", ev_try_n);
		json_key(&ev, "status");
		json_int(&ev, status);
		json_key(&ev, "outcome");
		json_str(&ev, outcome ? outcome : "error");
		json_key(&ev, "text");
		json_str(&ev, outcome ? outcome_text : NULL);
		ev_close();
		fclose(events);
		events = NULL;
	}
	return status;
}
