/* session_log.c — the session's log and its verdict: read by a worker thread at first, then
 * followed as the run writes it; another run's log shown in its place. No curses here. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/aitkdb.h"
#include "oomfix/gpuwatch.h"
#include "oomfix/i18n.h"
#include "oomfix/measure.h"
#include "session.h"

/* ---- the log is read by a worker thread ---------------------------------------------------
 *
 * Diagnosing a 1 GB log takes about a second; the first screen must not wait for it. The worker
 * gets copies of what it needs (the path, the job's name and kind), opens its own log index and
 * its own matchers inside diag, and writes only into its own struct. The main thread reads that
 * struct once `done` is set (release/acquire), or after pthread_join, and then owns it. The view
 * meanwhile reads the first lines through the session's own index, which the worker never sees.
 */
struct diag_worker {
	pthread_t th;
	atomic_bool done;
	char *path, *name;
	struct diag_job_info info;
	bool has_info;
	struct diag_result res;
	struct err e;
	int rc;
	struct logidx *li;        /* the worker's index, fully built by the scan */
	uint64_t lines;
	bool lines_ok;
	struct diag_state *ds;    /* the diagnosis, kept open so the log can be followed */
};

static struct diag_worker *orphan; /* the last worker left running at close (see below) */

static void *worker_run(void *arg)
{
	struct diag_worker *w = arg;
	struct err e2;

	enum diag_follow what;

	w->rc = logidx_open(w->path, &w->li, &w->e);
	/* The diagnosis stays open (diag_state) so that what the run appends later costs only the
	 * new bytes. */
	if (w->rc == ERR_OK)
		w->rc = diag_state_new(w->has_info ? &w->info : NULL, &w->ds, &w->e);
	if (w->rc == ERR_OK) {
		diag_state_index_into(w->ds, w->li); /* one pass: the lines are counted on the way */
		w->rc = diag_state_follow(w->ds, w->path, 0, &what, &w->e);
		diag_state_index_into(w->ds, NULL);
	}
	if (w->rc == ERR_OK)
		w->rc = diag_state_result(w->ds, &w->res, &w->e);
	if (w->li)
		w->lines_ok = logidx_count_lines(w->li, &w->lines, &e2) == ERR_OK;
	atomic_store_explicit(&w->done, true, memory_order_release);
	return NULL;
}

static bool worker_done(const struct ui_session *s)
{
	return s->worker && atomic_load_explicit(&s->worker->done, memory_order_acquire);
}

static void worker_free(struct diag_worker *w)
{
	if (!w)
		return;
	logidx_close(&w->li);
	diag_state_free(&w->ds);
	free(w->path);
	free(w->name);
	free(w);
}

/* Notes the log's size and time as the worker starts reading it. */
static void stamp_log(struct ui_session *s)
{
	struct err e;
	memset(&s->log_stamp, 0, sizeof s->log_stamp);
	if (s->log_path)
		save_stamp(s->log_path, &s->log_stamp, &e);
}

void ui_session_diag_start(struct ui_session *s)
{
	struct diag_worker *w;
	struct job *j = NULL;
	struct err e;

	if (!s->log_path || s->worker || s->diag_pending)
		return;
	if (!(w = calloc(1, sizeof *w)) || !(w->path = strdup(s->log_path))) {
		free(w);
		s->diag_rc = err_set(&s->diag_err, ERR_SOFTWARE, NULL, 0, 0, "%s", _("out of memory"));
		return;
	}
	if (ui_session_cur(s) && job_from_doc(ui_session_cur(s), &j, &e) == ERR_OK) {
		/* The name lives in the doc; the worker gets its own copy. */
		w->name = j->name ? strdup(j->name) : NULL;
		w->info.name = w->name;
		w->info.kind = (int)j->kind;
		w->info.conservative = job_is_conservative(j) ? 1 : 0;
		w->has_info = true;
	}
	job_free(&j);
	stamp_log(s);
	atomic_init(&w->done, false);
	s->worker = w;
	s->diag_pending = true;
	/* Signals (SIGHUP's emergency save, SIGWINCH) are the main thread's: the worker blocks
	 * them all, inheriting the mask it is created with. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&w->th, NULL, worker_run, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		worker_run(w); /* no thread: read it now, as before */
		w->th = pthread_self();
	}
}

bool ui_session_log_newer(const struct ui_session *s)
{
	struct save_stamp now;
	struct err e;
	if (!s->log_path || !s->log_stamp.exists || save_stamp(s->log_path, &now, &e) != ERR_OK ||
	    !now.exists)
		return false;
	return !save_stamp_same(&now, &s->log_stamp);
}

/* A verdict was just read from the log: it speaks of the job as it is now, unless the job's
 * journal holds a change saved after the log was written (an earlier session's, or the command
 * line's), which that log cannot judge either. */
/* What the OOM measured is kept for the next estimate (SPEC §12.2), for the job as it ran: the
 * one on disk, when no change was saved since the log. */
static void keep_measured(struct ui_session *s)
{
	if (s->have_diag && s->log_path && !s->untried_saved && s->base_job)
		measure_record_diag(s->base_job, &s->diag, s->log_path);
}

static void verdict_taken(struct ui_session *s)
{
	s->verdict_pos = s->pos;
	s->untried_saved = s->src && s->log_path && source_log_untried(s->src, s->log_path, NULL);
	keep_measured(s);
}

void ui_session_job_failed(struct ui_session *s, const struct err *e)
{
	s->job_bad = true;
	s->job_err = *e;
}

bool ui_session_recount(struct ui_session *s)
{
	struct err e;
	uint64_t nl;

	if (!s->log || !logidx_refresh(s->log) || logidx_count_lines(s->log, &nl, &e) != ERR_OK)
		return false;
	s->log_lines = nl;
	return true;
}

bool ui_session_diag_poll(struct ui_session *s, bool wait)
{
	struct diag_worker *w = s->worker;

	if (!w || (!wait && !worker_done(s)))
		return false;
	if (!pthread_equal(w->th, pthread_self()))
		pthread_join(w->th, NULL);
	s->worker = NULL;
	s->diag_pending = false;
	s->diag_rc = w->rc;
	s->diag_err = w->e;
	if (w->rc == ERR_OK) {
		s->diag = w->res;
		s->have_diag = true;
		diag_state_free(&s->live);
		s->live = w->ds;
		w->ds = NULL;
		verdict_taken(s);
	}
	if (w->lines_ok) {
		s->log_lines = w->lines;
		s->lines_known = true;
		/* The worker's index has every checkpoint: G and searches start from it. */
		logidx_close(&s->log);
		s->log = w->li;
		w->li = NULL;
	}
	worker_free(w);
	ui_session_refresh(s);
	return true;
}

/* Ends the session's use of its worker: takes its result when it is done, else leaves it to
 * finish on its own. */
static void diag_stop(struct ui_session *s)
{
	if (s->worker && worker_done(s)) {
		ui_session_diag_poll(s, true);
	} else if (s->worker) {
		/* Still reading: let it run to the end of the process rather than wait for it. The
		 * worker owns everything it touches, so nothing here is freed under it. */
		pthread_detach(s->worker->th);
		orphan = s->worker; /* still referenced: it is the worker's until the process ends */
		s->worker = NULL;
	}
}

/* ---- following the log as the run writes it ------------------------------------------------ */

#define FOLLOW_MAX (8u << 20) /* bytes read per call: a huge append is taken in several turns */

/* The members a person reads: when they change, the plan is rebuilt. */
static bool same_verdict(const struct diag_result *a, const struct diag_result *b)
{
	return a->oom == b->oom && a->timing == b->timing && a->phase == b->phase &&
	       a->failed_step == b->failed_step && a->other == b->other &&
	       a->survived == b->survived && a->run_ended == b->run_ended &&
	       a->nsigs == b->nsigs && a->nhints == b->nhints;
}

/* The run's peaks, kept for the job as it ran (not when a change was saved after the log). */
void ui_session_watch_end(struct ui_session *s)
{
	if (!s->watch)
		return;
	if (s->base_job && !s->untried_saved)
		gpuwatch_record(s->watch, s->base_job, s->src && !strcmp(s->job_status, "completed"));
	gpuwatch_free(&s->watch);
}

void ui_session_watch(struct ui_session *s)
{
	if (!s->watch) {
		if (!s->growing || s->watch_done || !s->log_path || !s->base_job ||
		    s->untried_saved || s->read_only)
			return;
		struct diag_job_info info = { s->base_job->name, (int)s->base_job->kind,
					      job_is_conservative(s->base_job) ? 1 : 0 };
		s->watch = gpuwatch_new(s->log_path, 0, &info);
		s->watch_done = !s->watch;
		return;
	}
	gpuwatch_tick(s->watch);
	if (s->have_diag && (s->diag.run_ended || (s->diag.oom && !s->diag.survived))) {
		ui_session_watch_end(s);
		s->watch_done = true; /* this run's are kept */
	}
}

unsigned ui_session_follow(struct ui_session *s)
{
	struct diag_result *r;
	enum diag_follow what;
	unsigned out = 0;
	struct err e;
	uint64_t n;

	if (!s->live || s->diag_pending || !s->log_path)
		return 0;
	if (diag_state_follow(s->live, s->log_path, FOLLOW_MAX, &what, &e) != ERR_OK)
		return 0;
	/* the view's index may have been opened before the last bytes the diagnosis read */
	if (what == DIAG_FOLLOW_SAME && logidx_size(s->log) >= diag_state_offset(s->live))
		return 0;
	if (what == DIAG_FOLLOW_RESTARTED) {
		/* another file at that path, or this one cut short: browse the new one */
		struct logidx *li;
		if (logidx_open(s->log_path, &li, &e) == ERR_OK) {
			logidx_close(&s->log);
			s->log = li;
		}
		out |= UI_F_RESTARTED;
		ui_session_watch_end(s); /* the run before is over */
		s->watch_done = false;
	} else {
		logidx_refresh(s->log);
	}
	/* the index goes on from where it stopped: only the new bytes are counted */
	if (logidx_count_lines(s->log, &n, &e) == ERR_OK) {
		s->log_lines = n;
		s->lines_known = true;
	}
	out |= UI_F_GREW;
	/* output written after the last change: the verdict now speaks of the job as it is */
	verdict_taken(s);
	if (diag_state_pending(s->live))
		out |= UI_F_MORE;
	s->growing = true;
	if (!(r = malloc(sizeof *r)))
		return out;
	if (diag_state_result(s->live, r, &e) == ERR_OK) {
		bool changed = !same_verdict(r, &s->diag);
		s->diag = *r;
		s->have_diag = true;
		if (changed) {
			keep_measured(s); /* an OOM that came while the log was followed */
			ui_session_refresh(s);
			out |= UI_F_VERDICT;
		}
	}
	free(r);
	return out;
}

int ui_session_set_log(struct ui_session *s, const char *log_path, struct err *e)
{
	struct logidx *li = NULL;
	char *path;
	int rc;

	if (s->worker || s->diag_pending)
		return err_set(e, ERR_TEMPFAIL, NULL, 0, 0, "%s",
			       _("Still reading the log; try again in a moment."));
	if (!(path = strdup(log_path)))
		return err_set(e, ERR_SOFTWARE, NULL, 0, 0, "%s", _("out of memory"));
	if ((rc = logidx_open(log_path, &li, e))) {
		free(path);
		return rc;
	}
	diag_state_free(&s->live); /* it followed the log being replaced */
	ui_session_watch_end(s);
	s->watch_done = false;
	logidx_close(&s->log);
	free(s->log_path);
	s->log = li;
	s->log_path = path;
	s->have_diag = false;
	memset(&s->diag, 0, sizeof s->diag);
	s->log_lines = 0;
	s->lines_known = false;
	s->growing = false; /* the log that grew was the one replaced */
	s->run_label[0] = s->run_note[0] = '\0'; /* the caller names an earlier run */
	s->diag_rc = ERR_OK;
	err_clear(&s->diag_err);
	ui_session_refresh(s);
	ui_session_diag_start(s);
	return ERR_OK;
}

void ui_session_mark_history(struct ui_session *s, int try_n, const char *fix)
{
	if (try_n == 0)
		snprintf(s->run_label, sizeof s->run_label, "%s", _("the log you opened, earlier"));
	else
		snprintf(s->run_label, sizeof s->run_label, _("try %d, earlier"), try_n);
	if (fix && *fix)
		snprintf(s->run_note, sizeof s->run_note, _("History: an earlier try (%s). The fix "
							    "applied after it: %s."),
			 s->run_label, fix);
	else
		snprintf(s->run_note, sizeof s->run_note, _("History: an earlier try (%s)."),
			 s->run_label);
}

void ui_session_close(struct ui_session *s)
{
	diag_stop(s);
	ui_session_watch_end(s);
	ui_session_free_job(s);
	logidx_close(&s->log);
	diag_state_free(&s->live);
	free(s->log_path);
	memset(s, 0, sizeof *s);
}

void ui_session_name_run(struct ui_session *s, const char *label, const char *note)
{
	snprintf(s->run_label, sizeof s->run_label, "%s", label);
	snprintf(s->run_note, sizeof s->run_note, "%s", note);
}
