/* view_jobs.c — the job list of the AI Toolkit web UI (`oomfix --aitk DIR`): every job of its
 * database, failed first, with status, progress, last change, the first line of its info and
 * the verdict of its current log. The list comes at once; the verdicts are filled in by a
 * worker thread that reads the logs. Enter opens a job in the panels, J comes back here. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/aitkdb.h"
#include "oomfix/i18n.h"
#include "oomfix/source.h"
#include "oomfix/text.h"
#include "prompt.h"
#include "ui.h"

/* What the worker reads and writes: its own copies, freed by whichever side lets go last. */
struct jobs_work {
	size_t n;
	char **label, **cfg, **log;
	struct source_verdict *v;
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
};

static struct jobs_priv *jobs_priv(const struct ui_app *a)
{
	return ui_view_priv(a, UI_V_JOBS);
}

static void work_unref(struct jobs_work *w)
{
	if (!w || atomic_fetch_sub(&w->refs, 1) != 1)
		return;
	for (size_t i = 0; i < w->n; i++) {
		free(w->label[i]);
		free(w->cfg[i]);
		free(w->log[i]);
	}
	free(w->label);
	free(w->cfg);
	free(w->log);
	free(w->v);
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
	w->v = calloc(jp->n + 1, sizeof *w->v);
	w->ready = calloc(jp->n + 1, sizeof *w->ready);
	atomic_init(&w->refs, 2);
	bool ok = w->label && w->cfg && w->log && w->v && w->ready;
	for (size_t i = 0; ok && i < jp->n; i++) {
		atomic_init(&w->ready[i], false);
		w->label[i] = dupf(SOURCE_AITK_PREFIX, jp->rows[i].name, "");
		w->cfg[i] = strdup(jp->rows[i].job_config ? jp->rows[i].job_config : "");
		w->log[i] = dupf(aitkdb_training_folder(db), "/", jp->rows[i].name);
		char *full = w->log[i] ? dupf(w->log[i], "/log.txt", "") : NULL;
		free(w->log[i]);
		w->log[i] = full;
		ok = w->label[i] && w->cfg[i] && w->log[i];
	}
	if (!ok) {
		atomic_init(&w->refs, 1);
		if (!w->label || !w->cfg || !w->log)
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

static void jobs_load(struct ui_app *a)
{
	struct jobs_priv *jp = jobs_priv(a);
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
	work_start(jp, db, a->script);
	aitkdb_close(&db);
}

void ui_jobs_reload(struct ui_app *a)
{
	struct jobs_priv *jp = jobs_priv(a);
	jp->loaded = false;
}

/* The loop waits briefly while the worker reads logs (the view's busy op). */
static bool jobs_busy(const struct ui_app *a)
{
	const struct jobs_priv *jp = jobs_priv(a);
	/* Verdicts not shown yet count too: the worker may finish between a poll and the wait. */
	return jp->w && (!atomic_load(&jp->w->done) || jp->seen < jp->w->n);
}

/* Verdicts came since the last call: redraw (the view's tick op). */
static bool jobs_tick(struct ui_app *a)
{
	struct jobs_priv *jp = jobs_priv(a);
	if (!jp->w)
		return false;
	size_t k = 0;
	while (k < jp->w->n && atomic_load(&jp->w->ready[k]))
		k++;
	bool more = k != jp->seen;
	jp->seen = k;
	return more;
}

const char *ui_jobs_selected(struct ui_app *a)
{
	struct jobs_priv *jp = jobs_priv(a);
	long long c = a->pos[UI_V_JOBS].cursor;
	return c >= 0 && (size_t)c < jp->n ? jp->rows[c].name : NULL;
}

static void verdict_text(const struct jobs_priv *jp, size_t i, char *buf, size_t size)
{
	if (!jp->w || i >= jp->w->n || !atomic_load(&jp->w->ready[i])) {
		snprintf(buf, size, "%s", _("reading..."));
		return;
	}
	const struct source_verdict *v = &jp->w->v[i];
	if (!v->have_log)
		snprintf(buf, size, "%s", _("no log"));
	else if (!v->oom)
		snprintf(buf, size, "%s", _("no OOM"));
	else
		snprintf(buf, size, "%c %s", v->timing ? v->timing : '?',
			 v->first_fix ? v->first_fix : "-");
}

/* Pads `raw` to `cells` cells (cut when longer) plus two spaces, appended to the line; it is
 * measured as drawn, after its escapes (a job name can hold any) are taken out. */
static void column(struct ui_line *ln, enum ui_role role, const char *raw, int cells)
{
	char s[512], buf[600];
	int used = 0;
	size_t n = text_fit(s, text_sanitize(raw, strlen(raw), s, sizeof s), cells, &used);
	snprintf(buf, sizeof buf, "%.*s%*s", (int)n, s, cells - used + 2, "");
	ui_line_append(ln, role, buf);
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

static void jobs_draw(struct ui_app *a, const struct ui_ctx *c)
{
	struct jobs_priv *jp = jobs_priv(a);
	if (!jp->loaded)
		jobs_load(a);
	struct ui_lines l = { 0 };
	if (jp->err[0]) {
		ui_lines_add(&l, UI_R_ERROR, jp->err);
		ui_lines_add(&l, UI_R_DIM, _("Start oomfix with --aitk DIR, the ai-toolkit folder that "
					     "holds aitk_db.db."));
		ui_draw_lines(c->win, c->r, &l, -1, &a->pos[UI_V_JOBS].top, false);
		ui_lines_free(&l);
		return;
	}
	char head[700];
	snprintf(head, sizeof head, _("Jobs of the web UI (%s): Enter opens one, failed first"),
		 jp->where);
	struct ui_line *ln = ui_lines_add(&l, UI_R_HEADING, head);
	ln = ui_lines_add(&l, UI_R_LABEL, "  ");
	column(ln, UI_R_LABEL, _("NAME"), 24);
	column(ln, UI_R_LABEL, _("STATUS"), 9);
	column(ln, UI_R_LABEL, _("STEP"), 11);
	/* Under 110 columns the time of the last change gives way to the verdict, which matters
	 * more here. */
	bool wide = c->r.w >= 110;
	if (wide)
		column(ln, UI_R_LABEL, _("UPDATED"), 16);
	column(ln, UI_R_LABEL, _("VERDICT"), 22);
	ui_line_append(ln, UI_R_LABEL, _("INFO"));
	if (!jp->n)
		ui_lines_add(&l, UI_R_DIM, _("  No jobs in this database."));
	for (size_t i = 0; i < jp->n; i++) {
		const struct aitk_job *r = &jp->rows[i];
		char step[48], when[40] = "-", verdict[96], info[300];
		if (r->total_steps >= 0)
			snprintf(step, sizeof step, "%lld/%lld", r->step < 0 ? 0 : r->step, r->total_steps);
		else
			snprintf(step, sizeof step, "%lld", r->step < 0 ? 0 : r->step);
		if (r->updated_ms >= 0) {
			aitkdb_iso8601(r->updated_ms, when, sizeof when);
			when[10] = ' ';
			when[16] = '\0';
		}
		verdict_text(jp, i, verdict, sizeof verdict);
		const char *inf = r->info ? r->info : "";
		snprintf(info, sizeof info, "%.*s", (int)strcspn(inf, "\r\n"), inf);
		ln = ui_lines_add(&l, UI_R_NORMAL, "  ");
		column(ln, UI_R_VALUE, r->name, 24);
		column(ln, status_role(r->status), r->status ? r->status : "?", 9);
		column(ln, UI_R_NORMAL, step, 11);
		if (wide)
			column(ln, UI_R_DIM, when, 16);
		column(ln, UI_R_MARK, verdict, 22);
		ui_line_append(ln, UI_R_DIM, info);
		ln->selectable = true;
		ln->target = (long long)i;
	}
	struct ui_pos *p = &a->pos[UI_V_JOBS];
	if (p->cursor >= (long long)jp->n)
		p->cursor = jp->n ? (long long)jp->n - 1 : 0;
	if (p->cursor < 0)
		p->cursor = 0;
	/* The cursor is a job index; on screen the jobs start after the two heading lines. */
	long long top = p->top;
	ui_draw_lines(c->win, c->r, &l, jp->n ? p->cursor + 2 : -1, &top, jp->n > 0);
	p->top = top;
	ui_lines_free(&l);
}

/* The yes to the queue question: queues the job under the list's cursor and says in the status
 * line what happened: queued, queued already (left in its place), or why not. */
static void answer_queue(struct ui_app *a, const struct ui_ctx *c, int key)
{
	struct jobs_priv *jp = jobs_priv(a);
	if (key != 'y') {
		ui_status(c, false, "%s", _("Not queued: the job was left as it is."));
		return;
	}
	const char *name = ui_jobs_selected(a);
	if (!name)
		return;
	struct err e;
	err_clear(&e);
	char *root = NULL, *was = NULL, shown[512];
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
		ui_status(c, false, _("%s is queued already: left as it is, in its place in the "
				      "queue."), shown);
	else
		ui_status(c, false, _("Queued %s (it was %s); the web UI's worker starts it."),
			  shown, was ? was : "?");
	free(was);
	free(root);
	aitkdb_close(&db);
	jp->loaded = false; /* show the new status */
}

static const struct ui_question ask_queue = {
	.text = N_("Queue it again for the web UI's worker, as its start button does? y = queue, n = "
		   "leave it"),
	.answer = answer_queue,
	.named = true,
};

static enum ui_req jobs_action(struct ui_app *a, const struct ui_ctx *c, enum ui_act act)
{
	struct jobs_priv *jp = jobs_priv(a);
	struct ui_pos *p = &a->pos[UI_V_JOBS];
	switch (act) {
	case UI_A_UP: case UI_A_DOWN: case UI_A_PGUP: case UI_A_PGDN: case UI_A_TOP:
	case UI_A_BOTTOM:
		ui_pos_move(p, act, (long long)jp->n, c->page);
		return UI_REQ_DONE;
	case UI_A_OPEN_JOB:
		return jp->n ? UI_REQ_OPEN_JOB : UI_REQ_DONE;
	case UI_A_QUEUE_JOB: {
		/* Asked first; refused before asking when the list already shows the job running,
		 * or says so when it is queued. */
		long long i = p->cursor;
		if (i < 0 || (size_t)i >= jp->n)
			return UI_REQ_DONE;
		const struct aitk_job *j = &jp->rows[i];
		char name[512];
		text_sanitize(j->name, strlen(j->name), name, sizeof name);
		if (j->status && !strcmp(j->status, "running")) {
			ui_status(c, true, _("%s is running: it cannot be queued; stop it in the web UI "
					     "first."), name);
			return UI_REQ_DONE;
		}
		if (aitkdb_was_queued(j->status)) {
			ui_status(c, false, _("%s is queued already: left as it is, in its place in the "
					      "queue."), name);
			return UI_REQ_DONE;
		}
		ui_status(c, false, _("Job %s (status %s)."), name, j->status ? j->status : "?");
		ui_ask(a, &ask_queue, UI_M_NORMAL);
		return UI_REQ_DONE;
	}
	default:
		return UI_REQ_PASS;
	}
}

static bool jobs_shown(const struct ui_app *a)
{
	return a->jobs_on;
}

static void jobs_fini(struct ui_app *a)
{
	struct jobs_priv *jp = jobs_priv(a);
	work_drop(jp);
	aitkdb_rows_free(jp->rows, jp->n);
	memset(jp, 0, sizeof *jp);
}

const struct ui_view_ops ui_view_jobs = {
	.name = N_("Jobs"), .priv_size = sizeof(struct jobs_priv), .keys = UI_CTX_JOBS,
	.draw = jobs_draw, .action = jobs_action, .fini = jobs_fini, .shown = jobs_shown,
	.tick = jobs_tick, .busy = jobs_busy,
};
