/* view_jobs.c — the job list of the AI Toolkit web UI (`oomfix --aitk DIR`): every job of its
 * database, failed first, then running, with status, progress, last change, the first line of
 * its info and the verdict of its current log, and a detail line for the job under the cursor.
 * The list comes at once; the verdicts are filled in by a worker thread that reads the logs.
 * Enter opens a job in the panels, J comes back here. The keys that change a job (a, s, u, d,
 * ...) act on the open job, so the list refuses them; Q queues the job under the cursor (or,
 * from the other views, the open one). The cursor stays on its job when the list is sorted
 * again. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "oomfix/aitkdb.h"
#include "oomfix/diag.h"
#include "oomfix/i18n.h"
#include "oomfix/plan.h"
#include "oomfix/source.h"
#include "oomfix/text.h"
#include "prompt.h"
#include "view.h"
#include "view_jobs.h"

/* What the worker reads and writes: its own copies, freed by whichever side lets go last. */
struct jobs_work {
	size_t n;
	char **label, **cfg, **log, **jpath;
	struct source_verdict *v;
	bool *untried;          /* a change was saved after the log: not run yet */
	char (*applied)[96];    /* ... its fix ids ("" for hand edits) */
	atomic_bool *ready;
	atomic_bool cancel;
	atomic_int refs;
	atomic_bool done;
	bool threaded;
	pthread_t th;
};

/* The Jobs view's own state (its private data). */
struct jobs_priv {
	bool loaded;
	char err[1600];
	char where[512];        /* the database's path, for the heading */
	struct aitk_job *rows;
	size_t n;
	struct jobs_work *w;
	size_t seen;            /* verdicts shown so far, to know when to redraw */
	char *keep;             /* the job the cursor stays on when the list is read again */
	char *ask_name;         /* the job the queue question is about */
	char ask_status[16];
	long long checked_ms;   /* when the rows' status was last read again (E1) */
};

/* How often the list reads its jobs' status again: one indexed SELECT per job. */
#define JOBS_RECHECK_MS 2000

static long long mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct jobs_priv *jobs_priv(const struct ui_env *v)
{
	return v->priv;
}

static void work_unref(struct jobs_work *w)
{
	if (!w || atomic_fetch_sub(&w->refs, 1) != 1)
		return;
	for (size_t i = 0; i < w->n; i++) {
		free(w->label[i]);
		free(w->cfg[i]);
		free(w->log[i]);
		free(w->jpath[i]);
	}
	free(w->label);
	free(w->cfg);
	free(w->log);
	free(w->jpath);
	free(w->v);
	free(w->untried);
	free(w->applied);
	free(w->ready);
	free(w);
}

static void *work_run(void *arg)
{
	struct jobs_work *w = arg;
	for (size_t i = 0; i < w->n && !atomic_load(&w->cancel); i++) {
		struct err e;
		err_clear(&e);
		source_verdict_of(w->label[i], w->cfg[i], strlen(w->cfg[i]), w->log[i], &w->v[i], &e);
		w->untried[i] = source_path_untried(w->jpath[i], w->log[i], NULL, w->applied[i],
						    sizeof w->applied[i]);
		atomic_store(&w->ready[i], true);
	}
	atomic_store(&w->done, true);
	work_unref(w);
	return NULL;
}

/* Lets go of the worker: it stops after the log it is reading and frees its own data. */
static void work_drop(struct jobs_priv *jp)
{
	struct jobs_work *w = jp->w;
	if (!w)
		return;
	jp->w = NULL;
	atomic_store(&w->cancel, true);
	if (w->threaded)
		pthread_detach(w->th);
	work_unref(w);
}

static char *dupf(const char *a, const char *b, const char *c)
{
	char *s = NULL;
	if (asprintf(&s, "%s%s%s", a, b, c) < 0)
		return NULL;
	return s;
}

static void work_start(struct jobs_priv *jp, struct aitk_db *db, bool inline_)
{
	struct jobs_work *w = calloc(1, sizeof *w);
	if (!w)
		return;
	w->n = jp->n;
	w->label = calloc(jp->n + 1, sizeof *w->label);
	w->cfg = calloc(jp->n + 1, sizeof *w->cfg);
	w->log = calloc(jp->n + 1, sizeof *w->log);
	w->jpath = calloc(jp->n + 1, sizeof *w->jpath);
	w->v = calloc(jp->n + 1, sizeof *w->v);
	w->untried = calloc(jp->n + 1, sizeof *w->untried);
	w->applied = calloc(jp->n + 1, sizeof *w->applied);
	w->ready = calloc(jp->n + 1, sizeof *w->ready);
	atomic_init(&w->refs, 2);
	bool ok = w->label && w->cfg && w->log && w->jpath && w->v && w->ready && w->untried &&
		  w->applied;
	for (size_t i = 0; ok && i < jp->n; i++) {
		atomic_init(&w->ready[i], false);
		w->label[i] = dupf(SOURCE_AITK_PREFIX, jp->rows[i].name, "");
		w->cfg[i] = strdup(jp->rows[i].job_config ? jp->rows[i].job_config : "");
		w->log[i] = dupf(aitkdb_training_folder(db), "/", jp->rows[i].name);
		char *full = w->log[i] ? dupf(w->log[i], "/log.txt", "") : NULL;
		/* what a database job's backup and journal are named after (source_path) */
		w->jpath[i] = w->log[i] ? dupf(w->log[i], "/job_config.json", "") : NULL;
		free(w->log[i]);
		w->log[i] = full;
		ok = w->label[i] && w->cfg[i] && w->log[i] && w->jpath[i];
	}
	if (!ok) {
		atomic_init(&w->refs, 1);
		if (!w->label || !w->cfg || !w->log || !w->jpath)
			w->n = 0;
		work_unref(w);
		return;
	}
	jp->w = w;
	/* A script (tests) gets every verdict before its first dump; a person gets the list at once. */
	w->threaded = !inline_ && pthread_create(&w->th, NULL, work_run, w) == 0;
	if (!w->threaded)
		work_run(w);
}

static void jobs_load(const struct ui_env *v)
{
	struct jobs_priv *jp = jobs_priv(v);
	/* The cursor follows its job, not its row, when the list comes back in a new order. */
	long long cur = v->pos->cursor;
	if (!jp->keep && cur >= 0 && (size_t)cur < jp->n)
		jp->keep = strdup(jp->rows[cur].name);
	work_drop(jp);
	aitkdb_rows_free(jp->rows, jp->n);
	jp->rows = NULL;
	jp->n = 0;
	jp->seen = 0;
	jp->err[0] = jp->where[0] = '\0';
	jp->loaded = true;
	struct err e;
	err_clear(&e);
	char *root = NULL;
	struct aitk_db *db = NULL;
	int rc = aitkdb_find(source_aitk_dir(), &root, &e);
	if (rc == ERR_OK)
		rc = aitkdb_open(root, &db, &e);
	if (rc == ERR_OK)
		rc = aitkdb_list(db, &jp->rows, &jp->n, &e);
	free(root);
	if (rc) {
		if (e.file[0])
			snprintf(jp->err, sizeof jp->err, "%s: %s", e.file, e.msg);
		else
			snprintf(jp->err, sizeof jp->err, "%s", e.msg);
		aitkdb_close(&db);
		return;
	}
	snprintf(jp->where, sizeof jp->where, "%s", aitkdb_path(db));
	aitkdb_sort_failed_first(jp->rows, jp->n);
	for (size_t i = 0; jp->keep && i < jp->n; i++)
		if (!strcmp(jp->rows[i].name, jp->keep))
			v->pos->cursor = (long long)i;
	free(jp->keep);
	jp->keep = NULL;
	work_start(jp, db, v->script);
	aitkdb_close(&db);
}

void ui_jobs_reload(const struct ui_env *v)
{
	struct jobs_priv *jp = jobs_priv(v);
	jp->loaded = false;
}

/* The loop waits briefly while the worker reads logs (the view's busy op). */
static bool jobs_busy(const struct ui_env *v)
{
	const struct jobs_priv *jp = jobs_priv(v);
	/* Verdicts not shown yet count too: the worker may finish between a poll and the wait. */
	return jp->w && (!atomic_load(&jp->w->done) || jp->seen < jp->w->n);
}

/* Reads each row's status and step from the database again (E1: the list stays true while
 * the worker runs jobs). A status that changed is said once, naming the job, and the list is
 * read again whole (its verdicts too: a run that ended has a new log); a step that moved is
 * only redrawn. `name` (may be NULL): just that job, before a key acts on its status. True when
 * something changed. */
static bool jobs_recheck(const struct ui_env *v, const char *name)
{
	struct jobs_priv *jp = jobs_priv(v);
	jp->checked_ms = mono_ms();
	if (!jp->loaded || jp->err[0] || !jp->n)
		return false;
	struct err e;
	err_clear(&e);
	char *root = NULL;
	struct aitk_db *db = NULL;
	if (aitkdb_find(source_aitk_dir(), &root, &e) != ERR_OK ||
	    aitkdb_open(root, &db, &e) != ERR_OK) {
		free(root);
		return false;
	}
	free(root);
	char said[512] = "";
	bool moved = false, reload = false;
	for (size_t i = 0; i < jp->n; i++) {
		struct aitk_job *r = &jp->rows[i];
		if (name && strcmp(r->name, name))
			continue;
		struct aitk_status as;
		err_clear(&e);
		int rc = aitkdb_status(db, r->name, &as, &e);
		if (rc == ERR_NOINPUT) {
			reload = true; /* deleted in the web UI */
			continue;
		}
		if (rc != ERR_OK)
			continue;
		const char *was = r->status ? r->status : "";
		if (strcmp(was, as.status)) {
			if (!said[0]) {
				char shown[256];
				text_sanitize(r->name, strlen(r->name), shown, sizeof shown);
				snprintf(said, sizeof said, _("Job %s: %s → %s."), shown,
					 was[0] ? was : "?", as.status[0] ? as.status : "?");
			}
			char *st = strdup(as.status);
			if (st) {
				free(r->status);
				r->status = st;
			}
			reload = true;
		}
		if (as.step != r->step) {
			r->step = as.step;
			moved = true;
		}
		if (as.total_steps >= 0)
			r->total_steps = as.total_steps;
	}
	aitkdb_close(&db);
	if (reload && !name) {
		jobs_load(v);
		jp->checked_ms = mono_ms();
	}
	if (said[0])
		ui_status(v->c, false, "%s", said);
	return reload || moved;
}

/* Verdicts came since the last call, or a job's row changed: redraw (the view's tick op). */
static bool jobs_tick(const struct ui_env *v)
{
	struct jobs_priv *jp = jobs_priv(v);
	bool changed = false;
	if (v->jobs_on && jp->loaded && !v->script && mono_ms() - jp->checked_ms >= JOBS_RECHECK_MS &&
	    (!jp->w || atomic_load(&jp->w->done)))
		changed = jobs_recheck(v, NULL);
	if (!jp->w)
		return changed;
	size_t k = 0;
	while (k < jp->w->n && atomic_load(&jp->w->ready[k]))
		k++;
	bool more = k != jp->seen;
	jp->seen = k;
	return more || changed;
}

const char *ui_jobs_selected(const struct ui_env *v)
{
	struct jobs_priv *jp = jobs_priv(v);
	long long c = v->pos->cursor;
	return c >= 0 && (size_t)c < jp->n ? jp->rows[c].name : NULL;
}

/* The verdict of job i in a few words: "B batch_size", or, when a change was saved after its
 * log, "A (low_vram applied, not run yet)". */
static void verdict_text(const struct jobs_priv *jp, size_t i, char *buf, size_t size)
{
	if (!jp->w || i >= jp->w->n || !atomic_load(&jp->w->ready[i])) {
		snprintf(buf, size, "%s", _("reading..."));
		return;
	}
	const struct source_verdict *v = &jp->w->v[i];
	char t = v->timing ? v->timing : '?';
	if (!v->have_log)
		snprintf(buf, size, "%s", _("no log"));
	else if (!v->oom)
		snprintf(buf, size, "%s", _("no OOM"));
	else if (jp->w->untried[i] && jp->w->applied[i][0])
		snprintf(buf, size, _("%c (%s applied, not run yet)"), t, jp->w->applied[i]);
	else if (jp->w->untried[i])
		snprintf(buf, size, _("%c (changed, not run yet)"), t);
	else
		snprintf(buf, size, "%c %s", t, v->first_fix ? v->first_fix
			 : plan_decision_word(&(struct plan_decision){ .what = v->next,
								  .fix = FIX_NONE }));
}

/* The detail line of job i: its full name, status and step, the verdict in words and the first
 * change, so that nothing a narrow column cuts is lost. */
static void detail_text(const struct jobs_priv *jp, size_t i, const char *step, char *buf,
			size_t size)
{
	const struct aitk_job *r = &jp->rows[i];
	char verdict[160], more[400] = "";
	verdict_text(jp, i, verdict, sizeof verdict);
	const struct source_verdict *v = jp->w && i < jp->w->n && atomic_load(&jp->w->ready[i])
						 ? &jp->w->v[i] : NULL;
	if (v && v->oom && jp->w->untried[i] && aitkdb_was_queued(r->status))
		snprintf(more, sizeof more, "%s", _("a change was saved after its log and it is "
						    "queued: waiting for the run"));
	else if (v && v->oom && jp->w->untried[i])
		snprintf(more, sizeof more, "%s", _("a change was saved after its log: Q queues it, "
						    "and its new log gives the next change"));
	else if (v && v->oom && v->first_fix)
		snprintf(more, sizeof more, _("%s; first change: %s"), diag_timing_words(v->when),
			 _(fix_defs[fix_by_name(v->first_fix)].title));
	else if (v && v->oom)
		snprintf(more, sizeof more, "%s", diag_timing_words(v->when));
	snprintf(buf, size, _("%s: %s, step %s. Verdict: %s%s%s"), r->name,
		 r->status ? r->status : "?", step, verdict, more[0] ? " — " : "", more);
}

/* Pads `raw` to `cells` cells plus two spaces, appended to the line; it is measured as drawn,
 * after its escapes (a job name can hold any) are taken out. A longer one loses its middle,
 * marked, so that the end, which often tells "..._v1" from "..._v2", stays — or its end, where
 * its middle is what tells it from one of the `n` others (E16). */
static void column_apart(struct ui_line *ln, enum ui_role role, const char *raw, int cells,
			 const char *const *others, size_t n)
{
	char s[512], cut[520], buf[600];
	text_sanitize(raw, strlen(raw), s, sizeof s);
	text_cut_apart(s, others, n, cells, ui_ascii() ? "~" : "\u2026", cut, sizeof cut);
	int used = text_width(cut, strlen(cut));
	snprintf(buf, sizeof buf, "%s%*s", cut, cells - used + 2, "");
	ui_line_append(ln, role, buf);
}

static void column(struct ui_line *ln, enum ui_role role, const char *raw, int cells)
{
	column_apart(ln, role, raw, cells, NULL, 0);
}

static int cells_of(const char *raw)
{
	char s[512];
	size_t n = text_sanitize(raw, strlen(raw), s, sizeof s);
	return text_width(s, n);
}

static enum ui_role status_role(const char *st)
{
	if (!st)
		return UI_R_NORMAL;
	if (!strcmp(st, "error"))
		return UI_R_OOM;
	if (!strcmp(st, "completed"))
		return UI_R_DONE;
	if (!strcmp(st, "running") || !strcmp(st, "queued"))
		return UI_R_TODO;
	return UI_R_DIM;
}

static void step_text(const struct aitk_job *r, char *step, size_t size)
{
	if (r->total_steps >= 0)
		snprintf(step, size, "%lld/%lld", r->step < 0 ? 0 : r->step, r->total_steps);
	else
		snprintf(step, size, "%lld", r->step < 0 ? 0 : r->step);
}

/* The widths of the columns for a content area `w` cells wide. NAME and VERDICT get what their
 * longest text needs; when that does not fit, UPDATED goes first, then INFO, then STEP, and only
 * then are the names cut (in the middle, marked), then the verdicts. */
struct jobs_cols { int name, verdict; bool step, updated; };

static struct jobs_cols jobs_layout(const struct jobs_priv *jp, int w)
{
	struct jobs_cols k = { cells_of(_("NAME")), cells_of(_("VERDICT")), true, true };
	/* E16: the verdicts come in the background, so the width of the longest one a row can get
	 * ("A gradient_checkpointing") is the verdict's before a name's tail takes it */
	for (int f = 0; f < FIX_COUNT; f++) {
		int fw = 2 + cells_of(fix_defs[f].name);
		k.verdict = fw > k.verdict ? fw : k.verdict;
	}
	for (size_t i = 0; i < jp->n; i++) {
		char v[160];
		int nw = cells_of(jp->rows[i].name), vw;
		verdict_text(jp, i, v, sizeof v);
		vw = cells_of(v);
		k.name = nw > k.name ? nw : k.name;
		k.verdict = vw > k.verdict ? vw : k.verdict;
	}
	const int status = 9 + 2, step = 11 + 2, updated = 16 + 2, info = 16;
#define JOBS_WIDTH (2 + k.name + 2 + status + (k.step ? step : 0) + (k.updated ? updated : 0) + \
		    k.verdict + 2)
	if (JOBS_WIDTH + info > w)
		k.updated = false;
	if (JOBS_WIDTH > w)
		k.step = false;
	if (JOBS_WIDTH > w) {
		int over = JOBS_WIDTH - w, min = 12;
		k.name = k.name - over > min ? k.name - over : (k.name < min ? k.name : min);
	}
	if (JOBS_WIDTH > w) {
		int over = JOBS_WIDTH - w;
		k.verdict = k.verdict - over > 8 ? k.verdict - over : 8;
	}
	/* The verdicts arrive later: where there is room the columns do not jump for most. */
	while (k.verdict < 22 && JOBS_WIDTH + info < w)
		k.verdict++;
#undef JOBS_WIDTH
	return k;
}

static void jobs_draw(const struct ui_env *v)
{
	const struct ui_ctx *c = v->c;
	struct jobs_priv *jp = jobs_priv(v);
	if (!jp->loaded)
		jobs_load(v);
	struct ui_lines l = { 0 };
	if (jp->err[0]) {
		/* wrapped: a path and the folder it names do not fit 80 columns (E23) */
		ui_lines_wrap(&l, UI_R_ERROR, jp->err, c->r.w - 1, 0);
		if (!source_aitk_dir()) /* given, the error says where to look (E23) */
			ui_lines_wrap(&l, UI_R_DIM, _("Start oomfix with --aitk DIR, the ai-toolkit "
						      "folder that holds aitk_db.db."), c->r.w - 1, 0);
		ui_draw_lines(c->win, c->r, &l, -1, &v->pos->top, false);
		ui_lines_free(&l);
		return;
	}
	char head[700];
	snprintf(head, sizeof head, _("Jobs of the web UI (%s): Enter opens one, failed first"),
		 jp->where);
	struct ui_line *ln = ui_lines_add(&l, UI_R_HEADING, head);
	struct jobs_cols k = jobs_layout(jp, c->r.w);
	ln = ui_lines_add(&l, UI_R_LABEL, "  ");
	column(ln, UI_R_LABEL, _("NAME"), k.name);
	column(ln, UI_R_LABEL, _("STATUS"), 9);
	if (k.step)
		column(ln, UI_R_LABEL, _("STEP"), 11);
	if (k.updated)
		column(ln, UI_R_LABEL, _("UPDATED"), 16);
	column(ln, UI_R_LABEL, _("VERDICT"), k.verdict);
	ui_line_append(ln, UI_R_LABEL, _("INFO"));
	if (!jp->n)
		ui_lines_add(&l, UI_R_DIM, _("  No jobs in this database."));
	const char **names = jp->n ? calloc(jp->n, sizeof *names) : NULL;
	for (size_t i = 0; names && i < jp->n; i++)
		names[i] = jp->rows[i].name;
	for (size_t i = 0; i < jp->n; i++) {
		const struct aitk_job *r = &jp->rows[i];
		char step[48], when[40] = "-", verdict[160], info[300];
		step_text(r, step, sizeof step);
		if (r->updated_ms >= 0) {
			aitkdb_iso8601(r->updated_ms, when, sizeof when);
			when[10] = ' ';
			when[16] = '\0';
		}
		verdict_text(jp, i, verdict, sizeof verdict);
		const char *inf = r->info ? r->info : "";
		snprintf(info, sizeof info, "%.*s", (int)strcspn(inf, "\r\n"), inf);
		ln = ui_lines_add(&l, UI_R_NORMAL, "  ");
		column_apart(ln, UI_R_VALUE, r->name, k.name, names, names ? jp->n : 0);
		column(ln, status_role(r->status), r->status ? r->status : "?", 9);
		if (k.step)
			column(ln, UI_R_NORMAL, step, 11);
		if (k.updated)
			column(ln, UI_R_DIM, when, 16);
		column(ln, UI_R_MARK, verdict, k.verdict);
		ui_line_append(ln, UI_R_DIM, info);
		ln->selectable = true;
		ln->target = (long long)i;
	}
	free(names);
	struct ui_pos *p = v->pos;
	if (p->cursor >= (long long)jp->n)
		p->cursor = jp->n ? (long long)jp->n - 1 : 0;
	if (p->cursor < 0)
		p->cursor = 0;
	/* The job under the cursor in full, on the last rows (two or three), under a title. */
	struct ui_rect r = c->r;
	if (jp->n && r.h >= 8) {
		struct ui_lines d = { 0 };
		char step[48], text[1400];
		step_text(&jp->rows[p->cursor], step, sizeof step);
		detail_text(jp, (size_t)p->cursor, step, text, sizeof text);
		ui_lines_wrap(&d, UI_R_VALUE, text, r.w - 2, 2);
		long long dtop = 0;
		int most = r.h >= 14 ? 3 : 2, dh = (int)d.n < most ? (int)d.n : most;
		struct ui_rect dr = { .y = r.y + r.h - dh, .x = r.x, .h = dh, .w = r.w };
		ui_fill(c->win, dr.y - 1, r.x, r.w, UI_R_DIM);
		ui_put(c->win, dr.y - 1, r.x + 2, r.w - 2, UI_R_DIM, _("Selected job:"));
		ui_draw_lines(c->win, dr, &d, -1, &dtop, false);
		ui_lines_free(&d);
		r.h -= dh + 1;
	}
	/* The cursor is a job index; on screen the jobs start after the two heading lines. */
	long long top = p->top;
	ui_draw_lines(c->win, r, &l, jp->n ? p->cursor + 2 : -1, &top, jp->n > 0);
	p->top = top;
	ui_lines_free(&l);
}

/* Queues the job of the question and says in the status line what happened: queued, queued
 * already (left in its place), or why not. */
static void queue_now(const struct ui_env *v, const char *saved)
{
	const struct ui_ctx *c = v->c;
	struct jobs_priv *jp = jobs_priv(v);
	const char *name = jp->ask_name;
	if (!name)
		return;
	struct err e;
	err_clear(&e);
	char *root = NULL, *was = NULL, shown[512], said[700];
	struct aitk_db *db = NULL;
	text_sanitize(name, strlen(name), shown, sizeof shown);
	int rc = aitkdb_find(source_aitk_dir(), &root, &e);
	if (rc == ERR_OK)
		rc = aitkdb_open(root, &db, &e);
	if (rc == ERR_OK)
		rc = aitkdb_queue(db, name, &was, &e);
	if (rc)
		ui_status_err(c, &e);
	else if (aitkdb_was_queued(was))
		snprintf(said, sizeof said, _("%s is queued already: left as it is, in its place in "
					      "the queue."), shown);
	else
		snprintf(said, sizeof said, _("Queued %s (it was %s); the web UI's worker starts it."),
			 shown, was ? was : "?");
	if (!rc)
		ui_status(c, false, "%s%s", saved, said);
	free(was);
	free(root);
	aitkdb_close(&db);
	/* show the new status, the cursor still on this job */
	free(jp->keep);
	jp->keep = strdup(name);
	jp->loaded = false;
	ui_session_job_status(v->s);
}

/* The open job is the one asked about. */
static bool is_open_job(const struct ui_env *v, const char *name)
{
	const struct aitk_job *row = v->s->src ? source_row(v->s->src) : NULL;
	return row && row->name && name && !strcmp(row->name, name);
}

static void answer_queue(struct ui_app *host, const struct ui_ctx *c, int key)
{
	struct ui_env env = ui_env_of(host, UI_V_JOBS, c);
	const struct ui_env *v = &env;
	struct jobs_priv *jp = jobs_priv(v);
	if (key == 's') {
		/* save and queue: the open job's edits are written first; a failed save queues
		 * nothing */
		struct err e;
		err_clear(&e);
		if (!is_open_job(v, jp->ask_name) || ui_session_save(v->s, 0, &e) != ERR_OK) {
			if (e.msg[0])
				ui_status_err(c, &e);
			return;
		}
		queue_now(v, _("Saved. "));
		return;
	}
	if (key != 'y') {
		ui_status(c, false, "%s", _("Not queued: the job was left as it is."));
		return;
	}
	queue_now(v, "");
}

static const struct ui_question ask_queue = {
	.text = N_("Queue it again for the web UI's worker, as its start button does? y = queue, n = "
		   "leave it"),
	.answer = answer_queue,
	.named = true,
};

static const struct ui_question ask_queue_unsaved = {
	.text = N_("It has unsaved changes: the run would use the saved version. s = save them and "
		   "queue, y = queue the saved version, n = cancel"),
	.keys = "s",
	.key_words = { N_("save+queue") },
	.answer = answer_queue,
	.named = true,
};

void ui_jobs_ask_queue(const struct ui_env *v, const char *name, const char *status)
{
	const struct ui_ctx *c = v->c;
	struct jobs_priv *jp = jobs_priv(v);
	char shown[512];
	text_sanitize(name, strlen(name), shown, sizeof shown);
	/* Refused before asking when the job is running, said when it is queued already. */
	if (status && !strcmp(status, "running")) {
		ui_status(c, false, _("%s is running: it cannot be queued; stop it in the web UI "
				     "first."), shown);
		return;
	}
	if (aitkdb_was_queued(status)) {
		ui_status(c, false, _("%s is queued already: left as it is, in its place in the "
				      "queue."), shown);
		return;
	}
	free(jp->ask_name);
	jp->ask_name = strdup(name);
	if (!jp->ask_name)
		return;
	ui_status(c, false, _("Job %s (status %s)."), shown, status && *status ? status : "?");
	bool unsaved = is_open_job(v, name) && ui_session_dirty(v->s);
	ui_ask(v->host, unsaved ? &ask_queue_unsaved : &ask_queue, UI_M_NORMAL);
}

bool ui_jobs_refuses(enum ui_act act)
{
	switch (act) {
	case UI_A_APPLY_FIRST: case UI_A_UNDO: case UI_A_REDO: case UI_A_DIFF: case UI_A_SAVE:
	case UI_A_WALK: case UI_A_RETRY:
		return true;
	default:
		return false;
	}
}

static enum ui_req jobs_action(const struct ui_env *v, enum ui_act act)
{
	const struct ui_ctx *c = v->c;
	struct jobs_priv *jp = jobs_priv(v);
	struct ui_pos *p = v->pos;
	if (ui_jobs_refuses(act)) {
		/* They change the open job, which may not be the one under the cursor. */
		ui_status(c, false, "%s", _("These keys act on an open job: open the one under the "
					    "cursor first (Enter)."));
		return UI_REQ_DONE;
	}
	switch (act) {
	case UI_A_UP: case UI_A_DOWN: case UI_A_PGUP: case UI_A_PGDN: case UI_A_TOP:
	case UI_A_BOTTOM:
		ui_pos_move(p, act, (long long)jp->n, c->page);
		return UI_REQ_DONE;
	case UI_A_OPEN_JOB:
		return jp->n ? UI_REQ_OPEN_JOB : UI_REQ_DONE;
	case UI_A_QUEUE_JOB: {
		long long i = p->cursor;
		/* what the database says now, not what the list read: a job that has failed since
		 * is not "queued already" (E1) */
		if (i >= 0 && (size_t)i < jp->n)
			jobs_recheck(v, jp->rows[i].name);
		if (i >= 0 && (size_t)i < jp->n)
			ui_jobs_ask_queue(v, jp->rows[i].name, jp->rows[i].status);
		return UI_REQ_DONE;
	}
	default:
		return UI_REQ_PASS;
	}
}

static bool jobs_shown(const struct ui_env *v)
{
	return v->jobs_on;
}

static void jobs_fini(void *priv)
{
	struct jobs_priv *jp = priv;
	work_drop(jp);
	aitkdb_rows_free(jp->rows, jp->n);
	free(jp->keep);
	free(jp->ask_name);
	memset(jp, 0, sizeof *jp);
}

const struct ui_view_ops ui_view_jobs = {
	.name = N_("Jobs"), .priv_size = sizeof(struct jobs_priv), .keys = UI_CTX_JOBS,
	.draw = jobs_draw, .action = jobs_action, .fini = jobs_fini, .shown = jobs_shown,
	.tick = jobs_tick, .busy = jobs_busy,
};
