/* cmd_diag.c — `oomfix diagnose [--job JOB] [--json] LOG`: when did the run run out of GPU
 * memory, what proves it, and what to change first. */
#include <locale.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "oomfix/diag.h"
#include "oomfix/doc.h"
#include "oomfix/err.h"
#include "oomfix/i18n.h"
#include "oomfix/job.h"
#include "oomfix/source.h"
#include "oomfix/json.h"
#include "oomfix/plan.h"
#include "oomfix/text.h"
#include "cli.h"

static void help(FILE *fp)
{
	fputs(_("Usage: oomfix diagnose [--job JOB] [--json] [--follow] LOG\n"
		"\n"
		"Reads a trainer log (LOG may be '-' for standard input) and says whether the\n"
		"run died of GPU out-of-memory, when (timing and phase), at which step, which\n"
		"lines show it, and what to change first. With --job the verdict also uses the\n"
		"job file (model kind, settings already rolled back).\n"
		"\n"
		"  --job JOB   the job's YAML file\n"
		"  --json      print the verdict as JSON\n"), fp);
	fputs(_("  --follow    follow the log as the run writes it: the verdict is brought up\n"
		"              to date from the new bytes and printed each time it changes (one\n"
		"              JSON object per line with --json); ends when the run has ended,\n"
		"              or on Ctrl-C\n"),
	      fp);
	fputs(_("\n"
		"Exit status: 0 the report was printed, 64 usage (or LOG is a job file), 66 LOG\n"
		"cannot be read. With --follow, when the run has ended: 0 no GPU out-of-memory,\n"
		"10, 11, 12, 13, 14 out of memory with timing A, B, C, D, E, 15 out of memory at\n"
		"a time the log does not show; 130 on Ctrl-C.\n"),
	      fp);
}

static int usage(void)
{
	fprintf(stderr, "%s\n", _("usage: oomfix diagnose [--job JOB] [--json] LOG"));
	return ERR_USAGE;
}

static int fail(const struct err *e)
{
	err_print(e, stderr);
	return e->code ? e->code : ERR_SOFTWARE;
}

/* The kind job_kind_guess reads from a job file that job_from_doc refused. */
static enum job_kind job_kind_guess_file(const char *path)
{
	struct source *s = NULL;
	struct doc *d = NULL;
	struct err e;
	size_t len;
	enum job_kind k = JOB_KIND_UNKNOWN;

	if (source_open(path, &s, &e) != ERR_OK)
		return k;
	const char *text = source_text(s, &len);
	if (doc_load(source_label(s), text, len, &d, &e) == ERR_OK)
		k = job_kind_guess(d);
	doc_free(&d);
	source_free(&s);
	return k;
}

/* ---- the readable report ---- */

/* The report is laid out for this many terminal cells: the terminal's width when stdout is
 * one (at most 100, where long lines stop being easy to read), else 80. */
int cli_tty_columns(void)
{
	struct winsize ws;

	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 0;
}

int cli_report_width(void)
{
	int c = cli_tty_columns();
	return !c ? 80 : c < 60 ? 60 : c > 100 ? 100 : c;
}

static void spaces(int n)
{
	for (; n > 0; n--)
		fputc(' ', stdout);
}

void cli_put_wrapped(const char *text, int first, int indent, int width, bool items)
{
	size_t len = strlen(text);
	char *buf = malloc(len + 1), *s = buf;
	int avail = first;

	if (!buf)
		return;
	memcpy(buf, text, len + 1);
	len = text_tidy_spaces(buf, len); /* 「。 」 where code joined two sentences */
	while (len && *s == ' ') {
		s++;
		len--;
	}
	while (len) {
		size_t next, cut = items ? text_wrap_items(s, len, avail > 1 ? avail : 1, &next)
					 : text_wrap_next(s, len, avail > 1 ? avail : 1, &next);
		fwrite(s, 1, cut, stdout);
		fputc('\n', stdout);
		s += next;
		len -= next;
		if (!len)
			break;
		spaces(indent);
		avail = width - indent;
	}
	free(buf);
}

/* Prose: wrapped as text. */
static void put_wrapped(const char *s, int first, int indent, int width)
{
	cli_put_wrapped(s, first, indent, width, false);
}

const char *cli_no_help_note(void)
{
	static char buf[160];
	/* TRANSLATORS: a plan step's note in parentheses, e.g. "(does not help this failure)";
	 * Japanese uses full-width parentheses. */
	snprintf(buf, sizeof buf, _("(%s)"), plan_no_help_label());
	return buf;
}

/* A blank line, then a section's heading, wrapped too (a translation can be wider than 60). */
static void heading(const char *s, int width)
{
	fputc('\n', stdout);
	put_wrapped(s, width, 0, width);
}

static void print_sentence(const struct diag_result *r, int width)
{
	char buf[1024];
	diag_sentence(r, buf, sizeof buf);
	put_wrapped(buf, width, 0, width);
}

/* One row of the memory account: label padded in cells, the size, a note. */
/* s left-aligned in `cells` display cells (never cut). */
static void pad_cells(const char *s, int cells)
{
	fputs(s, stdout);
	spaces(cells - text_width(s, strlen(s)));
}

static void mem_row(const char *label, int64_t bytes, const char *note, int width)
{
	char v[32];
	int w = text_width(label, strlen(label));

	memacct_format(bytes, v, sizeof v);
	printf("  %s", label);
	spaces(18 - w);
	printf("%11s", v);
	if (note && *note) {
		fputs("  ", stdout);
		put_wrapped(note, width - 33, 33, width);
	} else {
		fputc('\n', stdout);
	}
}

/* The account of the card that the OOM message gives (SPEC §3.6), and its advice. */
static void print_memory(const struct diag_result *r, int width)
{
	const struct memacct *m = &r->memory;
	int64_t part[MEMACCT_NPARTS];
	char note[256], a[32], b[32], advice[1024];

	if (!m->present)
		return;
	heading(_("How the card was used, from the message:"), width);
	if (m->capacity >= 0)
		mem_row(_("capacity"), m->capacity, NULL, width);
	if (memacct_parts(m, part)) {
		note[0] = '\0';
		if (m->this_pid >= 0)
			snprintf(note, sizeof note, _("process %lld"), m->this_pid);
		else if (m->this_process < 0 && m->job >= 0)
			snprintf(note, sizeof note, "%s", _("at least: what PyTorch reserved"));
		else if (m->job < 0)
			snprintf(note, sizeof note, "%s",
				 _("not told apart: one of the processes listed, if any"));
		mem_row(diag_memory_part_label(MEMACCT_JOB), m->job, note, width);
		note[0] = '\0';
		for (size_t i = 0; i < m->nother; i++) {
			char one[64];
			size_t n = strlen(note);
			memacct_format(m->other[i].bytes, a, sizeof a);
			snprintf(one, sizeof one, _("process %lld: %s"), m->other[i].pid, a);
			snprintf(note + n, sizeof note - n, "%s%s", n ? ", " : "", one);
		}
		mem_row(diag_memory_part_label(MEMACCT_OTHERS), m->others_total, note, width);
		mem_row(diag_memory_part_label(MEMACCT_UNACCOUNTED), m->unaccounted,
			m->unaccounted >= m->capacity / 8
				? _("held by something this job cannot see: another tenant of the card, "
				    "or a leak")
				: NULL,
			width);
		mem_row(diag_memory_part_label(MEMACCT_FREE), m->free, NULL, width);
	}
	if (m->requested >= 0)
		mem_row(_("requested"), m->requested, NULL, width);
	if (m->pytorch_allocated >= 0) {
		note[0] = '\0';
		if (m->pytorch_reserved_unallocated >= 0) {
			memacct_format(m->pytorch_reserved_unallocated, b, sizeof b);
			snprintf(note, sizeof note, _("and %s reserved but unused"), b);
		}
		mem_row(_("PyTorch allocated"), m->pytorch_allocated, note, width);
	}
	if (m->limit >= 0)
		mem_row(_("per-process limit"), m->limit, NULL, width);
	diag_memory_advice(r, advice, sizeof advice);
	if (advice[0]) {
		fputc('\n', stdout);
		put_wrapped(advice, width, 0, width);
	}
}

/* The lines that made the verdict: wrapped, never cut (the end of a line is often what
 * matters: a path). */
static void print_evidence(const struct diag_result *r, int width)
{
	if (!r->nevidence)
		return;
	heading(_("What the log shows (line number, text):"), width);
	for (size_t i = 0; i < r->nevidence; i++) {
		printf("%8llu  ", (unsigned long long)r->evidence[i].line);
		if (r->evidence[i].text[0])
			put_wrapped(r->evidence[i].text, width - 10, 10, width);
		else
			fputc('\n', stdout);
	}
}

/* The signatures and hints, each with its count, the line of the one nearest the failure and
 * what it says. */
static void print_signatures(const struct diag_result *r, int width)
{
	if (!r->nsigs && !r->nhints)
		return;
	heading(_("Signatures (count, line of the one nearest the failure):"), width);
	/* The columns named, the last one too: a size, a skip number or what a hint means. */
	printf("  ");
	pad_cells(_("SIGNATURE"), 22);
	spaces(5 - text_width(_("COUNT"), strlen(_("COUNT"))));
	fputs(_("COUNT"), stdout);
	printf("  ");
	pad_cells(_("LINE"), 6);
	printf("  %s\n", _("WHAT IT SAYS"));
	for (size_t i = 0; i < r->nsigs; i++) {
		const struct diag_hit *h = &r->sigs[i];
		char said[128] = "";
		if (h->value[0] && !strcmp(h->id, "oom_skip"))
			snprintf(said, sizeof said, _("skip %s in a row"), h->value);
		else if (h->value[0] && !strcmp(h->id, "tried_to_allocate"))
			snprintf(said, sizeof said, _("asked for %s"), h->value);
		else
			snprintf(said, sizeof said, "%s", h->value);
		if (said[0])
			printf("  %-22s %4u  %-6llu  %s\n", h->id, h->count,
			       (unsigned long long)h->line, said);
		else
			printf("  %-22s %4u  %llu\n", h->id, h->count,
			       (unsigned long long)h->line);
	}
	for (size_t i = 0; i < r->nhints; i++) {
		const char *what = !strcmp(r->hints[i].id, "other_process")
					   ? _("(another process held GPU memory)")
				   : !strcmp(r->hints[i].id, "cudnn_no_memory")
					   ? _("(cuDNN could not get memory)")
				   : !strcmp(r->hints[i].id, "cublas_not_initialized")
					   ? _("(cuBLAS could not start)")
				   : !strcmp(r->hints[i].id, "fragmentation")
					   ? _("(PyTorch memory fragmented)")
				   : !strcmp(r->hints[i].id, "memory_fraction")
					   ? _("(a per-process memory limit)")
				   : !strcmp(r->hints[i].id, "aoti_alloc_failed")
					   ? _("(probably out of GPU memory)")
					   : _("(host RAM, not the GPU)");
		printf("  %-22s %4u  %-6llu  %s\n", r->hints[i].id, r->hints[i].count,
		       (unsigned long long)r->hints[i].line, what);
	}
}

/* One row per timing (the table in diag_text.c): letter, when, then the cause and the first
 * change wrapped in the text column; the row that matches this log is marked with '>'. A run
 * that did not run out of GPU memory gets no table: it would only distract. */
static void print_timings(const struct diag_result *r, int width)
{
	const int when_cells = 16, text_col = 2 + 1 + 2 + when_cells + 2;

	if (!r->oom && !diag_memory_suspected(r))
		return;
	heading(_("When it ran out of memory, the likely cause, and what to change first:"), width);
	for (int t = DIAG_T_BEFORE_TRAINING; t < DIAG_T_COUNT; t++) {
		const struct diag_timing_def *row = &diag_timings[t];
		const char *when = diag_timing_words(row->id);
		int ww = text_width(when, strlen(when));
		char first[256];

		printf("\n%s %c  %s", r->oom && row->id == r->timing ? ">" : " ", row->letter, when);
		if (ww > when_cells) { /* a long translation: the text starts on the next line */
			fputc('\n', stdout);
			spaces(text_col);
		} else {
			spaces(when_cells - ww + 2);
		}
		put_wrapped(_(row->cause), width - text_col, text_col, width);
		spaces(text_col);
		snprintf(first, sizeof first, _("First: %s"), _(row->change));
		put_wrapped(first, width - text_col, text_col, width);
	}
}

/* The rollback plan and the decision every front end shows; for a run that did not fail for
 * memory, the decision alone. */
static void print_plan(const char *log, const struct diag_result *r, const struct job *j,
		       const struct plan *p, const struct plan_decision *d, const char *jobpath,
		       int width)
{
	if (r->oom || diag_memory_suspected(r)) {
		heading(j ? _("Rollback plan ([x] already in place):")
			  : _("Rollback plan (no job given: nothing can be seen as done):"),
			width);
		for (size_t i = 0; i < p->n; i++) {
			const struct fix_def *f = &fix_defs[p->steps[i].fix];
			const char *mark = p->steps[i].status == FIX_DONE ? "[x]"
					   : p->steps[i].status == FIX_TODO ? "[ ]" : "[-]";
			printf("  %s %-24s ", mark, f->name);
			cli_put_wrapped(_(f->title), width - 31, 31, width, true);
			if (!p->steps[i].helps) {
				spaces(31);
				put_wrapped(cli_no_help_note(), width - 31, 31, width);
			}
		}
		if (d->what == PLAN_NEXT_APPLY || d->what == PLAN_NEXT_FRESH_WORKER) {
			const struct fix_def *f = &fix_defs[d->fix];
			char buf[512];

			snprintf(buf, sizeof buf, "%s %s — %s", _("Change first:"), f->name, _(f->title));
			fputc('\n', stdout);
			put_wrapped(buf, width, 2, width);
			if (jobpath && d->what == PLAN_NEXT_APPLY) {
				/* on a line of its own, whole, so that it can be copied */
				printf("%s\n", _("See the change with:"));
				printf("  oomfix fix --diff --log %s %s %s\n", log, jobpath, f->name);
			} else if (d->what == PLAN_NEXT_FRESH_WORKER) {
				/* the decision in the words every front end shows */
				plan_decision_text(d, p, j, buf, sizeof buf);
				put_wrapped(buf, width - 2, 2, width);
			}
		} else if (r->oom) {
			/* the decision every front end shows: why no change is chosen */
			char buf[768];

			plan_decision_text(d, p, j, buf, sizeof buf);
			fputc('\n', stdout);
			put_wrapped(buf, width, 0, width);
		}
	} else if (d) {
		/* not a memory failure: the decision every front end shows, no change to choose */
		char buf[768];

		plan_decision_text(d, p, j, buf, sizeof buf);
		fputc('\n', stdout);
		put_wrapped(buf, width, 0, width);
	}
}

static void print_report(const char *log, const struct diag_result *r, const struct job *j,
			 const struct plan *p, const struct plan_decision *d, const char *jobpath,
			 const struct err *job_err)
{
	const int width = cli_report_width();

	printf("%s %s\n", _("Log:"), log);
	if (job_err) {
		/* the job's problem beside the verdict: a misspelt key is often the very failure */
		char buf[1400];
		snprintf(buf, sizeof buf, _("Job: %s:%d:%d: %s. The log was diagnosed without it."),
			 job_err->file, job_err->line, job_err->col, job_err->msg);
		put_wrapped(buf, width, 2, width);
	}
	fputc('\n', stdout);
	print_sentence(r, width);
	print_memory(r, width);

	print_evidence(r, width);
	print_signatures(r, width);
	print_timings(r, width);
	print_plan(log, r, j, p, d, jobpath, width);
	if (j)
		cli_estimate_text(j, r);
	if (r->truncated) {
		fputc('\n', stdout);
		put_wrapped(_("Note: the log changed size while it was read; this verdict covers what "
			      "was there when it was opened."), width, 0, width);
	}
	if (r->warnings)
		printf(_("Note: %lu lines were too costly to match and were skipped.\n"),
		       r->warnings);
}

static void print_json(const struct diag_result *r, const struct plan *p,
		       const struct plan_decision *d, const struct job *job, const struct err *job_err)
{
	struct json j;

	json_init(&j, stdout, true);
	json_obj_begin(&j);
	diag_json_head(&j, r);
	/* the verdict's first fix by its timing and phase (SPEC §3.3, §3.5: what a case's expected
	 * verdict states); what to do next is the decision, in "next" below */
	json_key(&j, "first_fix");
	json_str(&j, p->first_fix == FIX_NONE ? NULL : fix_defs[p->first_fix].name);
	json_key(&j, "fixes_exhausted");
	json_bool(&j, p->exhausted);
	json_key(&j, "accept_first_fix");
	json_arr_begin(&j);
	for (size_t i = 0; i < p->naccept; i++)
		json_str(&j, fix_defs[p->accept[i]].name);
	json_arr_end(&j);
	json_key(&j, "plan");
	json_arr_begin(&j);
	for (size_t i = 0; i < p->n; i++) {
		json_obj_begin(&j);
		json_key(&j, "fix");
		json_str(&j, fix_defs[p->steps[i].fix].name);
		json_key(&j, "done");
		json_bool(&j, p->steps[i].status == FIX_DONE);
		json_key(&j, "helps");
		json_bool(&j, p->steps[i].helps);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_key(&j, "next");
	plan_decision_json(&j, d, p, job);
	diag_json_tail(&j, r);
	json_key(&j, "job_error");
	if (job_err) {
		json_obj_begin(&j);
		json_key(&j, "file");
		json_str(&j, job_err->file);
		json_key(&j, "line");
		json_int(&j, job_err->line);
		json_key(&j, "column");
		json_int(&j, job_err->col);
		json_key(&j, "message");
		json_str(&j, job_err->msg);
		json_obj_end(&j);
	} else {
		json_null(&j);
	}
	if (job)
		cli_estimate_json(&j, job, r);
	json_obj_end(&j);
	json_finish(&j);
}

/* What `oomfix diagnose` was asked. */
struct diag_args {
	const char *jobpath, *log;
	bool json, follow;
};

/* Reads the arguments into *o: -1 to go on, else the exit status (help, usage). */
static int diagnose_options(int argc, char **argv, struct diag_args *o)
{
	bool opts = true;

	*o = (struct diag_args){ 0 };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (opts && !strcmp(a, "--")) {
			opts = false;
		} else if (opts && (!strcmp(a, "--help") || !strcmp(a, "-h"))) {
			help(stdout);
			return 0;
		} else if (opts && !strcmp(a, "--json")) {
			o->json = true;
		} else if (opts && !strcmp(a, "--follow")) {
			o->follow = true;
		} else if (opts && !strcmp(a, "--job")) {
			if (i + 1 >= argc)
				return usage();
			o->jobpath = argv[++i];
		} else if (opts && !strncmp(a, "--job=", 6)) {
			o->jobpath = a + 6;
		} else if (opts && a[0] == '-' && a[1]) {
			fprintf(stderr, _("oomfix: diagnose: unknown option '%s'\n"), a);
			return usage();
		} else if (!o->log) {
			o->log = a;
		} else {
			return usage();
		}
	}
	if ((!o->log && !source_is_aitk_arg(o->jobpath)) || (o->jobpath && !*o->jobpath))
		return usage();
	return -1;
}

/* The job given with --job, and what the diagnosis is told of it. */
struct diag_job {
	struct source *src;
	struct doc *d;
	struct job *j;
	struct diag_job_info info;
	bool bad;       /* not a valid job: the log is still diagnosed, `err` reported beside */
	struct err err;
};

/* Opens --job, first: a bad job file is reported before a big log is read. A web UI job
 * without a LOG gives its current log.txt (o->log); a job that is not valid leaves o->jobpath
 * NULL. 0, or the exit status once the error is said. */
static int open_diag_job(struct diag_args *o, struct diag_job *dj)
{
	struct err e;
	err_clear(&e);
	if (!o->jobpath)
		return ERR_OK;
	int rc = cli_open_job(o->jobpath, &dj->src, &dj->d, &dj->j, &e);
	if (rc == ERR_DATA && o->log) {
		dj->err = e;
		dj->bad = true;
		rc = ERR_OK;
	} else if (rc == ERR_OK && !o->log) {
		rc = cli_job_log(dj->src, &o->log, &e);
	}
	if (rc)
		return fail(&e);
	if (dj->bad) {
		/* not a valid job, but its model.arch may still say the kind (a misspelt `jobs:`) */
		dj->info.kind = (int)job_kind_guess_file(o->jobpath);
		o->jobpath = NULL;
	} else {
		dj->info.name = dj->j->name;
		dj->info.kind = (int)dj->j->kind;
		dj->info.conservative = job_is_conservative(dj->j) ? 1 : 0;
	}
	return ERR_OK;
}

/* Diagnoses the log once and prints the report or the JSON: the exit status. */
static int diagnose_once(const struct diag_args *o, const struct diag_job *dj,
			 const struct diag_job_info *info)
{
	struct err e;
	err_clear(&e);
	struct diag_result *r = malloc(sizeof *r);
	if (!r) {
		err_set(&e, ERR_SOFTWARE, NULL, 0, 0, "%s", _("out of memory"));
		return fail(&e);
	}
	int rc = diag_file(o->log, info, r, &e);
	if (rc == ERR_OK && !r->oom && source_sniff_job(o->log)) {
		/* A job given as the log: no OOM would be found in it, and that would mislead. */
		fprintf(stderr, _("oomfix diagnose: '%s' looks like a job file, not a training log: "
				  "give the log (oomfix diagnose --job %s LOG), or see the job's plan "
				  "(oomfix plan %s)\n"), o->log, o->log, o->log);
		rc = ERR_USAGE;
	} else if (rc == ERR_OK) {
		struct plan p;
		plan_build(dj->j, r, &p);
		struct plan_decision dec = plan_decide(&p, r, dj->src && !dj->bad &&
						       source_log_untried(dj->src, o->log, NULL));
		if (o->json) {
			/* JSON is read by programs: the decision's words stay in English */
			setlocale(LC_MESSAGES, "C");
			print_json(r, &p, &dec, dj->j, dj->bad ? &dj->err : NULL);
		} else {
			print_report(o->log, r, dj->j, &p, &dec, o->jobpath, dj->bad ? &dj->err : NULL);
		}
		if (fflush(stdout) != 0 || ferror(stdout)) {
			err_set(&e, ERR_IOERR, NULL, 0, 0, "%s", _("cannot write the report"));
			rc = fail(&e);
		}
		if (dj->j && !dj->bad) /* after the report: it shows the estimate before it */
			cli_measure(dj->src, dj->j, r, o->log);
	} else {
		rc = fail(&e);
	}
	free(r);
	return rc;
}

int cmd_diagnose(int argc, char **argv)
{
	struct diag_args o;
	int rc = diagnose_options(argc, argv, &o);
	if (rc >= 0)
		return rc;
	struct diag_job dj = { .info = { NULL, 0, -1 } };
	rc = open_diag_job(&o, &dj);
	if (rc == ERR_OK) {
		const struct diag_job_info *info = o.jobpath || dj.info.kind ? &dj.info : NULL;
		rc = o.follow ? cli_diagnose_follow(o.log, info, dj.src, dj.bad ? NULL : dj.j, o.json)
			      : diagnose_once(&o, &dj, info);
	}
	job_free(&dj.j);
	doc_free(&dj.d);
	source_free(&dj.src);
	return rc;
}
