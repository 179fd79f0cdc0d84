/* trail.c — the trail of tries: each run's verdict and what was saved after it (trail.h). */
#include "oomfix/trail.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "oomfix/diag.h"
#include "oomfix/i18n.h"

static int oom(struct err *e)
{
	return err_set(e, ERR_SOFTWARE, NULL, 0, 0, "%s", _("out of memory"));
}

static int cmp_run(const void *a, const void *b)
{
	const struct trail_run *x = a, *y = b;
	return x->number < y->number ? 1 : x->number > y->number ? -1 : 0;
}

/* A job file's runs: <job>.oomfix-runs/<n>.log, written by oomfix retry. */
static int file_runs(struct trail *t, struct err *e)
{
	DIR *d = opendir(t->where);
	if (!d)
		return ERR_OK;
	struct dirent *de;
	int rc = ERR_OK;
	while ((de = readdir(d))) {
		char *end;
		long k = strtol(de->d_name, &end, 10);
		if (end == de->d_name || strcmp(end, ".log") || k < 0)
			continue;
		struct trail_run *nv = realloc(t->runs, (t->n + 1) * sizeof *nv);
		if (!nv) {
			rc = oom(e);
			break;
		}
		t->runs = nv;
		memset(&nv[t->n], 0, sizeof nv[t->n]);
		nv[t->n].number = k;
		if (asprintf(&nv[t->n].log, "%s/%s", t->where, de->d_name) < 0) {
			nv[t->n].log = NULL;
			rc = oom(e);
			break;
		}
		t->n++;
	}
	closedir(d);
	if (t->n > 1)
		qsort(t->runs, t->n, sizeof *t->runs, cmp_run);
	return rc;
}

/* A web UI job's runs: log.txt, then logs/<n>_log.txt by descending n (source_runs). */
static int aitk_runs(const struct source *s, struct trail *t, struct err *e)
{
	char **paths;
	size_t n = source_runs(s, &paths);
	if (n && !(t->runs = calloc(n, sizeof *t->runs))) {
		source_runs_free(paths, n);
		return oom(e);
	}
	const char *cur = source_log(s);
	for (size_t i = 0; i < n; i++) {
		struct trail_run *r = &t->runs[t->n++];
		r->log = paths[i];
		paths[i] = NULL;
		const char *base = strrchr(r->log, '/');
		base = base ? base + 1 : r->log;
		r->number = cur && !strcmp(r->log, cur) ? TRAIL_CURRENT : strtol(base, NULL, 10);
	}
	source_runs_free(paths, n);
	return ERR_OK;
}

static bool push(const struct save_journal_entry ***v, size_t *n,
		 const struct save_journal_entry *en)
{
	const struct save_journal_entry **nv = realloc(*v, (*n + 1) * sizeof *nv);
	if (!nv)
		return false;
	nv[*n] = en;
	*v = nv;
	(*n)++;
	return true;
}

/* The run whose log a journal note names ("... its log: <dir>/<n>.log"), or NULL. */
static struct trail_run *named_run(struct trail *t, const char *note)
{
	if (!note)
		return NULL;
	const char *dir = strrchr(t->where, '/');
	dir = dir ? dir + 1 : t->where;
	for (size_t i = 0; i < t->n; i++) {
		const char *base = strrchr(t->runs[i].log, '/');
		if (!base)
			continue;
		char want[600];
		snprintf(want, sizeof want, "%s%s", dir, base);
		const char *hit = strstr(note, want);
		if (hit && (hit == note || hit[-1] == '/' || hit[-1] == ' '))
			return &t->runs[i];
	}
	return NULL;
}

int trail_build(const struct source *s, struct trail *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	bool aitk = source_row(s) != NULL;
	if (aitk)
		out->where = strdup(source_run_dir(s));
	else if (asprintf(&out->where, "%s.oomfix-runs", source_path(s)) < 0)
		out->where = NULL;
	if (!out->where)
		return oom(e);
	int rc = aitk ? aitk_runs(s, out, e) : file_runs(out, e);
	if (rc == ERR_OK)
		rc = save_journal_entries(source_path(s), &out->journal, &out->njournal, e);
	if (rc) {
		trail_free(out);
		return rc;
	}
	size_t len;
	const char *text = source_text(s, &len);
	unsigned long long *dev = calloc(out->n ? out->n : 1, sizeof *dev);
	unsigned long long *ino = calloc(out->n ? out->n : 1, sizeof *ino);
	if (!dev || !ino) {
		free(dev);
		free(ino);
		trail_free(out);
		return oom(e);
	}
	for (size_t i = 0; i < out->n; i++) {
		struct trail_run *r = &out->runs[i];
		struct stat st;
		if (stat(r->log, &st) == 0) {
			r->when = st.st_mtime;
			dev[i] = (unsigned long long)st.st_dev;
			ino[i] = (unsigned long long)st.st_ino;
		}
		struct err ve;
		err_clear(&ve);
		if (source_verdict_of(source_label(s), text, len, r->log, &r->v, &ve) != ERR_OK)
			r->v.have_log = false;
	}
	for (size_t k = 0; k < out->njournal; k++) {
		const struct save_journal_entry *en = &out->journal[k];
		struct trail_run *r = NULL;
		/* the run whose log is the file the entry named (E4: the worker renames it, the file
		 * stays), else the run its note names, else by time */
		for (size_t i = 0; en->has_log_id && !r && i < out->n; i++)
			if (ino[i] && ino[i] == en->log_ino && dev[i] == en->log_dev)
				r = &out->runs[i];
		if (!r)
			r = named_run(out, en->note);
		/* Else the newest run written at or before the entry: the runs are newest first by
		 * number, which is the order they ran in, so the first one found is it. */
		for (size_t i = 0; !r && i < out->n; i++)
			if (out->runs[i].when && out->runs[i].when <= en->when)
				r = &out->runs[i];
		if (!(r ? push(&r->after, &r->nafter, en) : push(&out->before, &out->nbefore, en))) {
			free(dev);
			free(ino);
			trail_free(out);
			return oom(e);
		}
	}
	free(dev);
	free(ino);
	return ERR_OK;
}

void trail_free(struct trail *t)
{
	for (size_t i = 0; t->runs && i < t->n; i++) {
		free(t->runs[i].log);
		free(t->runs[i].after);
	}
	free(t->runs);
	free(t->before);
	save_journal_entries_free(t->journal, t->njournal);
	free(t->where);
	memset(t, 0, sizeof *t);
}

void trail_verdict_words(const struct trail_run *r, char *buf, size_t size)
{
	const struct source_verdict *v = &r->v;
	if (!v->have_log) {
		snprintf(buf, size, "%s", _("unreadable"));
	} else if (!v->oom && v->stopped && v->last_step > 0) {
		/* E19: a run stopped by Ctrl-C, a hang-up or the probe is not one that went well */
		snprintf(buf, size, _("no OOM; stopped at step %lld before its end (Ctrl-C, a hang-up "
				      "or the probe)"), v->last_step);
	} else if (!v->oom && v->stopped) {
		snprintf(buf, size, "%s", _("no OOM; stopped before its end (Ctrl-C, a hang-up or the "
					    "probe)"));
	} else if (!v->oom) {
		snprintf(buf, size, "%s",
			 v->finished ? _("no OOM; the run finished") : _("no OOM"));
	} else if (v->failed_step >= 0) {
		snprintf(buf, size, _("%c: out of memory, %s, step %lld"), v->timing ? v->timing : '?',
			 diag_phase_label((enum diag_phase)v->phase), v->failed_step);
	} else {
		snprintf(buf, size, _("%c: out of memory, %s"), v->timing ? v->timing : '?',
			 diag_phase_label((enum diag_phase)v->phase));
	}
}

static void append(char *buf, size_t size, size_t *used, const char *s)
{
	if (*used + 1 >= size)
		return;
	int k = snprintf(buf + *used, size - *used, "%s", s);
	*used += k < 0 ? 0 : (size_t)k < size - *used ? (size_t)k : size - *used - 1;
}

void trail_fixes_words(const struct trail_run *r, char *buf, size_t size)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < r->nafter; i++) {
		const struct save_journal_entry *en = r->after[i];
		if (i)
			append(buf, size, &used, _(", then "));
		if (!en->nfixes)
			append(buf, size, &used, _("manual edits"));
		for (size_t f = 0; f < en->nfixes; f++) {
			if (f)
				append(buf, size, &used, "+");
			append(buf, size, &used, en->fixes[f]);
		}
	}
}
