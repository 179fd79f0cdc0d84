/* retry_sinks.c — who is told what the retry loop does: people (sentences on stderr, wrapped to
 * 78 cells) and programs (the JSON events of retry_events.h, one object per line, flushed). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "oomfix/estimate.h"
#include "oomfix/i18n.h"
#include "oomfix/json.h"
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

static void text_try(void *d, const struct retry_try *t)
{
	if (t->index <= 0)
		return; /* the log given: "starting from" said it */
	if (t->n != t->index)
		/* the runs folder holds earlier retries' logs: the run's number names its log */
		fprintf(stderr, _("oomfix retry: try %d of at most %d (run %d), log %s\n"), t->index,
			t->max_tries, t->n, t->log);
	else
		fprintf(stderr, _("oomfix retry: try %d of at most %d, log %s\n"), t->index,
			t->max_tries, t->log);	if (t->est) {
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
	if (v->exit0_over_oom && v->v->oom)
		fprintf(stderr, _("oomfix retry: %s: the command exited 0, but its log shows the job "
				  "ran out of memory.\n"), v->label);
	else if (v->exit0_over_oom)
		fprintf(stderr, _("oomfix retry: %s: the command exited 0, but its log shows the run "
				  "failed.\n"), v->label);
}

static void text_fix(void *d, const struct retry_try *t, const struct retry_fix *f)
{
	fprintf(stderr, _("oomfix retry: %s: %s → %s:"), f->label, f->words, fix_name(f->id));
	for (size_t i = 0; i < f->nchanges; i++)
		fprintf(stderr, "%s %s", i ? ";" : "", f->changes[i]);
	fputc('\n', stderr);
	if (f->rungs > 1) {
		char line[512], cb[32];
		estimate_gib(f->card, cb, sizeof cb);
		if (f->ruled_out && f->ruled_out[0])
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
	if (end->err)
		err_print(end->err, stderr);
	bool stopped = end->outcome == RETRY_OUT_INTERRUPTED || end->outcome == RETRY_OUT_STOPPED;
	if (end->head[0])
		fprintf(stderr, "%soomfix retry: %s\n", stopped && t ? "\n" : "", end->head);
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
