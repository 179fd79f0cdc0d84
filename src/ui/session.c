/* session.c — the job being edited: loaded text, a linear undo/redo history of documents (each
 * edit makes a new immutable doc, so undo is keeping the old one), reloading, and saving. The
 * log and its verdict are session_log.c's. No curses here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oomfix/aitkdb.h"
#include "oomfix/buf.h"
#include "oomfix/diff.h"
#include "oomfix/i18n.h"
#include "oomfix/trail.h"
#include "session.h"

struct doc *ui_session_cur(const struct ui_session *s)
{
	return s->nhist ? s->hist[s->pos].doc : NULL;
}

bool ui_session_dirty(const struct ui_session *s)
{
	size_t a, b;
	const char *ta, *tb;

	if (!s->base || !ui_session_cur(s))
		return false;
	ta = doc_text(s->base, &a);
	tb = doc_text(ui_session_cur(s), &b);
	return a != b || memcmp(ta, tb, a) != 0;
}

static struct doc *copy_doc(const struct doc *d, struct err *e)
{
	size_t len;
	const char *t = doc_text(d, &len);
	struct doc *out = NULL;

	if (doc_load(doc_name(d), t, len, &out, e))
		return NULL;
	return out;
}

/* Why a job read from the log cannot be changed. */
#define READ_ONLY_MSG _("the settings come from the log and are read-only: open the job file to " \
			"change them (oomfix JOB.yaml LOG)")

static void (*on_change)(const struct ui_session *s);

void ui_session_on_change(void (*fn)(const struct ui_session *s))
{
	on_change = fn;
}

void ui_session_refresh(struct ui_session *s)
{
	struct err e;

	job_free(&s->job);
	if (ui_session_cur(s) && job_from_doc(ui_session_cur(s), &s->job, &e))
		s->job = NULL;
	plan_build(s->job, s->have_diag ? &s->diag : NULL, &s->plan);
	checklist_build(s->job, s->have_diag ? &s->diag : NULL, &s->check);
	if (s->base_job && ui_session_dirty(s)) {
		/* An item ticked only by an unsaved edit says so: the job on disk is not there yet. */
		struct checklist saved;
		checklist_build(s->base_job, s->have_diag ? &s->diag : NULL, &saved);
		checklist_mark_unsaved(&s->check, &saved);
	}
	if (on_change)
		on_change(s);
}

static void set_base(struct ui_session *s, struct doc *d)
{
	struct err e;

	job_free(&s->base_job);
	doc_free(&s->base);
	s->base = d;
	if (d && job_from_doc(d, &s->base_job, &e))
		s->base_job = NULL;
}

static int hist_append(struct ui_session *s, struct doc *d, enum fix_id fix)
{
	if (!ARRAY_GROW(s->hist, s->nhist + 1, s->cap))
		return -1;
	s->hist[s->nhist].doc = d;
	s->hist[s->nhist].fix = fix;
	s->nhist++;
	return 0;
}

/* The newest run log of a job file (*path malloc'd), or ERR_NOINPUT when it has none. */
static int newest_run(const struct source *src, char **path)
{
	struct trail t;
	struct err e;
	*path = NULL;
	if (trail_build(src, &t, &e))
		return e.code ? e.code : ERR_SOFTWARE;
	if (t.n)
		*path = strdup(t.runs[0].log);
	trail_free(&t);
	return *path ? ERR_OK : ERR_NOINPUT;
}

static int open_job_log(struct ui_session *s, const char *job_path, const char *log_path,
			char **newest, struct err *e);

int ui_session_open(struct ui_session *s, const char *job_path, const char *log_path,
		    struct err *e)
{
	char *newest = NULL;
	int orc = open_job_log(s, job_path, log_path, &newest, e);
	free(newest);
	return orc;
}

static int open_job_log(struct ui_session *s, const char *job_path, const char *log_path,
			char **newest, struct err *e)
{
	memset(s, 0, sizeof *s);
	err_clear(e);
	s->base_pos = 0; /* hist[0], once loaded, is the version on disk */
	if (job_path) {
		struct doc *d = NULL;
		struct job *j = NULL;
		size_t len;
		int rc = source_open(job_path, &s->src, e);
		if (rc)
			return rc;
		const char *text = source_text(s->src, &len);
		if ((rc = doc_load(source_label(s->src), text, len, &d, e))) {
			source_free(&s->src);
			return rc;
		}
		if ((rc = job_from_doc(d, &j, e))) {
			doc_free(&d);
			source_free(&s->src);
			return rc;
		}
		job_free(&j);
		s->job_path = strdup(source_path(s->src));
		/* A web UI job brings its current log when none was given. */
		struct stat st;
		if (!log_path && source_log(s->src) && stat(source_log(s->src), &st) == 0)
			log_path = source_log(s->src);
		/* A job file brings its newest run log (JOB.oomfix-runs/<n>.log), when it has one. */
		if (!log_path && !source_row(s->src) && newest_run(s->src, newest) == ERR_OK) {
			log_path = *newest;
			s->log_from_runs = true;
		}
		hist_append(s, d, FIX_NONE);
		set_base(s, copy_doc(d, e));
	}
	if (log_path) {
		int rc;

		if (!strcmp(log_path, "-"))
			return err_set(e, ERR_USAGE, NULL, 0, 0, "%s",
				       _("the terminal UI reads the log from a file, not from standard "
					 "input (use 'oomfix diagnose -' for a pipe)"));
		if ((rc = logidx_open(log_path, &s->log, e)))
			return rc;
		if (logidx_is_stream(s->log)) {
			logidx_close(&s->log);
			return err_set(e, ERR_USAGE, log_path, 0, 0, "%s",
				       _("the terminal UI needs a regular log file to scroll"));
		}
		/* Opening only stats the file; reading it is the worker's (ui_session_diag_start). */
		s->log_path = strdup(log_path);
	}
	ui_session_job_status(s); /* a web UI job's status, shown from the first screen */
	err_clear(e);
	ui_session_refresh(s);
	return ERR_OK;
}

void ui_session_free_job(struct ui_session *s)
{
	for (size_t i = 0; i < s->nhist; i++)
		doc_free(&s->hist[i].doc);
	free(s->hist);
	s->hist = NULL;
	s->nhist = s->pos = s->cap = 0;
	job_free(&s->job);
	set_base(s, NULL);
	free(s->job_path);
	s->job_path = NULL;
	source_free(&s->src);
}

void ui_session_push(struct ui_session *s, struct doc *d, enum fix_id fix)
{
	/* Dropping the redo tail: a new edit after undo starts a new branch. */
	while (s->nhist > s->pos + 1) {
		s->nhist--;
		doc_free(&s->hist[s->nhist].doc);
	}
	if (s->base_pos != (size_t)-1 && s->base_pos > s->pos)
		s->base_pos = (size_t)-1;
	if (hist_append(s, d, fix)) {
		doc_free(&d);
		return;
	}
	s->pos = s->nhist - 1;
	ui_session_refresh(s);
}

bool ui_session_undo(struct ui_session *s)
{
	if (s->pos == 0)
		return false;
	s->pos--;
	ui_session_refresh(s);
	return true;
}

bool ui_session_redo(struct ui_session *s)
{
	if (s->pos + 1 >= s->nhist)
		return false;
	s->pos++;
	ui_session_refresh(s);
	return true;
}

static bool same_text(const struct doc *a, const struct doc *b)
{
	size_t la, lb;
	const char *ta = doc_text(a, &la), *tb = doc_text(b, &lb);
	return la == lb && memcmp(ta, tb, la) == 0;
}

/* The document the fix would make, or NULL (nothing to change, or an error in e). */
static struct doc *fix_result(const struct ui_session *s, enum fix_id id, char *note,
			      size_t notesz, struct err *e)
{
	struct fix_edit_list l;
	struct doc *nd = NULL;

	err_clear(e);
	if (note && notesz)
		note[0] = '\0';
	if (!s->job)
		return NULL;
	memset(&l, 0, sizeof l);
	/* the failed phase, as retry and `fix --log` read it (E10) */
	int phase = s->have_diag && !s->diag_pending && s->diag.oom ? (int)s->diag.phase : 0;
	if (fix_edits_after(s->job, id, true, phase, &l, e))
		return NULL;
	if (note && notesz)
		snprintf(note, notesz, "%s", l.note);
	if (l.n > 0 && doc_apply(ui_session_cur(s), l.edits, l.n, &nd, e))
		nd = NULL;
	fix_edits_free(&l);
	if (nd && same_text(nd, ui_session_cur(s)))
		doc_free(&nd);
	return nd;
}

int ui_session_apply_fix(struct ui_session *s, enum fix_id id, bool *changed, char *note,
			 size_t notesz, struct err *e)
{
	*changed = false;
	if (s->read_only)
		return err_set(e, ERR_USAGE, NULL, 0, 0, "%s", READ_ONLY_MSG);
	struct doc *nd = fix_result(s, id, note, notesz, e);

	if (!nd)
		return e->code;
	ui_session_push(s, nd, id);
	*changed = true;
	return ERR_OK;
}

char *ui_session_fix_diff(const struct ui_session *s, enum fix_id id, struct err *e)
{
	struct doc *nd = fix_result(s, id, NULL, 0, e);
	char *d;
	size_t la, lb;
	const char *ta, *tb;

	if (!nd)
		return e->code ? NULL : strdup("");
	ta = doc_text(ui_session_cur(s), &la);
	tb = doc_text(nd, &lb);
	d = source_diff(doc_name(nd), ta, la, tb, lb, 3);
	doc_free(&nd);
	return d;
}

int ui_session_edit(struct ui_session *s, const struct doc_edit *ed, size_t n, bool *changed,
		    struct err *e)
{
	struct doc *nd = NULL;
	struct job *j = NULL;
	int rc;

	*changed = false;
	if (!ui_session_cur(s))
		return err_set(e, ERR_USAGE, NULL, 0, 0, "%s", _("no job file is open"));
	if (s->read_only)
		return err_set(e, ERR_USAGE, NULL, 0, 0, "%s", READ_ONLY_MSG);
	if ((rc = doc_apply(ui_session_cur(s), ed, n, &nd, e)))
		return rc;
	/* An edit that would leave no readable job is refused: the panels never go blank. */
	if ((rc = job_from_doc(nd, &j, e))) {
		doc_free(&nd);
		return rc;
	}
	job_free(&j);
	if (same_text(nd, ui_session_cur(s))) {
		doc_free(&nd);
		return ERR_OK;
	}
	ui_session_push(s, nd, FIX_NONE);
	*changed = true;
	return ERR_OK;
}

char *ui_session_diff(const struct ui_session *s, int context)
{
	size_t la, lb;
	const char *ta, *tb;

	if (!s->base || !ui_session_cur(s))
		return strdup("");
	ta = doc_text(s->base, &la);
	tb = doc_text(ui_session_cur(s), &lb);
	return source_diff(source_label(s->src), ta, la, tb, lb, context);
}

int ui_session_replace_text(struct ui_session *s, const char *text, size_t len, struct err *e)
{
	struct doc *nd = NULL;
	struct job *j = NULL;
	int rc;

	if (!ui_session_cur(s))
		return err_set(e, ERR_USAGE, NULL, 0, 0, "%s", _("no job file is open"));
	if (s->read_only)
		return err_set(e, ERR_USAGE, NULL, 0, 0, "%s", READ_ONLY_MSG);
	if ((rc = doc_load(source_label(s->src), text, len, &nd, e)))
		return rc;
	if ((rc = job_from_doc(nd, &j, e))) {
		doc_free(&nd);
		return rc;
	}
	job_free(&j);
	if (same_text(nd, ui_session_cur(s))) {
		doc_free(&nd);
		return ERR_OK;
	}
	ui_session_push(s, nd, FIX_NONE);
	return ERR_OK;
}

/* The trainer prints the process's settings as indented JSON when it starts (BaseProcess:
 * json.dumps(config, indent=4)): a line "{" up to a line "}". Looked for in the log's first
 * lines only, where it is. */
#define ECHO_SCAN_LINES 20000
#define ECHO_MAX_BYTES (4u * 1024 * 1024)

int ui_session_open_log_job(struct ui_session *s, bool just_look, struct err *e)
{
	char line[4096];
	size_t len;
	bool clipped, in = false;
	struct strbuf text = { 0 };
	struct doc *d = NULL;
	struct job *j = NULL;
	int rc = ERR_DATA;

	err_clear(e);
	if (!s->log || ui_session_cur(s))
		return err_set(e, ERR_USAGE, NULL, 0, 0, "%s", _("no log, or a job is already open"));
	static const char head[] = "{\"job\": \"extension\", \"config\": {\"name\": \"from-log\", "
				   "\"process\": [\n";
	for (uint64_t ln = 1; ln <= ECHO_SCAN_LINES; ln++) {
		if (logidx_read_line(s->log, ln, line, sizeof line, &len, &clipped, NULL, e))
			break;
		if (!in && !(len == 1 && line[0] == '{'))
			continue;
		if (!in) {
			in = true;
			strbuf_adds(&text, head);
		}
		if (text.oom || clipped || text.len + len + 64 > ECHO_MAX_BYTES)
			break;
		strbuf_add(&text, line, len);
		strbuf_add(&text, "\n", 1);
		if (len == 1 && line[0] == '}') {
			strbuf_adds(&text, "]}}\n");
			if (!text.oom)
				rc = ERR_OK;
			break;
		}
	}
	err_clear(e);
	if (rc != ERR_OK) {
		strbuf_free(&text);
		return err_set(e, ERR_DATA, s->log_path, 0, 0, "%s",
			       _("the log does not hold the trainer's echo of the job's settings"));
	}
	if ((rc = doc_load("log.json", text.p, text.len, &d, e)) || (rc = job_from_doc(d, &j, e))) {
		strbuf_free(&text);
		doc_free(&d);
		return rc;
	}
	strbuf_free(&text);
	job_free(&j);
	if (just_look) {
		doc_free(&d);
		return ERR_OK;
	}
	if (hist_append(s, d, FIX_NONE)) {
		doc_free(&d);
		return err_set(e, ERR_SOFTWARE, NULL, 0, 0, "%s", _("out of memory"));
	}
	s->pos = 0;
	s->base_pos = 0;
	s->read_only = true;
	set_base(s, copy_doc(d, e));
	err_clear(e);
	ui_session_refresh(s);
	return ERR_OK;
}

bool ui_session_changed_on_disk(const struct ui_session *s, struct save_stamp *now)
{
	const struct save_stamp *was;
	struct err e;

	/* a job file only: a web UI job's row is checked when it is saved */
	if (!s->src || !(was = source_stamp(s->src)) ||
	    save_stamp(source_path(s->src), now, &e) != ERR_OK)
		return false;
	return !save_stamp_same(now, was);
}

/* Appends a step's name to the list of dropped edits ("Batch size 1, a hand edit"). */
static void name_dropped(struct ui_session *s, enum fix_id fix)
{
	size_t k = strlen(s->reload_dropped);
	const char *name = fix == FIX_NONE ? _("a hand edit") : _(fix_defs[fix].title);
	snprintf(s->reload_dropped + k, sizeof s->reload_dropped - k, "%s%s", k ? ", " : "", name);
}

/* Applies the unsaved steps of the history (base to current), one by one, to `text`: a step
 * with any hunk that no longer applies is left out whole. Counts steps in *kept and *lost;
 * returns the malloc'd result (NULL when out of memory). */
static char *reapply_steps(struct ui_session *s, const char *text, size_t len, size_t *outlen,
			   size_t *kept, size_t *lost)
{
	char *cur = malloc(len + 1);
	if (!cur)
		return NULL;
	memcpy(cur, text, len);
	cur[len] = '\0';
	*outlen = len;
	for (size_t i = s->base_pos + 1; i <= s->pos && i < s->nhist; i++) {
		size_t la, lb, ok = 0, bad = 0, nl = 0;
		const char *ta = doc_text(s->hist[i - 1].doc, &la), *tb = doc_text(s->hist[i].doc, &lb);
		char *patch = source_diff(source_label(s->src), ta, la, tb, lb, 3);
		if (!patch || !*patch) {
			free(patch);
			continue;
		}
		char *next = diff_apply(cur, *outlen, patch, &nl, &ok, &bad);
		free(patch);
		if (next && bad == 0 && ok > 0) {
			free(cur);
			cur = next;
			*outlen = nl;
			(*kept)++;
		} else {
			free(next);
			(*lost)++;
			name_dropped(s, s->hist[i].fix);
		}
	}
	return cur;
}

int ui_session_reload(struct ui_session *s, size_t *kept, size_t *lost, struct err *e)
{
	struct doc *d = NULL, *nd = NULL;
	struct job *j = NULL;
	struct source *src = NULL;
	const char *text;
	size_t tlen;
	int rc;

	*kept = *lost = 0;
	if (!s->src || !ui_session_cur(s))
		return err_set(e, ERR_USAGE, NULL, 0, 0, "%s", _("no job file is open"));
	/* A fresh source holds the new stamp: a change made while reading is noticed next time. */
	if ((rc = source_open(source_label(s->src), &src, e)))
		return rc;
	text = source_text(src, &tlen);
	if ((rc = doc_load(source_label(src), text, tlen, &d, e))) {
		source_free(&src);
		return rc;
	}
	if ((rc = job_from_doc(d, &j, e))) {
		doc_free(&d);
		source_free(&src);
		return rc;
	}
	job_free(&j);
	/* The unsaved edits, re-applied to the new text where they still apply: step by step, each
	 * fix (or hand edit) whole or not at all, so no half of a fix is left (a batch size back at
	 * 8 with the accumulation that went with 1). Undone past the saved version: as one diff. */
	char *patch = NULL, *pt = NULL;
	size_t plen = 0, len;
	const char *t = doc_text(d, &len);
	s->reload_dropped[0] = '\0';
	if (ui_session_dirty(s) && s->base_pos != (size_t)-1 && s->base_pos <= s->pos)
		pt = reapply_steps(s, t, len, &plen, kept, lost);
	else if (ui_session_dirty(s) && (patch = ui_session_diff(s, 3)) && *patch)
		pt = diff_apply(t, len, patch, &plen, kept, lost);
	if (pt) {
		if (pt && *kept && (doc_load(source_label(src), pt, plen, &nd, e) ||
				    job_from_doc(nd, &j, e))) {
			/* Together they no longer make a job: keep the disk's text alone. */
			doc_free(&nd);
			*lost += *kept;
			*kept = 0;
		}
		job_free(&j);
		free(pt);
	}
	free(patch);
	err_clear(e);

	/* A fresh history: the disk's text, then the re-applied edits as one unsaved change. The
	 * old versions are freed only once nothing points at them. */
	struct ui_hist *old = s->hist;
	size_t nold = s->nhist;
	s->hist = NULL;
	s->nhist = s->cap = s->pos = 0;
	s->base_pos = 0;
	if (hist_append(s, d, FIX_NONE)) {
		doc_free(&d);
		doc_free(&nd);
		source_free(&src);
		s->hist = old;
		s->nhist = s->cap = nold;
		s->pos = nold - 1;
		return err_set(e, ERR_SOFTWARE, NULL, 0, 0, "%s", _("out of memory"));
	}
	source_free(&s->src);
	s->src = src;
	set_base(s, copy_doc(d, e));
	err_clear(e);
	if (nd && !hist_append(s, nd, FIX_NONE))
		s->pos = 1;
	else
		doc_free(&nd);
	/* A change saved by another program (a retry) after the log was written makes the verdict
	 * one about a job that is no more. */
	s->verdict_pos = 0;
	s->untried_saved = s->log_path && source_log_untried(s->src, s->log_path, NULL);
	ui_session_refresh(s);
	for (size_t i = 0; i < nold; i++)
		doc_free(&old[i].doc);
	free(old);
	return ERR_OK;
}

bool ui_session_diag_stale(const struct ui_session *s)
{
	if (!s->have_diag || s->diag_pending || !s->diag.oom)
		return false;
	if (s->untried_saved)
		return true;
	for (size_t i = s->verdict_pos + 1; i <= s->pos && i < s->nhist; i++)
		if (s->hist[i].fix != FIX_NONE)
			return true;
	return false;
}

const char *ui_session_retry_log(const struct ui_session *s, bool *older)
{
	if (older)
		*older = false;
	if (!s->log_path || !s->have_diag || s->diag_pending || !s->diag.oom || s->diag.survived ||
	    ui_session_dirty(s))
		return NULL;
	/* the loop refuses a log older than the last change saved (source_log_untried): the same
	 * test, now, not the one made when the job was loaded */
	bool untried = s->untried_saved || (s->src && source_log_untried(s->src, s->log_path, NULL));
	if (untried || ui_session_diag_stale(s)) {
		if (older)
			*older = untried;
		return NULL;
	}
	return s->log_path;
}

bool ui_session_job_status(struct ui_session *s)
{
	struct aitk_status st;
	if (!s->src || !source_row(s->src) || !source_status(s->src, &st) ||
	    !strcmp(st.status, s->job_status))
		return false;
	snprintf(s->job_status, sizeof s->job_status, "%s", st.status);
	return true;
}

struct plan_decision ui_session_decide(const struct ui_session *s, char *words, size_t sz)
{
	const struct diag_result *v = s->have_diag && !s->diag_pending ? &s->diag : NULL;
	struct plan_decision d = plan_decide(&s->plan, v, ui_session_diag_stale(s));
	d.unsaved = d.what == PLAN_NEXT_UNTRIED && ui_session_dirty(s); /* E12 */
	if (words && sz)
		plan_decision_text(&d, &s->plan, s->job, words, sz);
	return d;
}

int ui_session_save(struct ui_session *s, unsigned flags, struct err *e)
{
	size_t len;
	const char *text;
	int rc;

	if (!s->job_path || !ui_session_cur(s))
		return err_set(e, ERR_USAGE, NULL, 0, 0, "%s", _("no job file is open"));
	text = doc_text(ui_session_cur(s), &len);
	rc = source_save(s->src, text, len, (flags & SAVE_FORCE) ? SOURCE_FORCE : 0, e);
	if (rc)
		return rc;

	/* The journal: which fixes were applied since the last save, and what changed. */
	const char *fixes[64];
	size_t nfixes = 0;
	size_t from = s->base_pos == (size_t)-1 || s->base_pos > s->pos ? 0 : s->base_pos;
	for (size_t i = from + 1; i <= s->pos && nfixes < 64; i++) {
		const char *name = s->hist[i].fix == FIX_NONE ? NULL : fix_name(s->hist[i].fix);
		bool dup = false;
		for (size_t k = 0; name && k < nfixes; k++)
			dup |= !strcmp(fixes[k], name);
		if (name && !dup)
			fixes[nfixes++] = name;
	}
	/* Text that came whole (a recovered emergency save, $EDITOR) carries no fix of its own:
	 * name the fixes it completed, as the model sees them, rather than "Manual edits". */
	for (int f = 0; s->base_job && s->job && f < FIX_COUNT && nfixes < 64; f++) {
		bool dup = false;
		for (size_t k = 0; k < nfixes; k++)
			dup |= !strcmp(fixes[k], fix_name((enum fix_id)f));
		if (!dup && fix_status(s->base_job, (enum fix_id)f, NULL, 0) == FIX_TODO &&
		    fix_status(s->job, (enum fix_id)f, NULL, 0) == FIX_DONE)
			fixes[nfixes++] = fix_name((enum fix_id)f);
	}
	/* A save supersedes an emergency save of this job: it must not be offered again. */
	char *emerg = save_emergency_name(s->job_path);
	if (emerg)
		unlink(emerg);
	free(emerg);
	char **changes;
	size_t nchanges = s->base ? doc_changes(s->base, ui_session_cur(s), &changes) : 0;
	struct err je;
	int jrc = source_journal(s->src, fixes, nfixes, (const char *const *)changes, nchanges,
				 &je);
	if (nchanges)
		doc_changes_free(changes, nchanges);

	set_base(s, copy_doc(ui_session_cur(s), e));
	s->base_pos = s->pos;
	err_clear(e);
	ui_session_refresh(s);
	if (jrc) {
		*e = je;
		return ERR_OK; /* saved; the caller shows the journal's error as a warning */
	}
	return ERR_OK;
}
