/* retry_sinks.c — who is told what the retry loop does: people (sentences on stderr, wrapped to
 * 78 cells) and programs (the JSON events of retry_events.h, one object per line, flushed). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "oomfix/estimate.h"
#include "oomfix/gpuwatch.h"
#include "oomfix/i18n.h"
#include "oomfix/json.h"
#include "oomfix/measure.h"
#include "oomfix/text.h"
#include "retry_cli.h"

int retry_write_all(int fd, const char *p, size_t n)
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

double retry_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void retry_keep_peaks(struct gpuwatch **gw, const struct retry_try *t, bool finished,
		      const struct retry_sinks *sinks)
{
	if (!*gw)
		return;
	gpuwatch_record(*gw, t->job, finished);
	gpuwatch_free(gw);
	const char *n = measure_note();
	if (n)
		retry_tell_note(sinks, t, n);
}

void retry_say_probe(const struct retry_sinks *s, const struct retry_try *t,
		     const struct retry_probe *p)
{
	char line[512];
	if (p->state == RETRY_PROBE_PASSED)
		snprintf(line, sizeof line, "%s", _("the probe is passed; stopping the run..."));
	else
		snprintf(line, sizeof line, _("the probe run skipped a batch for memory at step %lld: "
					      "that is this try's failure, not a pass; stopping the "
					      "run..."), p->skip_step);
	retry_tell_note(s, t, line);
}

/* ---- people ------------------------------------------------------------------------------- */

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

/* ---- the table of tries, said before the closing line of a run of two tries or more ---- */

static struct retry_text_row *last_row(void *d)
{
	struct retry_text *rt = d;
	return rt && rt->n ? &rt->rows[rt->n - 1] : NULL;
}

static void keep_try(struct retry_text *rt, const struct retry_try *t)
{
	if (!rt)
		return;
	if (rt->n == rt->cap) {
		size_t cap = rt->cap ? 2 * rt->cap : 8;
		struct retry_text_row *r = realloc(rt->rows, cap * sizeof *r);
		if (!r)
			return; /* the table is a reminder: without memory it is left out */
		rt->rows = r;
		rt->cap = cap;
	}
	struct retry_text_row *r = &rt->rows[rt->n];
	size_t len = strlen(t->log ? t->log : ""), size = 4 * len + 1; /* \xNN: four for one */
	if (!(r->log = malloc(size)))
		return;
	text_visible_cell(t->log ? t->log : "", len, r->log, size); /* a web UI job's name is in it */
	r->index = t->index;
	r->verdict[0] = 0;
	r->step = -1;
	r->fix = FIX_NONE;
	r->said = t->est && t->card > 0 ? (int)estimate_verdict(t->est, t->card, NULL)
					: (int)EST_V_UNKNOWN;
	r->oom = r->fitted = false;
	rt->n++;
}

void retry_text_free(struct retry_text *rt)
{
	for (size_t i = 0; rt && i < rt->n; i++)
		free(rt->rows[i].log);
	if (rt) {
		free(rt->rows);
		rt->rows = NULL;
		rt->n = rt->cap = 0;
	}
}

/* s, then blanks up to `cells` cells and a gap of two. */
static void put_cell(const char *s, int cells)
{
	int w = text_width(s, strlen(s));
	fprintf(stderr, "%s%*s", s, cells - w > 0 ? cells - w + 2 : 2, "");
}

/* The end of s that fits in `cells` cells, after "…" when s is cut: the log's own name and the
 * folders nearest it are what tell one try's log from another's. Cut at a '/' near the start of
 * the part kept (within its first third), so a folder's name is not shown half for a few cells. */
static void tail_fit(const char *s, int cells, char *out, size_t size)
{
	size_t len = strlen(s);
	if (text_width(s, len) <= cells) {
		snprintf(out, size, "%s", s);
		return;
	}
	const char *p = s;
	while (*p && text_width(p, strlen(p)) > cells - 1) {
		uint32_t cp;
		size_t k = text_utf8_decode((const unsigned char *)p, strlen(p), &cp);
		p += k ? k : 1;
	}
	const char *slash = strchr(p, '/');
	if (slash && slash != p && slash[1] && text_width(p, (size_t)(slash - p)) <= cells / 3)
		p = slash;
	snprintf(out, size, "…%s", p);
}

/* The estimate's verdict before a try, in the table's few letters. */
static const char *said_word(int v)
{
	return v == EST_V_FITS ? _("fits") : v == EST_V_TIGHT ? _("tight")
		: v == EST_V_NO ? _("no") : "-";
}

static int max_cells(int w, const char *s)
{
	int c = text_width(s, strlen(s));
	return c > w ? c : w;
}

/* The table: one row a try (its number, its log, its verdict, the step it failed at, the fix saved
 * after it), within rt->width cells; the log column gets what the others leave. */
static void say_tries(const struct retry_text *rt)
{
	size_t runs = 0;
	for (size_t i = 0; i < rt->n; i++)
		runs += rt->rows[i].index > 0;
	if (runs < 2)
		return;
	const char *h_try = _("TRY"), *h_log = _("LOG"), *h_said = _("ESTIMATE"),
		   *h_verdict = _("VERDICT"), *h_step = _("STEP"), *h_fix = _("FIX SAVED AFTER IT");
	int wt = max_cells(0, h_try), wv = max_cells(0, h_verdict), ws = max_cells(0, h_step);
	int wf = max_cells(0, h_fix), wl = max_cells(0, h_log), we = max_cells(0, h_said);
	char cell[64];
	for (size_t i = 0; i < rt->n; i++) {
		const struct retry_text_row *r = &rt->rows[i];
		snprintf(cell, sizeof cell, "%d", r->index);
		wt = max_cells(wt, cell);
		wv = max_cells(wv, r->verdict[0] ? r->verdict : "-");
		we = max_cells(we, said_word(r->said));
		snprintf(cell, sizeof cell, "%lld", r->step);
		ws = max_cells(ws, cell);
		wf = max_cells(wf, r->fix != FIX_NONE ? fix_name(r->fix) : "-");
		wl = max_cells(wl, r->log);
	}
	int width = rt->width > 0 ? rt->width : 80;
	int room = width - 2 - (wt + 2) - (we + 2) - (wv + 2) - (ws + 2) - wf - 2; /* the log's */
	if (room < 12)
		room = 12;
	if (wl > room)
		wl = room;
	fprintf(stderr, "%s\n", _("oomfix retry: the tries of this run, each with the fix saved after it:"));
	fputs("  ", stderr);
	put_cell(h_try, wt);
	put_cell(h_log, wl);
	put_cell(h_said, we);
	put_cell(h_verdict, wv);
	put_cell(h_step, ws);
	fprintf(stderr, "%s\n", h_fix);
	for (size_t i = 0; i < rt->n; i++) {
		const struct retry_text_row *r = &rt->rows[i];
		char log[1024];
		tail_fit(r->log, wl, log, sizeof log);
		fputs("  ", stderr);
		snprintf(cell, sizeof cell, "%d", r->index);
		put_cell(cell, wt);
		put_cell(log, wl);
		put_cell(said_word(r->said), we);
		put_cell(r->verdict[0] ? r->verdict : "-", wv);
		if (r->step > 0)
			snprintf(cell, sizeof cell, "%lld", r->step);
		else
			snprintf(cell, sizeof cell, "-");
		put_cell(cell, ws);
		fprintf(stderr, "%s\n", r->fix != FIX_NONE ? fix_name(r->fix) : "-");
	}
}

/* The last try's cell once the loop is over: how it ended, where its verdict does not say it. */
static void end_row(struct retry_text_row *r, enum retry_outcome o)
{
	const char *w = NULL;
	switch (o) {
	case RETRY_OUT_FITS: w = _("fits"); break;
	case RETRY_OUT_PROBE: w = _("passed the probe"); break;
	case RETRY_OUT_INTERRUPTED: w = _("interrupted"); break;
	case RETRY_OUT_STOPPED: w = _("stopped"); break;
	default: w = r->verdict[0] ? NULL : _("not run"); break;
	}
	if (w)
		snprintf(r->verdict, sizeof r->verdict, "%s", w);
	r->fitted = o == RETRY_OUT_FITS || o == RETRY_OUT_PROBE;
}

/* Each try's estimate beside what the run did, where they disagree (SPEC §12.2). */
static void say_estimates(const struct retry_text *rt)
{
	for (size_t i = 0; i < rt->n; i++) {
		const struct retry_text_row *r = &rt->rows[i];
		char line[512];
		if (r->index <= 0)
			continue;
		if (r->said == EST_V_NO && r->fitted)
			snprintf(line, sizeof line, _("try %d: the estimate said it would not fit; the "
						      "run fitted: the estimate is conservative here."),
				 r->index);
		else if (r->said == EST_V_FITS && r->oom)
			snprintf(line, sizeof line, _("try %d: the estimate said it fits; the run ran out "
						      "of memory: it was optimistic here, and what the run "
						      "measured now corrects it."), r->index);
		else
			continue;
		put_wrapped(line, 2);
	}
}

static void text_try(void *d, const struct retry_try *t)
{
	keep_try(d, t);
	if (t->index <= 0)
		return; /* the log given: "starting from" said it */
	if (t->n != t->index)
		/* the runs folder holds earlier retries' logs: the run's number names its log */
		fprintf(stderr, _("oomfix retry: try %d of at most %d (run %d), log %s\n"), t->index,
			t->max_tries, t->n, t->log);
	else
		fprintf(stderr, _("oomfix retry: try %d of at most %d, log %s\n"), t->index,
			t->max_tries, t->log);
	if (t->est) {
		char line[512], est[400];
		estimate_line(t->est, t->card, est, sizeof est, NULL, NULL);
		snprintf(line, sizeof line, _("Estimate of this try's job: %s"), est);
		put_wrapped(line, 2);
	}
}

static void text_taken(void *d, const struct retry_try *t, const char *status)
{
	fprintf(stderr, _("oomfix retry: the web UI's worker took the job (%s).\n"), status);
}

static void text_line(void *d, const struct retry_try *t, const char *text)
{
	fprintf(stderr, "oomfix retry: %s\n", text);
}

static void text_verdict(void *d, const struct retry_try *t, const struct retry_verdict *v)
{
	struct retry_text_row *r = last_row(d);
	if (r) {
		const struct diag_result *dv = v->v;
		char letter = diag_timing_letter(dv->timing);
		if (dv->oom && letter)
			snprintf(r->verdict, sizeof r->verdict, "%c %s", letter,
				 diag_timing_words(dv->timing));
		else if (dv->oom)
			snprintf(r->verdict, sizeof r->verdict, "? %s", _("out of memory"));
		else
			snprintf(r->verdict, sizeof r->verdict, "%s",
				 diag_other_name(dv->other) ? diag_other_name(dv->other) : _("no OOM"));
		r->step = dv->failed_step > 0 ? dv->failed_step : -1;
		r->oom = dv->oom;
	}
	if (v->exit0_over_oom && v->v->oom)
		fprintf(stderr, _("oomfix retry: %s: the command exited 0, but its log shows the job "
				  "ran out of memory.\n"), v->label);
	else if (v->exit0_over_oom)
		fprintf(stderr, _("oomfix retry: %s: the command exited 0, but its log shows the run "
				  "failed.\n"), v->label);
}

static void text_fix(void *d, const struct retry_try *t, const struct retry_fix *f)
{
	struct retry_text_row *r = last_row(d);
	if (r)
		r->fix = f->id;
	fprintf(stderr, _("oomfix retry: %s: %s → %s:"), f->label, f->words, fix_name(f->id));
	for (size_t i = 0; i < f->nchanges; i++)
		fprintf(stderr, "%s %s", i ? ";" : "", f->changes[i]);
	fputc('\n', stderr);
	char line[768], cb[32], sb[32], rb[32];
	estimate_gib(f->card, cb, sizeof cb);
	estimate_gib(f->shortfall, sb, sizeof sb);
	estimate_gib(f->removed, rb, sizeof rb);
	bool said = false;
	if (f->shortfall > 0 && f->removed > 0) {
		said = f->rungs > 1;
		/* how far the step went, from what the OOM message measured */
		if (f->covered && f->rungs > 1)
			snprintf(line, sizeof line, _("%s: %d rungs at once: the out-of-memory message "
						      "says the job was %s short of the card; by the "
						      "estimate they take off %s."),
				 fix_name(f->id), f->rungs, sb, rb);
		else if (f->covered)
			snprintf(line, sizeof line, _("%s: the out-of-memory message says the job was %s "
						      "short of the card; by the estimate one rung takes "
						      "off %s."),
				 fix_name(f->id), sb, rb);
		else
			snprintf(line, sizeof line, _("%s: the out-of-memory message says the job was %s "
						      "short of the card; by the estimate even %d "
						      "rungs take off only %s: the next fix may be needed "
						      "too."),
				 fix_name(f->id), sb, f->rungs, rb);
		put_wrapped(line, 2);
	}
	if (f->rungs > 1 && f->card > 0) {
		if (said && f->ruled_out && f->ruled_out[0])
			snprintf(line, sizeof line, _("%s: the estimate says %s would not fit the %s "
						      "card."),
				 fix_name(f->id), f->ruled_out, cb);
		else if (f->ruled_out && f->ruled_out[0])
			snprintf(line, sizeof line, _("%s: %d rungs at once: the estimate says %s would "
						      "not fit the %s card."),
				 fix_name(f->id), f->rungs, f->ruled_out, cb);
		else
			snprintf(line, sizeof line, _("%s went down %d rungs at once: the estimate says "
						      "the rungs between would not fit the %s card."),
				 fix_name(f->id), f->rungs, cb);
		put_wrapped(line, 2);
	}
	if (f->note[0])
		put_wrapped(f->note, 2);
	char lesson[1024];
	snprintf(lesson, sizeof lesson, _("Lesson: %s"), _(fix_defs[f->id].lesson));
	put_wrapped(lesson, 2);
}

static void text_end(void *d, const struct retry_try *t, const struct retry_end *end)
{
	bool stopped = end->outcome == RETRY_OUT_INTERRUPTED || end->outcome == RETRY_OUT_STOPPED;
	const char *gap = stopped && t ? "\n" : ""; /* after the ^C the terminal shows */
	struct retry_text_row *r = t ? last_row(d) : NULL;
	if (r) {
		end_row(r, end->outcome);
		fputs(gap, stderr);
		say_tries(d);
		say_estimates(d);
		gap = "";
	}
	if (end->err)
		err_print(end->err, stderr);
	if (end->head[0])
		fprintf(stderr, "%soomfix retry: %s\n", gap, end->head);
	if (end->detail[0])
		put_wrapped(end->detail, 2);
}

const struct retry_sink_ops retry_text_ops = {
	.on_try = text_try,
	.on_taken = text_taken,
	.on_waiting = NULL, /* the runner says it to people in its own words */
	.on_verdict = text_verdict,
	.on_fix = text_fix,
	.on_note = text_line,
	.on_end = text_end,
};

/* ---- programs ----------------------------------------------------------------------------- */

static void ev_open(struct json *j, FILE *fp, enum retry_event ev, const struct retry_try *t)
{
	json_init(j, fp, false);
	json_obj_begin(j);
	json_key(j, "event");
	json_str(j, retry_event_name(ev));
	if (t) {
		json_key(j, "try");
		json_int(j, t->n);
	}
}

static void ev_close(struct json *j, FILE *fp)
{
	json_obj_end(j);
	json_finish(j);
	fflush(fp);
}

static void json_try(void *d, const struct retry_try *t)
{
	struct json j;
	ev_open(&j, d, RETRY_EV_TRY, t);
	json_key(&j, "index");
	json_int(&j, t->index);
	json_key(&j, "max_tries");
	json_int(&j, t->max_tries);
	json_key(&j, "log");
	json_str(&j, t->log);
	json_key(&j, "estimate");
	if (t->est) {
		enum est_phase at;
		enum est_verdict v = estimate_verdict(t->est, t->card, &at);
		json_obj_begin(&j);
		json_key(&j, "known");
		json_bool(&j, t->est->known);
		if (t->est->known) {
			const struct est_phase_est *pk = &t->est->phase[t->est->peak];
			json_key(&j, "peak_phase");
			json_str(&j, est_phase_name(t->est->peak));
			json_key(&j, "bytes");
			json_int(&j, pk->bytes);
			json_key(&j, "high");
			json_int(&j, pk->high);
		}
		json_key(&j, "card");
		if (t->card > 0)
			json_int(&j, t->card);
		else
			json_null(&j);
		json_key(&j, "verdict");
		json_str(&j, est_verdict_name(v));
		json_key(&j, "verdict_phase");
		json_str(&j, v != EST_V_UNKNOWN ? est_phase_name(at) : NULL);
		json_obj_end(&j);
	} else {
		json_null(&j);
	}
	ev_close(&j, d);
}

static void json_text_event(void *d, const struct retry_try *t, enum retry_event ev,
			    const char *key, const char *text)
{
	struct json j;
	ev_open(&j, d, ev, t);
	json_key(&j, key);
	json_str(&j, text);
	ev_close(&j, d);
}

static void json_taken(void *d, const struct retry_try *t, const char *status)
{
	json_text_event(d, t, RETRY_EV_TAKEN, "status", status);
}

static void json_waiting(void *d, const struct retry_try *t, const char *text)
{
	json_text_event(d, t, RETRY_EV_WAITING, "text", text);
}

static void json_verdict(void *d, const struct retry_try *t, const struct retry_verdict *rv)
{
	const struct diag_result *v = rv->v;
	struct json j;
	ev_open(&j, d, RETRY_EV_VERDICT, t);
	json_key(&j, "oom");
	json_bool(&j, v->oom);
	/* the timing in the words every JSON output uses, and its letter beside it */
	diag_json_timing(&j, v->oom ? v->timing : DIAG_T_NONE, true);
	json_key(&j, "phase");
	json_str(&j, diag_phase_name(v->phase));
	json_key(&j, "step");
	if (v->failed_step > 0)
		json_int(&j, v->failed_step);
	else
		json_null(&j);
	json_key(&j, "summary");
	json_str(&j, rv->summary);
	ev_close(&j, d);
}

static void json_fix(void *d, const struct retry_try *t, const struct retry_fix *f)
{
	struct json j;
	ev_open(&j, d, RETRY_EV_FIX, t);
	json_key(&j, "fix");
	json_str(&j, fix_name(f->id));
	json_key(&j, "title");
	json_str(&j, _(fix_defs[f->id].title));
	json_key(&j, "changes");
	json_arr_begin(&j);
	for (size_t i = 0; i < f->nchanges; i++)
		json_str(&j, f->changes[i]);
	json_arr_end(&j);
	json_key(&j, "rungs");
	json_int(&j, f->rungs);
	json_key(&j, "ruled_out");
	json_str(&j, f->rungs > 1 && f->ruled_out && f->ruled_out[0] ? f->ruled_out : NULL);
	json_key(&j, "shortfall"); /* bytes the OOM message measured beyond the card */
	if (f->shortfall > 0)
		json_int(&j, (long long)f->shortfall);
	else
		json_null(&j);
	json_key(&j, "removed");
	if (f->shortfall > 0)
		json_int(&j, (long long)f->removed);
	else
		json_null(&j);
	json_key(&j, "covered");
	json_bool(&j, f->shortfall > 0 && f->covered);
	json_key(&j, "note");
	json_str(&j, f->note);
	json_key(&j, "lesson");
	json_str(&j, _(fix_defs[f->id].lesson));
	ev_close(&j, d);
}

static void json_end(void *d, const struct retry_try *t, const struct retry_end *end)
{
	struct json j;
	ev_open(&j, d, RETRY_EV_END, t);
	json_key(&j, "status");
	json_int(&j, end->status);
	json_key(&j, "outcome");
	json_str(&j, retry_outcome_name(end->outcome));
	json_key(&j, "text");
	json_str(&j, end->text);
	ev_close(&j, d);
}

const struct retry_sink_ops retry_json_ops = {
	.on_try = json_try,
	.on_taken = json_taken,
	.on_waiting = json_waiting,
	.on_verdict = json_verdict,
	.on_fix = json_fix,
	.on_end = json_end,
};
