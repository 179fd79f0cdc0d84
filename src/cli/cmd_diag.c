/* cmd_diag.c — `oomfix diagnose [--job JOB] [--json] LOG`: when did the run run out of GPU
 * memory, what proves it, and what to change first. */
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
#include "oomfix/json.h"
#include "oomfix/plan.h"
#include "oomfix/text.h"
#include "cli.h"

static void help(FILE *fp)
{
	fputs(_("Usage: oomfix diagnose [--job JOB] [--json] LOG\n"
		"\n"
		"Reads a trainer log (LOG may be '-' for standard input) and says whether the run\n"
		"died of GPU out-of-memory, when (timing and phase), at which step, which lines show\n"
		"it, and what to change first. With --job the verdict also uses the job file (model\n"
		"kind, settings already rolled back).\n"
		"\n"
		"  --job JOB   the job's YAML file\n"
		"  --json      print the verdict as JSON\n"), fp);
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

/* ---- the readable report ---- */

/* The five rows of the diagnosis table: when, likely cause, first change. Whole sentences:
 * the table wraps them, so nothing is cut mid-word. */
struct row {
	enum diag_timing t;
	const char *letter;
	const char *when;
	const char *cause;
	const char *change;
};

static const struct row rows[] = {
	{ DIAG_T_BEFORE_TRAINING, "A", N_("before training"),
	  N_("Loading the model, caching latents or text embeddings, or the baseline sample "
	     "needs more memory than the card has."),
	  N_("low_vram for the model load, a smaller top bucket or fewer frames for caching, "
	     "lighter or no samples for the baseline.") },
	{ DIAG_T_FIRST_STEPS, "B", N_("first steps"),
	  N_("One training step does not fit: batch, resolution, frames or activations are too "
	     "big."),
	  N_("the next step of the rollback plan below.") },
	{ DIAG_T_SAMPLING, "C", N_("while sampling"),
	  N_("Training fits, but the preview samples are bigger than the training batches."),
	  N_("lighter_sampling, then disable_sampling.") },
	{ DIAG_T_INTERMITTENT, "D", N_("intermittent"),
	  N_("Most steps fit; the largest bucket or the longest clips go over the limit now and "
	     "then."),
	  N_("drop_largest_bucket (video: num_frames).") },
	{ DIAG_T_ENVIRONMENT, "E", N_("environment"),
	  N_("A conservative job still fails at once: the worker or the GPU is at fault, not the "
	     "settings."),
	  N_("fresh_worker: stop retrying the same job, start a fresh worker, escalate if a "
	     "known-good job fails too.") },
};

/* The report is laid out for this many terminal cells: the terminal's width when stdout is
 * one (at most 100, where long lines stop being easy to read), else 80. */
static int report_width(void)
{
	struct winsize ws;

	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col < 60 ? 60 : ws.ws_col > 100 ? 100 : ws.ws_col;
	return 80;
}

static void spaces(int n)
{
	for (; n > 0; n--)
		fputc(' ', stdout);
}

/* Prints s word-wrapped in display cells (wide characters count 2): the first line in
 * `first` cells (the cursor is already where it starts), the others after `indent` blanks in
 * `width - indent` cells. Text without blanks (Japanese) is cut between characters. */
static void put_wrapped(const char *s, int first, int indent, int width)
{
	size_t len = strlen(s);
	int avail = first;

	while (len && *s == ' ') {
		s++;
		len--;
	}
	while (len) {
		size_t next, cut = text_wrap_next(s, len, avail > 1 ? avail : 1, &next);
		fwrite(s, 1, cut, stdout);
		fputc('\n', stdout);
		s += next;
		len -= next;
		if (!len)
			break;
		spaces(indent);
		avail = width - indent;
	}
}

static void print_sentence(const struct diag_result *r, int width)
{
	char buf[1024];
	diag_sentence(r, buf, sizeof buf);
	put_wrapped(buf, width, 0, width);
}

static void print_report(const char *log, const struct diag_result *r, const struct job *j,
			 const struct plan *p, const char *jobpath)
{
	const int width = report_width();
	const int when_cells = 16, text_col = 2 + 1 + 2 + when_cells + 2;

	printf("%s %s\n\n", _("Log:"), log);
	print_sentence(r, width);

	if (r->nevidence) {
		printf("\n%s\n", _("What the log shows (line number, text):"));
		for (size_t i = 0; i < r->nevidence; i++) {
			printf("%8llu  ", (unsigned long long)r->evidence[i].line);
			/* Wrapped, never cut: the end of a line is often what matters (a path). */
			if (r->evidence[i].text[0])
				put_wrapped(r->evidence[i].text, width - 10, 10, width);
			else
				fputc('\n', stdout);
		}
	}
	if (r->nsigs || r->nhints) {
		printf("\n%s\n", _("Signatures (count, line of the one nearest the failure):"));
		for (size_t i = 0; i < r->nsigs; i++)
			printf("  %-22s %4u  %llu%s%s\n", r->sigs[i].id, r->sigs[i].count,
			       (unsigned long long)r->sigs[i].line, r->sigs[i].value[0] ? "  " : "",
			       r->sigs[i].value);
		for (size_t i = 0; i < r->nhints; i++) {
			const char *what = !strcmp(r->hints[i].id, "other_process")
						   ? _("(another process held GPU memory)")
					   : !strcmp(r->hints[i].id, "cudnn_no_memory")
						   ? _("(cuDNN could not get memory)")
						   : _("(host RAM, not the GPU)");
			printf("  %-22s %4u  %llu  %s\n", r->hints[i].id, r->hints[i].count,
			       (unsigned long long)r->hints[i].line, what);
		}
	}

	/* One row per timing: letter, when, then the cause and the first change wrapped in the
	 * text column; the row that matches this log is marked with '>'. */
	/* a run that did not run out of GPU memory gets no table: it would only distract */
	if (r->oom || diag_has_hint(r, "cudnn_no_memory"))
		printf("\n%s\n",
		       _("When it ran out of memory, the likely cause, and what to change first:"));
	for (size_t i = 0; (r->oom || diag_has_hint(r, "cudnn_no_memory")) && i < sizeof rows / sizeof rows[0];
	     i++) {
		const char *when = _(rows[i].when);
		int ww = text_width(when, strlen(when));
		char first[256];

		printf("\n%s %s  %s", r->oom && rows[i].t == r->timing ? ">" : " ", rows[i].letter, when);
		if (ww > when_cells) { /* a long translation: the text starts on the next line */
			fputc('\n', stdout);
			spaces(text_col);
		} else {
			spaces(when_cells - ww + 2);
		}
		put_wrapped(_(rows[i].cause), width - text_col, text_col, width);
		spaces(text_col);
		snprintf(first, sizeof first, _("First: %s"), _(rows[i].change));
		put_wrapped(first, width - text_col, text_col, width);
	}

	if (r->oom || diag_has_hint(r, "cudnn_no_memory")) {
		printf("\n%s\n", j ? _("Rollback plan ([x] already in place):")
				   : _("Rollback plan (no job given: nothing can be seen as done):"));
		for (size_t i = 0; i < p->n; i++) {
			const struct fix_def *f = &fix_defs[p->steps[i].fix];
			const char *mark = p->steps[i].status == FIX_DONE ? "[x]"
					   : p->steps[i].status == FIX_TODO ? "[ ]" : "[-]";
			printf("  %s %-24s ", mark, f->name);
			put_wrapped(_(f->title), width - 31, 31, width);
		}
		if (p->first_fix != FIX_NONE) {
			const struct fix_def *f = &fix_defs[p->first_fix];
			char buf[512];

			snprintf(buf, sizeof buf, "%s %s — %s", _("Change first:"), f->name, _(f->title));
			fputc('\n', stdout);
			put_wrapped(buf, width, 2, width);
			if (jobpath && p->first_fix != FIX_FRESH_WORKER) {
				/* on a line of its own, whole, so that it can be copied */
				printf("%s\n", _("See the change with:"));
				printf("  oomfix fix --diff --log %s %s %s\n", log, jobpath, f->name);
			}
		}
	}
	if (r->truncated) {
		fputc('\n', stdout);
		put_wrapped(_("Note: the log changed size while it was read; this verdict covers what "
			      "was there when it was opened."), width, 0, width);
	}
	if (r->warnings)
		printf(_("Note: %lu lines were too costly to match and were skipped.\n"),
		       r->warnings);
}

static void print_json(const struct diag_result *r, const struct plan *p)
{
	struct json j;

	json_init(&j, stdout, true);
	json_obj_begin(&j);
	diag_json_head(&j, r);
	json_key(&j, "first_fix");
	json_str(&j, p->first_fix == FIX_NONE ? NULL : fix_defs[p->first_fix].name);
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
		json_obj_end(&j);
	}
	json_arr_end(&j);
	diag_json_tail(&j, r);
	json_obj_end(&j);
	json_finish(&j);
}

int cmd_diagnose(int argc, char **argv)
{
	const char *jobpath = NULL, *log = NULL;
	bool as_json = false, opts = true;
	struct doc *d = NULL;
	struct job *j = NULL;
	struct diag_job_info info = { NULL, 0, -1 };
	struct diag_result *r;
	struct plan p;
	struct err e;
	int rc;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (opts && !strcmp(a, "--")) {
			opts = false;
		} else if (opts && (!strcmp(a, "--help") || !strcmp(a, "-h"))) {
			help(stdout);
			return 0;
		} else if (opts && !strcmp(a, "--json")) {
			as_json = true;
		} else if (opts && !strcmp(a, "--job")) {
			if (i + 1 >= argc)
				return usage();
			jobpath = argv[++i];
		} else if (opts && !strncmp(a, "--job=", 6)) {
			jobpath = a + 6;
		} else if (opts && a[0] == '-' && a[1]) {
			fprintf(stderr, _("oomfix: diagnose: unknown option '%s'\n"), a);
			return usage();
		} else if (!log) {
			log = a;
		} else {
			return usage();
		}
	}
	if (!log || (jobpath && !*jobpath))
		return usage();

	err_clear(&e);
	/* the job first: a bad job file is reported before a big log is read */
	if (jobpath) {
		rc = doc_load_file(jobpath, &d, &e);
		if (rc == ERR_OK)
			rc = job_from_doc(d, &j, &e);
		if (rc) {
			doc_free(&d);
			return fail(&e);
		}
		info.name = j->name;
		info.kind = (int)j->kind;
		info.conservative = job_is_conservative(j) ? 1 : 0;
	}
	r = malloc(sizeof *r);
	if (!r) {
		job_free(&j);
		doc_free(&d);
		err_set(&e, ERR_SOFTWARE, NULL, 0, 0, "%s", _("out of memory"));
		return fail(&e);
	}
	rc = diag_file(log, jobpath ? &info : NULL, r, &e);
	if (rc == ERR_OK) {
		plan_build(j, r, &p);
		if (as_json)
			print_json(r, &p);
		else
			print_report(log, r, j, &p, jobpath);
		if (fflush(stdout) != 0 || ferror(stdout)) {
			err_set(&e, ERR_IOERR, NULL, 0, 0, "%s", _("cannot write the report"));
			rc = fail(&e);
		}
	} else {
		rc = fail(&e);
	}
	free(r);
	job_free(&j);
	doc_free(&d);
	return rc;
}
