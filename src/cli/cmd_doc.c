/* cmd_doc.c — `oomfix get JOB PATH` and `oomfix set [-o OUT | -i] [--force] JOB PATH=VALUE...`. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/doc.h"
#include "oomfix/err.h"
#include "oomfix/i18n.h"
#include "oomfix/job.h"
#include "oomfix/save.h"
#include "oomfix/source.h"
#include "cli.h"

static int usage_get(void)
{
	fprintf(stderr, "%s\n", _("usage: oomfix get JOB PATH"));
	return ERR_USAGE;
}

static int usage_set(void)
{
	fprintf(stderr, "%s\n", _("usage: oomfix set [-o OUT | -i] [--force] JOB PATH=VALUE..."));
	return ERR_USAGE;
}

static int help_get(void)
{
	fputs(_("Usage: oomfix get JOB PATH\n"
		"\n"
		"Prints the value at PATH as the trainer reads it: a string without quotes, a\n"
		"number as written (1e-4 stays 1e-4), a list or mapping as flow YAML\n"
		"([512, 768]).\n"
		"PATH is keys separated by dots with [N] indices, for example\n"
		"  config.process[0].train.batch_size\n"
		"  config.process[0].datasets[0].resolution\n"
		"Aliases and merge keys (<<) are followed.\n"
		"\n"
		"Exit status: 0 success, 64 usage, 65 invalid YAML or no such key (the error\n"
		"names the line of the deepest key that exists), 66 cannot open JOB.\n"), stdout);
	return 0;
}

static int help_set(void)
{
	fputs(_("Usage: oomfix set [-o OUT | -i [--force]] JOB PATH=VALUE...\n"
		"\n"
		"Sets each PATH to VALUE (written as YAML: 7, true, 1e-4, [512, 768], \"text\") and\n"
		"prints the new file. Only the edited values change: comments, quoting, order and\n"
		"indentation stay as they are; a missing key is added beside its siblings. Every\n"
		"edit is checked by reading the result again before anything is written.\n"
		"\n"
		"  -o OUT    write the result to OUT instead\n"
		"  -i        save JOB in place (JOB~ keeps the previous version) and add an entry\n"
		"            to the change journal JOB.oomfix.md\n"
		"  --force   with -i: overwrite even if JOB changed on disk since it was read\n"
		"\n"
		"Exit status: 0 success, 64 usage, 65 invalid YAML or an edit that cannot be\n"
		"made, 66 cannot open JOB, 73 cannot create OUT, 74 I/O error, 75 JOB changed\n"
		"on disk.\n"),
	      stdout);
	fputs(_("\nThe fields of the editor's panels (batch size, steps, learning rate, sample\n"
		"size, frames, resolutions, optimizer, data type, sampler, arch) are checked\n"
		"against the trainer's rules: a value it would refuse exits 65 and names the\n"
		"rule. --force writes it anyway.\n"), stdout);
	return 0;
}

/* Strips one pair of YAML quotes from a typed value ("adamw" -> adamw) into buf. */
static void unquote(const char *v, char *buf, size_t sz)
{
	size_t n = strlen(v);

	if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0])
		snprintf(buf, sz, "%.*s", (int)(n - 2), v + 1);
	else
		snprintf(buf, sz, "%s", v);
}

/* Checks each edit of a panel field against the trainer's rules (job_field_check). */
static int check_fields(const struct doc *d, const char *job, const struct doc_edit *edits,
			size_t n, struct err *e)
{
	struct job *j = NULL;
	int rc = ERR_OK;

	if (job_from_doc(d, &j, e) != ERR_OK) {
		err_clear(e);
		return ERR_OK; /* not a job the panels know: only the YAML is checked */
	}
	for (size_t i = 0; rc == ERR_OK && i < n; i++) {
		size_t ds = 0;
		char val[512];
		const struct job_field *f = job_field_at(j, edits[i].path, &ds);
		if (!f || !edits[i].value)
			continue;
		unquote(edits[i].value, val, sizeof val);
		if (job_field_check(j, f, val, e) != ERR_OK) {
			char msg[sizeof e->msg];
			snprintf(msg, sizeof msg, "%s", e->msg);
			rc = err_set(e, ERR_DATA, job, 0, 0, _("%s: %s (--force writes it anyway)"),
				     edits[i].path, msg);
		}
	}
	job_free(&j);
	return rc;
}

static int fail(const struct err *e)
{
	err_print(e, stderr);
	return e->code ? e->code : ERR_SOFTWARE;
}

/* Reports an absent path at the deepest part that exists. */
static int no_such_key(const struct doc *d, const char *job, const char *path)
{
	struct err e;
	size_t plen = 0;
	const struct doc_node *near = doc_get_nearest(d, path, &plen);
	if (!near) {
		err_set(&e, ERR_USAGE, job, 0, 0,
			_("bad path '%s': use keys separated by dots and [N] indices, "
			  "e.g. config.process[0].train.lr"), path);
		return fail(&e);
	}
	/* Point at the key of the deepest value found: that line is what a person looks for. */
	const struct doc_span *at = &near->span;
	const struct doc_node *par = near->parent;
	for (size_t i = 0; par && par->kind == DOC_MAP && i < par->n; i++)
		if (par->items[i] == near)
			at = &par->keys[i]->span;
	if (plen)
		err_set(&e, ERR_DATA, job, at->line, at->col,
			_("%s: no such key (found up to '%.*s', which starts here)"), path, (int)plen,
			path);
	else
		err_set(&e, ERR_DATA, job, at->line, at->col, _("%s: no such key"), path);
	return fail(&e);
}

int cmd_get(int argc, char **argv)
{
	int first = 1;
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		return help_get();
	if (argc > 1 && !strcmp(argv[1], "--"))
		first = 2;
	if (argc - first != 2 || (first == 1 && argv[1][0] == '-' && argv[1][1]))
		return usage_get();
	const char *job = argv[first], *path = argv[first + 1];
	struct err e;
	err_clear(&e);
	struct doc *d = NULL;
	struct source *src = NULL;
	if (cli_open_job(job, &src, &d, NULL, &e) != ERR_OK)
		return fail(&e);
	int rc = ERR_OK;
	const struct doc_node *n = doc_get(d, path);
	if (!n) {
		rc = no_such_key(d, job, path);
	} else {
		bool trunc = false;
		char *s = doc_to_flow_bounded(n, 1000000, &trunc);
		if (!s) {
			err_set(&e, ERR_SOFTWARE, NULL, 0, 0, "%s", _("out of memory"));
			rc = fail(&e);
		} else if (trunc) {
			err_set(&e, ERR_DATA, job, n->span.line, n->span.col,
				_("%s: the value expands to more than a million nodes (aliases); "
				  "refusing to print it"), path);
			rc = fail(&e);
		} else {
			fputs(s, stdout);
			fputc('\n', stdout);
			if (fflush(stdout) != 0 || ferror(stdout)) {
				err_set(&e, ERR_IOERR, NULL, 0, 0, "%s", _("cannot write to standard output"));
				rc = fail(&e);
			}
		}
		free(s);
	}
	doc_free(&d);
	source_free(&src);
	return rc;
}

/* Every save of the job appends what changed to its journal; a journal that cannot be written
 * is a warning, since the save itself succeeded. */
static void journal(const struct source *job, const struct doc *before, const struct doc *after)
{
	char **changes;
	size_t n = doc_changes(before, after, &changes);
	struct err e;
	err_clear(&e);
	bool ok = source_journal(job, NULL, 0, (const char *const *)changes, n, &e) == ERR_OK;
	if (!ok)
		err_print(&e, stderr);
	doc_changes_free(changes, n);
	/* Where the save went: the file, or the web UI's database and the job (D2). */
	char *msg = source_saved_message(job, ok);
	if (msg)
		fprintf(stderr, "%s\n", msg);
	free(msg);
}

int cmd_set(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"in-place", no_argument, NULL, 'i'},
		{"force", no_argument, NULL, 'F'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *out = NULL;
	bool inplace = false, force = false;
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:ih", longopts, NULL)) != -1) {
		switch (c) {
		case 'h': return help_set();
		case 'o': out = optarg; break;
		case 'i': inplace = true; break;
		case 'F': force = true; break;
		default:
			fprintf(stderr, _("oomfix: set: unknown or incomplete option '%s'\n"),
				argv[optind - 1]);
			return usage_set();
		}
	}
	if ((out && inplace) || argc - optind < 2)
		return usage_set();
	const char *job = argv[optind];
	size_t n = (size_t)(argc - optind - 1);
	struct err e;
	err_clear(&e);

	struct doc_edit *edits = calloc(n, sizeof *edits);
	char **bufs = calloc(n, sizeof *bufs);
	int rc = ERR_OK;
	if (!edits || !bufs)
		rc = err_set(&e, ERR_SOFTWARE, NULL, 0, 0, "%s", _("out of memory"));
	for (size_t i = 0; rc == ERR_OK && i < n; i++) {
		char *path, *value;
		rc = doc_parse_assignment(argv[optind + 1 + (int)i], &path, &value, &e);
		if (rc == ERR_OK) {
			bufs[i] = path;
			edits[i] = (struct doc_edit){.op = DOC_EDIT_SET, .path = path, .value = value};
		}
	}
	if (rc != ERR_OK) {
		fail(&e);
		if (rc == ERR_USAGE)
			usage_set();
		goto done;
	}

	struct doc *d = NULL, *nd = NULL;
	struct source *src = NULL;
	if ((rc = cli_open_job(job, &src, &d, NULL, &e)) != ERR_OK) {
		fail(&e);
		goto done;
	}
	if (!force && (rc = check_fields(d, job, edits, n, &e)) != ERR_OK) {
		fail(&e);
		doc_free(&d);
		source_free(&src);
		goto done;
	}
	if ((rc = doc_apply(d, edits, n, &nd, &e)) != ERR_OK) {
		if (!e.file[0])
			snprintf(e.file, sizeof e.file, "%s", job);
		fail(&e);
		doc_free(&d);
		source_free(&src);
		goto done;
	}
	size_t len, olen;
	const char *text = doc_text(nd, &len);
	const char *orig = doc_text(d, &olen);
	if (inplace) {
		if (len != olen || memcmp(text, orig, len)) {
			rc = source_save(src, text, len, force ? SOURCE_FORCE : 0, &e);
			if (rc == ERR_OK)
				journal(src, d, nd);
		}
	} else if (out) {
		rc = save_output(out, text, len, source_path(src), &e);
	} else if (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0) {
		rc = err_set(&e, ERR_IOERR, NULL, 0, 0, "%s", _("cannot write to standard output"));
	}
	if (rc != ERR_OK)
		fail(&e);
	doc_free(&nd);
	doc_free(&d);
	source_free(&src);
done:
	for (size_t i = 0; bufs && i < n; i++)
		free(bufs[i]);
	free(bufs);
	free(edits);
	return rc;
}
