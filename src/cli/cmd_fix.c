/* cmd_fix.c — `oomfix plan` (checklist, rollback plan, first fix, next scale-up step) and
 * `oomfix fix` (apply fixes one after another and print, diff or save the result).
 *
 * `fix` is all or nothing: when any named fix does not apply, nothing is printed or written and
 * the exit status is 65, so a script can never save half of what it asked for.
 */
#include <getopt.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/aitkdb.h"
#include "oomfix/buf.h"
#include "oomfix/diag.h"
#include "oomfix/diff.h"
#include "oomfix/doc.h"
#include "oomfix/err.h"
#include "oomfix/i18n.h"
#include "oomfix/job.h"
#include "oomfix/json.h"
#include "oomfix/plan.h"
#include "oomfix/save.h"
#include "oomfix/source.h"
#include "oomfix/text.h"
#include "cli.h"

static int fail(const struct err *e)
{
	err_print(e, stderr);
	return e->code ? e->code : ERR_SOFTWARE;
}

static int usage_error(const char *cmd, const char *fmt, const char *arg)
{
	fprintf(stderr, "oomfix %s: ", cmd);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	fprintf(stderr, _("Try 'oomfix %s --help'.\n"), cmd);
	return ERR_USAGE;
}

static int run_diag(const char *log, const struct job *j, struct diag_result *res, struct err *e)
{
	struct diag_job_info info = {
		.name = j ? j->name : NULL,
		.kind = j ? (int)j->kind : 0,
		.conservative = j ? (job_is_conservative(j) ? 1 : 0) : -1,
	};
	return diag_file(log, &info, res, e);
}

static const char *status_mark(enum fix_status s)
{
	switch (s) {
	case FIX_DONE: return _("done");
	case FIX_TODO: return _("to do");
	default: return _("n/a");
	}
}

/* ---- plan ------------------------------------------------------------------------------------- */

static void plan_help(FILE *fp)
{
	fputs(_("Usage: oomfix plan [--log LOG] [--json] JOB\n"
		"\n"
		"Shows the quick checklist as ticks on JOB, the rollback plan for its model\n"
		"kind with each step done or still to do, the first fix and the next scale-up\n"
		"step.\n"
		"With --log the first fix follows the log's verdict; without it, it is the first\n"
		"plan step not yet done.\n"
		"\n"
		"  --log LOG   the trainer's log (diagnosed as with 'oomfix diagnose')\n"
		"  --json      machine-readable output\n"
		"\n"
		"Exit status: 0 success, 64 usage, 65 invalid job, 66 cannot open input,\n"
		"74 I/O error.\n"),
	      fp);
}

static void plan_json(const struct job *j, const struct plan *p, const struct checklist *cl,
		      const struct diag_result *v, enum fix_id first, const struct plan_decision *d)
{
	struct json js;
	json_init(&js, stdout, true);
	json_obj_begin(&js);
	json_key(&js, "model_kind");
	json_str(&js, job_kind_name(j->kind));
	json_key(&js, "checklist");
	json_arr_begin(&js);
	enum check_item order[CHECK_COUNT];
	checklist_order(p, order);
	for (int k = 0; k < CHECK_COUNT; k++) {
		enum check_item c = order[k];
		json_obj_begin(&js);
		json_key(&js, "item");
		json_str(&js, checklist_id((enum check_item)c));
		json_key(&js, "label");
		json_str(&js, checklist_label((enum check_item)c));
		json_key(&js, "done");
		json_bool(&js, cl->item[c] == FIX_DONE);
		json_key(&js, "status");
		json_str(&js, fix_status_name(cl->item[c]));
		json_obj_end(&js);
	}
	json_arr_end(&js);
	json_key(&js, "plan");
	json_arr_begin(&js);
	for (size_t i = 0; i < p->n; i++) {
		char reason[256];
		fix_status(j, p->steps[i].fix, reason, sizeof reason);
		json_obj_begin(&js);
		json_key(&js, "fix");
		json_str(&js, fix_name(p->steps[i].fix));
		json_key(&js, "status");
		json_str(&js, fix_status_name(p->steps[i].status));
		json_key(&js, "title");
		json_str(&js, _(fix_defs[p->steps[i].fix].title));
		json_key(&js, "reason");
		json_str(&js, reason);
		json_key(&js, "helps");
		json_bool(&js, p->steps[i].helps);
		json_obj_end(&js);
	}
	json_arr_end(&js);
	json_key(&js, "first_fix");
	json_str(&js, fix_name(first));
	json_key(&js, "fixes_exhausted");
	json_bool(&js, p->exhausted);
	json_key(&js, "accept_first_fix");
	json_arr_begin(&js);
	for (size_t i = 0; i < p->naccept; i++)
		json_str(&js, fix_name(p->accept[i]));
	json_arr_end(&js);
	json_key(&js, "next");
	plan_decision_json(&js, d, p, j);
	json_key(&js, "verdict");
	if (v) {
		json_obj_begin(&js);
		json_key(&js, "timing");
		json_str(&js, diag_timing_name(v->timing));
		json_key(&js, "phase");
		json_str(&js, diag_phase_name(v->phase));
		json_key(&js, "failed_step");
		if (v->failed_step >= 0)
			json_int(&js, v->failed_step);
		else
			json_null(&js);
		json_obj_end(&js);
	} else {
		json_null(&js);
	}
	char text[512];
	enum scaleup_step su = scaleup_next(j, SCALEUP_NONE, text, sizeof text);
	json_key(&js, "scale_up");
	json_obj_begin(&js);
	json_key(&js, "order");
	json_arr_begin(&js);
	for (int s = 0; s < SCALEUP_COUNT; s++)
		json_str(&js, scaleup_title((enum scaleup_step)s));
	json_arr_end(&js);
	json_key(&js, "next");
	json_str(&js, su == SCALEUP_NONE ? NULL : text);
	json_obj_end(&js);
	cli_estimate_json(&js, j, v);
	json_obj_end(&js);
	json_finish(&js);
}

/* Prints a paragraph wrapped to `width` cells with `indent` spaces. */
static void print_wrapped(const char *s, int indent, int width)
{
	printf("%*s", indent, "");
	cli_put_wrapped(s, width - indent, indent, width, false);
}

/* Prints `head` and then `text` (a checklist item or a plan step: a list of changes) wrapped to
 * `width` cells, its further lines indented by `indent`, each change kept whole where it fits. */
static void print_item(const char *head, const char *text, int indent, int width)
{
	int used = text_width(head, strlen(head));

	fputs(head, stdout);
	if (!*text) {
		putchar('\n');
		return;
	}
	if (width - used < 20) { /* a long head on a narrow terminal: the text goes below it */
		printf("\n%*s", indent, "");
		used = indent;
	}
	cli_put_wrapped(text, width - used < 20 ? 20 : width - used, indent,
			width - indent < 20 ? indent + 20 : width, true);
}

static void plan_text(const char *path, const struct job *j, const struct plan *p,
		      const struct checklist *cl, const struct diag_result *v,
		      const struct plan_decision *d)
{
	const int width = cli_report_width();
	const char *kind = j->kind == JOB_KIND_VIDEO   ? _("video")
			   : j->kind == JOB_KIND_IMAGE ? _("image")
						       : _("unknown");
	printf(_("Job: %s (%s model, arch %s)\n"), path, kind,
	       j->arch[0] ? j->arch : "?");
	printf("\n%s\n", _("Quick checklist"));
	enum check_item order[CHECK_COUNT];
	checklist_order(p, order); /* the plan's order, so the two read alike (D37) */
	for (int k = 0; k < CHECK_COUNT; k++) {
		enum check_item c = order[k];
		const char *box = cl->item[c] == FIX_DONE ? "[x]" : cl->item[c] == FIX_TODO ? "[ ]"
											      : "[-]";
		char head[256];
		snprintf(head, sizeof head, "  %s %s — ", box, checklist_label((enum check_item)c));
		print_item(head, cl->reason[c], 6, width);
	}
	printf("\n");
	printf(j->kind == JOB_KIND_VIDEO ? _("Rollback plan (video model)\n")
					 : _("Rollback plan (image model)\n"));
	for (size_t i = 0; i < p->n; i++) {
		char reason[256];
		fix_status(j, p->steps[i].fix, reason, sizeof reason);
		const char *mark = status_mark(p->steps[i].status);
		int pad = 6 - text_width(mark, strlen(mark)); /* columns line up in cells, not bytes */
		char head[128], text[512];
		snprintf(head, sizeof head, "  %zu. %s%*s %-23s ", i + 1, mark, pad > 0 ? pad : 0, "",
			 fix_name(p->steps[i].fix));
		snprintf(text, sizeof text, "%s — %s", _(fix_defs[p->steps[i].fix].title), reason);
		int indent = text_width(head, strlen(head));
		print_item(head, text, indent, width);
		if (!p->steps[i].helps) {
			printf("%*s", indent, "");
			cli_put_wrapped(cli_no_help_note(), width - indent, indent, width, false);
		}
	}
	printf("\n");
	if (v) {
		if (v->oom) {
			printf(_("Verdict: %s, phase %s"),
			       v->timing != DIAG_T_NONE ? diag_timing_words(v->timing)
						    : _("the log does not show when"),
			       diag_phase_label(v->phase));
			if (v->failed_step >= 0)
				printf(_(", step %lld"), v->failed_step);
			printf("\n");
		} else {
			printf("%s\n", _("Verdict: the log shows no GPU out-of-memory."));
		}
	}
	char words[768];
	plan_decision_text(d, p, j, words, sizeof words);
	if (d->what == PLAN_NEXT_APPLY || d->what == PLAN_NEXT_FRESH_WORKER) {
		char head[512];
		snprintf(head, sizeof head,
			 v ? _("First fix: %s — %s\n")
			   : _("First fix (no log given: first step not done): %s — %s\n"),
			 fix_name(d->fix), _(fix_defs[d->fix].title));
		head[strcspn(head, "\n")] = '\0';
		cli_put_wrapped(head, width, 2, width, false);
		print_wrapped(d->what == PLAN_NEXT_APPLY ? _(fix_defs[d->fix].why) : words, 2,
			      width - 2);
	} else {
		/* the decision every front end shows: why no change is chosen */
		printf("%s\n", _("First fix: none."));
		print_wrapped(words, 2, width - 2);
	}
	cli_estimate_text(j, v);
	char text[512];
	if (scaleup_next(j, SCALEUP_NONE, text, sizeof text) != SCALEUP_NONE)
	{
		printf("\n%s\n", _("After a successful retry, scale up one setting at a time:"));
		print_wrapped(text, 2, width - 2);
	}
}

int cmd_plan(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "log", required_argument, NULL, 'l' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *log = NULL;
	bool json = false;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "l:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'l': log = optarg; break;
		case 'j': json = true; break;
		case 'h': plan_help(stdout); return 0;
		default:
			return usage_error("plan", _("unknown or incomplete option '%s'"),
					   argv[optind - 1]);
		}
	}
	if (argc - optind != 1)
		return usage_error("plan", "%s", _("expected one JOB file"));
	const char *path = argv[optind];

	struct err e;
	err_clear(&e);
	struct doc *d = NULL;
	struct job *j = NULL;
	struct source *src = NULL;
	int rc = cli_open_job(path, &src, &d, &j, &e);
	if (rc)
		return fail(&e);
	struct err le;
	if (!log && cli_job_log(src, &log, &le) != ERR_OK)
		log = NULL; /* a web UI job that has not run yet: the plan without a verdict */
	/* JSON is read by programs: its labels and reasons stay in English whatever the locale. */
	if (json)
		setlocale(LC_MESSAGES, "C");

	struct diag_result *v = NULL;
	if (log) {
		v = calloc(1, sizeof *v);
		if (!v || (rc = run_diag(log, j, v, &e)) != ERR_OK) {
			if (!v)
				err_set(&e, ERR_SOFTWARE, NULL, 0, 0, "%s", _("out of memory"));
			free(v);
			job_free(&j);
			doc_free(&d);
			source_free(&src);
			return fail(&e);
		}
	}
	struct plan p;
	struct checklist cl;
	plan_build(j, v, &p);
	checklist_build(j, v, &cl);
	/* first_fix is the verdict's (SPEC §3.5, as diagnose --json); the decision is "next" */
	enum fix_id first = v ? p.first_fix : plan_next_step(&p);
	struct plan_decision dec = plan_decide(&p, v, v && source_log_untried(src, log, NULL));
	if (json)
		plan_json(j, &p, &cl, v, first, &dec);
	else
		plan_text(path, j, &p, &cl, v, &dec);
	if (v) /* after the plan: it shows the estimate before it */
		cli_measure(src, j, v, log);
	free(v);
	job_free(&j);
	doc_free(&d);
	source_free(&src);
	return ferror(stdout) ? ERR_IOERR : 0;
}

/* ---- fix -------------------------------------------------------------------------------------- */

static void fix_help(FILE *fp)
{
	fputs(_("Usage: oomfix fix [--log LOG] [--diff] [--keep-batch | --no-keep-batch]\n"
		"                  [-o OUT | -i [--force]] JOB FIX...\n"
		"\n"
		"Applies the fixes in order, each to the result of the one before, and prints\n"
		"the new YAML (or, with --diff, the unified diff). JOB itself is only written\n"
		"with -i.\n"
		"\n"
		"FIX is one of: gradient_checkpointing batch_size drop_largest_bucket\n"
		"lighter_sampling disable_sampling num_frames low_vram fresh_worker, or 'next':\n"
		"the first fix for the log's verdict with --log, otherwise the first step of\n"
		"the rollback plan not yet done.\n"
		"\n"
		"  --log LOG        the trainer's log, used by 'next'\n"
		"  --diff           print the unified diff instead of the new YAML\n"
		"  --keep-batch     raise gradient accumulation so batch x accumulation stays\n"
		"                   (default)\n"
		"  --no-keep-batch  only lower the batch size\n"
		"  -o OUT           write the result to OUT\n"
		"  -i               save JOB in place (JOB~ keeps the previous version) and add\n"
		"                   an entry to the change journal JOB.oomfix.md\n"
		"  --force          with -i: overwrite even if JOB changed on disk\n"
		"                   since it was read\n"
		"\n"
		"A fix that is already done is reported on stderr and changes nothing.\n"
		"Exit status: 0 when every fix was applied or already done; 65 when a named fix\n"
		"does not apply to this job (nothing is printed or written then), or the job is\n"
		"invalid; 64 usage; 66 cannot open input; 73 cannot create output;\n"
		"74 I/O error; 75 JOB changed on disk (use --force).\n"), fp);
	fputs(_("\n'next' is refused (75) when LOG is older than the last change saved to JOB\n"
		"(its journal says when): that change has not been tried yet. Run the job again\n"
		"and give its new log, or add --force to choose from the old log anyway.\n"), fp);
	fputs(_("\n'oomfix fix --list [JOB]' prints the FIX words, one a line: 'next' and every\n"
		"fix, or with JOB the fixes that would still change it (used by shell\n"
		"completion).\n"), fp);
}

/* A growing list of owned strings. */
struct strv {
	char **v;
	size_t n, cap;
};

static bool strv_push(struct strv *s, char *str)
{
	if (!str)
		return false;
	if (!ARRAY_GROW(s->v, s->n + 1, s->cap)) {
		free(str);
		return false;
	}
	s->v[s->n++] = str;
	return true;
}

static void strv_free(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	*s = (struct strv){ 0 };
}

/* Writes len bytes of s and flushes; ERR_IOERR when either fails. */
static int write_all(FILE *fp, const char *s, size_t len)
{
	if (len && fwrite(s, 1, len, fp) != len)
		return ERR_IOERR;
	return fflush(fp) ? ERR_IOERR : 0;
}

/* True when one of the FIX words is `next`. */
static bool wants_next(int n, char **fixes)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(fixes[i], "next"))
			return true;
	return false;
}

/* `fix --list [JOB]`: the FIX words, one a line, for shell completion: `next` and every fix, or
 * with JOB only the fixes that would still change it. A JOB that cannot be read lists them all
 * (completion must not print errors while the user types). */
static int list_fixes(const char *path)
{
	struct doc *d = NULL;
	struct job *j = NULL;
	struct source *src = NULL;
	struct err e;

	err_clear(&e);
	if (path && cli_open_job(path, &src, &d, &j, &e) != ERR_OK)
		j = NULL;
	puts("next");
	for (int id = 0; id < FIX_COUNT; id++) {
		char reason[256];
		if (!j || fix_status(j, (enum fix_id)id, reason, sizeof reason) == FIX_TODO)
			puts(fix_name((enum fix_id)id));
	}
	job_free(&j);
	doc_free(&d);
	source_free(&src);
	return fflush(stdout) ? ERR_IOERR : 0;
}

/* What `fix` was asked: options and the words after them. */
struct fix_opts {
	const char *log, *out, *path;
	bool diff, keep, inplace, force;
	char **fixes; /* the FIX words, nfix of them */
	int nfix;
};

/* Parses the command line into *o. Returns -1 to go on, or the exit status to end with (help,
 * --list, a usage error). */
static int fix_parse(int argc, char **argv, struct fix_opts *o)
{
	enum { O_KEEP = 256, O_NOKEEP, O_FORCE, O_LIST };
	static const struct option opts[] = {
		{ "log", required_argument, NULL, 'l' },
		{ "diff", no_argument, NULL, 'd' },
		{ "keep-batch", no_argument, NULL, O_KEEP },
		{ "no-keep-batch", no_argument, NULL, O_NOKEEP },
		{ "output", required_argument, NULL, 'o' },
		{ "in-place", no_argument, NULL, 'i' },
		{ "force", no_argument, NULL, O_FORCE },
		{ "list", no_argument, NULL, O_LIST },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	*o = (struct fix_opts){ .keep = true };
	bool list = false;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "l:do:ih", opts, NULL)) != -1) {
		switch (c) {
		case 'l': o->log = optarg; break;
		case 'd': o->diff = true; break;
		case O_KEEP: o->keep = true; break;
		case O_NOKEEP: o->keep = false; break;
		case 'o': o->out = optarg; break;
		case 'i': o->inplace = true; break;
		case O_FORCE: o->force = true; break;
		case O_LIST: list = true; break;
		case 'h': fix_help(stdout); return 0;
		default:
			return usage_error("fix", _("unknown or incomplete option '%s'"),
					   argv[optind - 1]);
		}
	}
	if (list)
		return list_fixes(argc - optind > 0 ? argv[optind] : NULL);
	if (o->out && o->inplace)
		return usage_error("fix", "%s", _("-o and -i cannot be used together"));
	if (argc - optind < 2)
		return usage_error("fix", "%s", _("expected JOB and at least one FIX"));
	o->path = argv[optind];
	o->fixes = argv + optind + 1;
	o->nfix = argc - optind - 1;
	for (int i = 0; i < o->nfix; i++)
		if (strcmp(o->fixes[i], "next") && fix_by_name(o->fixes[i]) == FIX_NONE) {
			/* Name the fixes there are, so the next try can be right. */
			fprintf(stderr, _("oomfix fix: unknown fix '%s'; the fixes are:"), o->fixes[i]);
			for (int id = 0; id < FIX_COUNT; id++)
				fprintf(stderr, " %s", fix_name((enum fix_id)id));
			fprintf(stderr, " %s\n", _("(or next)"));
			fprintf(stderr, _("Try 'oomfix %s --help'.\n"), "fix");
			return ERR_USAGE;
		}
	return -1;
}

/* One `fix` run: the job as read (orig) and as the fixes so far left it (cur, j). */
struct fix_run {
	struct source *src;
	struct doc *orig, *cur;
	struct job *j;
	const char *log;
	struct diag_result *v; /* the log's diagnosis, or NULL without a log */
	struct strv applied;   /* names of the fixes applied, for the journal */
	bool not_applicable;
	struct err e;
};

static void fix_run_free(struct fix_run *r)
{
	strv_free(&r->applied);
	if (r->cur != r->orig)
		doc_free(&r->cur);
	free(r->v);
	job_free(&r->j);
	doc_free(&r->orig);
	source_free(&r->src);
}

/* Reads the job and diagnoses its log. Returns 0, or the exit status (reported). */
static int fix_open(const struct fix_opts *o, struct fix_run *r)
{
	if (cli_open_job(o->path, &r->src, &r->orig, &r->j, &r->e))
		return fail(&r->e);
	r->cur = r->orig;
	/* Nothing can be saved under a running trainer: say so before any "applied" line. */
	if (o->inplace && source_refuse_running(r->src, &r->e) != ERR_OK)
		return fail(&r->e);
	struct err le;
	r->log = o->log;
	if (!r->log && cli_job_log(r->src, &r->log, &le) != ERR_OK)
		r->log = NULL;
	if (!r->log)
		return 0;
	r->v = calloc(1, sizeof *r->v);
	if (!r->v) {
		err_set(&r->e, ERR_SOFTWARE, NULL, 0, 0, "%s", _("out of memory"));
		return fail(&r->e);
	}
	if (run_diag(r->log, r->j, r->v, &r->e) != ERR_OK)
		return fail(&r->e);
	cli_measure(r->src, r->j, r->v, r->log); /* before any change is saved */
	return 0;
}

/* One change, then a run (SPEC §3.4): `next` from a log that predates the last saved change
 * would stack a second change on one nobody has tried. Returns 0, or ERR_TEMPFAIL (reported). */
static int fix_refuse_untried(const struct fix_opts *o, struct fix_run *r)
{
	time_t changed;
	if (!r->v || o->force || !wants_next(o->nfix, o->fixes) ||
	    !source_log_untried(r->src, r->log, &changed))
		return 0;
	char when[64], text[768];
	struct tm tm;
	struct plan p;
	if (!localtime_r(&changed, &tm) || !strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(when, sizeof when, "%lld", (long long)changed);
	plan_build(r->j, r->v, &p);
	struct plan_decision d = plan_decide(&p, r->v, true);
	plan_decision_text(&d, &p, r->j, text, sizeof text);
	fprintf(stderr, _("next: %s\n"), text);
	fprintf(stderr, _("%s: the last change was saved at %s; use --force to choose from "
			  "this log anyway.\n"), r->log, when);
	return ERR_TEMPFAIL;
}

/* `next`, on the job as the earlier fixes left it: the fix plan_decide chooses, or FIX_NONE
 * (said on stderr, and the run marked not applicable) when it chooses none. */
static enum fix_id fix_resolve_next(struct fix_run *r)
{
	struct plan p;
	char text[768];
	plan_build(r->j, r->v, &p);
	struct plan_decision d = plan_decide(&p, r->v, false);
	plan_decision_text(&d, &p, r->j, text, sizeof text);
	if (d.what != PLAN_NEXT_APPLY && d.what != PLAN_NEXT_FRESH_WORKER) {
		/* the one answer every front end gives: nothing is applied */
		fprintf(stderr, _("next: %s\n"), text);
		r->not_applicable = true;
		return FIX_NONE;
	}
	fprintf(stderr, _("next: %s\n"), fix_name(d.fix));
	if (d.what == PLAN_NEXT_FRESH_WORKER)
		fprintf(stderr, "%s\n", text);
	return d.fix;
}

/* Applies fix `id` to r->cur (done and not-applicable fixes are only reported). Returns 0, or
 * the exit status (reported). */
static int fix_apply_one(const struct fix_opts *o, struct fix_run *r, enum fix_id id)
{
	char reason[256];
	enum fix_status st = fix_status(r->j, id, reason, sizeof reason);
	if (st == FIX_DONE) {
		fprintf(stderr, _("%s: already done (%s)\n"), fix_name(id), reason);
		return 0;
	}
	if (st == FIX_NOT_APPLICABLE) {
		fprintf(stderr, _("%s: not applicable (%s)\n"), fix_name(id), reason);
		r->not_applicable = true;
		return 0;
	}
	struct fix_edit_list l;
	int phase = r->v && r->v->oom ? (int)r->v->phase : 0;
	if (fix_edits_after(r->j, id, o->keep, phase, &l, &r->e) != ERR_OK)
		return fail(&r->e);
	if (l.note[0])
		fprintf(stderr, "%s: %s\n", fix_name(id), l.note);
	if (!l.n) {
		fix_edits_free(&l);
		return 0;
	}
	struct doc *next = NULL;
	int rc = doc_apply(r->cur, l.edits, l.n, &next, &r->e);
	fix_edits_free(&l);
	struct job *nj = NULL;
	if (rc || job_from_doc(next, &nj, &r->e) != ERR_OK) {
		doc_free(&next);
		return fail(&r->e);
	}
	job_free(&r->j);
	r->j = nj;
	if (r->cur != r->orig)
		doc_free(&r->cur);
	r->cur = next;
	fprintf(stderr, _("%s: applied (%s)\n"), fix_name(id), reason);
	if (!strv_push(&r->applied, strdup(fix_name(id)))) {
		err_set(&r->e, ERR_SOFTWARE, NULL, 0, 0, "%s", _("out of memory"));
		return fail(&r->e);
	}
	return 0;
}

/* Prints the result (the new YAML, or its diff with --diff) and writes it to -o OUT. Returns 0,
 * or the exit status (reported). */
static int fix_output(const struct fix_opts *o, struct fix_run *r)
{
	size_t olen, nlen;
	const char *otext = doc_text(r->orig, &olen), *ntext = doc_text(r->cur, &nlen);
	int rc = 0;
	if (o->diff) {
		char *dtext = source_diff(o->path, otext, olen, ntext, nlen, 3);
		if (!dtext) {
			err_set(&r->e, ERR_SOFTWARE, NULL, 0, 0, "%s", _("out of memory"));
			return fail(&r->e);
		}
		rc = write_all(stdout, dtext, strlen(dtext));
		free(dtext);
	} else if (!o->out && !o->inplace) {
		rc = write_all(stdout, ntext, nlen);
	}
	if (rc) {
		err_set(&r->e, ERR_IOERR, NULL, 0, 0, "%s", _("cannot write to standard output"));
		return fail(&r->e);
	}
	if (o->out && save_output(o->out, ntext, nlen, source_path(r->src), &r->e) != ERR_OK)
		return fail(&r->e);
	return 0;
}

/* -i: saves JOB (its source keeps the previous version) and adds the journal entry. Returns 0,
 * or the exit status (reported). */
static int fix_save_in_place(const struct fix_opts *o, struct fix_run *r)
{
	if (r->cur == r->orig) {
		fprintf(stderr, _("%s: nothing changed, file left as it was\n"), o->path);
		return 0;
	}
	size_t nlen;
	const char *ntext = doc_text(r->cur, &nlen);
	int rc = source_save(r->src, ntext, nlen, o->force ? SOURCE_FORCE : 0, &r->e);
	if (rc == ERR_TEMPFAIL && !source_row(r->src)) {
		err_print(&r->e, stderr);
		fprintf(stderr, "%s\n", _("oomfix fix: the file changed on disk since it was "
					  "read; run again, or use --force to overwrite it."));
		return rc;
	}
	if (rc)
		return fail(&r->e);
	char **changes;
	size_t nchanges = doc_changes(r->orig, r->cur, &changes);
	int jrc = source_journal(r->src, (const char *const *)r->applied.v, r->applied.n,
				 (const char *const *)changes, nchanges, &r->e);
	doc_changes_free(changes, nchanges);
	if (jrc != ERR_OK) {
		/* The file is saved; a journal that cannot be written is worth a warning, not
		 * a failure that would suggest the save did not happen. */
		err_print(&r->e, stderr);
	}
	char *msg = source_saved_message(r->src, jrc == ERR_OK);
	if (msg)
		fprintf(stderr, "%s\n", msg);
	free(msg);
	return 0;
}

/* Each fix applies to the result of the one before; nothing is printed or written unless every
 * named fix applied or was already done. */
static int fix_all(const struct fix_opts *o, struct fix_run *r)
{
	int status = fix_open(o, r);
	if (!status)
		status = fix_refuse_untried(o, r);
	for (int i = 0; !status && i < o->nfix; i++) {
		enum fix_id id = fix_by_name(o->fixes[i]);
		if (id == FIX_NONE && (id = fix_resolve_next(r)) == FIX_NONE)
			continue;
		status = fix_apply_one(o, r, id);
	}
	if (status)
		return status;
	if (r->not_applicable) {
		fprintf(stderr, "%s\n", _("oomfix fix: nothing written, because a fix does not apply."));
		return ERR_DATA;
	}
	status = fix_output(o, r);
	if (!status && o->inplace)
		status = fix_save_in_place(o, r);
	return status;
}

int cmd_fix(int argc, char **argv)
{
	struct fix_opts o;
	int status = fix_parse(argc, argv, &o);
	if (status >= 0)
		return status;
	struct fix_run r = { 0 };
	err_clear(&r.e);
	status = fix_all(&o, &r);
	fix_run_free(&r);
	return status;
}
