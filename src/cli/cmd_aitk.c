/* cmd_aitk.c — jobs kept by the AI Toolkit web UI: `oomfix jobs`, `oomfix queue aitk:NAME`,
 * `oomfix restore JOB`, and the job loading every subcommand shares (a file or "aitk:NAME"). */
#include <errno.h>
#include <getopt.h>
#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oomfix/aitkdb.h"
#include "oomfix/diag.h"
#include "oomfix/doc.h"
#include "oomfix/err.h"
#include "oomfix/i18n.h"
#include "oomfix/job.h"
#include "oomfix/json.h"
#include "oomfix/plan.h"
#include "oomfix/retry.h"
#include "oomfix/source.h"
#include "oomfix/text.h"
#include "oomfix/trail.h"
#include "oomfix/diag.h"
#include "cli.h"

static int fail(const struct err *e)
{
	err_print(e, stderr);
	return e->code ? e->code : ERR_SOFTWARE;
}

static int open_db(struct aitk_db **db, struct err *e);

/* A job's name from the web UI's database as the terminal may show it (the database is anyone's
 * to write, so the name is untrusted text): an escape sequence, a newline or a TAB becomes
 * visible text (^[, ^J, ^I). Into buf, of `size` bytes, cut at a whole character. */
static const char *shown_name(const char *name, char *buf, size_t size)
{
	text_visible_cell(name ? name : "", name ? strlen(name) : 0, buf, size);
	return buf;
}

/* The same in a buffer that lives as long as the full expression it is written in. */
#define SHOWN_NAME(name) shown_name((name), (char[1024]){ 0 }, 1024)

/* True when `arg`, given without "aitk:", is the name of a job of the web UI's database. */
static bool names_aitk_job(const char *arg)
{
	if (!arg || !*arg || arg[0] == '-' || source_is_aitk_arg(arg))
		return false;
	struct aitk_db *db = NULL;
	struct aitk_job row;
	struct err ne;
	err_clear(&ne);
	bool known = open_db(&db, &ne) == ERR_OK && aitkdb_get(db, arg, &row, &ne) == ERR_OK;
	if (known)
		aitkdb_job_clear(&row);
	aitkdb_close(&db);
	return known;
}

/* A web UI job's name without "aitk:" that names no file: the error says the argument that
 * works. */
static void hint_aitk_name(const char *arg, int rc, struct err *e)
{
	if (rc == ERR_NOINPUT && names_aitk_job(arg)) {
		size_t n = strlen(e->msg);
		snprintf(e->msg + n, sizeof e->msg - n, _("; did you mean 'aitk:%s'?"),
			 SHOWN_NAME(arg));
	}
}

int cli_open_job(const char *arg, struct source **s, struct doc **d, struct job **j, struct err *e)
{
	*d = NULL;
	if (j)
		*j = NULL;
	int rc = source_open(arg, s, e);
	if (rc == ERR_OK) {
		size_t len;
		const char *text = source_text(*s, &len);
		rc = doc_load(source_label(*s), text, len, d, e);
	}
	if (rc == ERR_OK && j)
		rc = job_from_doc(*d, j, e);
	if (rc) {
		doc_free(d);
		source_free(s);
	}
	hint_aitk_name(arg, rc, e);
	/* A training log given where the job goes: say so rather than only report its text. */
	if (rc == ERR_DATA && !source_is_aitk_arg(arg) && !source_sniff_job(arg)) {
		size_t n = strlen(e->msg);
		snprintf(e->msg + n, sizeof e->msg - n,
			 _("; '%s' does not look like a job (no job: or config: line): if it is a "
			   "training log, use oomfix diagnose '%s'"), arg, arg);
	}
	return rc;
}

int cli_job_log(const struct source *s, const char **log, struct err *e)
{
	*log = source_log(s);
	if (!*log)
		return ERR_OK;
	struct stat st;
	if (stat(source_run_dir(s), &st) != 0)
		return err_set(e, ERR_NOINPUT, source_run_dir(s), 0, 0, "%s",
			       _("the job's run folder does not exist (has it ever run?); give a LOG"));
	if (stat(*log, &st) != 0)
		return err_set(e, ERR_NOINPUT, *log, 0, 0, "%s",
			       _("the job has no current log; give a LOG"));
	return ERR_OK;
}

int cli_save_failed(const struct source *s, const struct err *e)
{
	err_print(e, stderr);
	if (e->code == ERR_TEMPFAIL && !source_row(s))
		fprintf(stderr, "%s\n", _("oomfix: the file changed on disk since it was read; run "
					  "again, or use --force to overwrite it."));
	return e->code ? e->code : ERR_SOFTWARE;
}

/* ---- jobs -------------------------------------------------------------------------------------- */

static void jobs_help(FILE *fp)
{
	fputs(_("Usage: oomfix jobs [--aitk DIR] [--json | --names]\n"
		"\n"
		"Lists the jobs of the AI Toolkit web UI whose database (aitk_db.db) is in DIR,\n"
		"or in the nearest folder at or above the working directory: name, status,\n"
		"step/total, last change, the verdict of the current log (timing letter A-E and\n"
		"first fix) and the first line of the job's info. Failed jobs come first. Open\n"
		"one with aitk:NAME.\n"
		"\n"
		"  --aitk DIR  the ai-toolkit folder\n"
		"  --json      a list of objects: name, status, step, total_steps, updated_at,\n"
		"              info, log, oom (null without a log), timing (its name, e.g.\n"
		"              first_steps), timing_letter (A-E), first_fix\n"
		"  --names     only the names, one per line (for shell completion); into a pipe\n"
		"              or a file a name holding a control character is left out (said\n"
		"              on standard error): --json gives every name exactly\n"
		"\n"
		"Exit status: 0 success, 64 usage, 65 not the web UI's database, 66 no database.\n"),
	      fp);
}

static void first_line(const char *s, char *out, size_t size)
{
	if (!s)
		s = "";
	size_t n = strcspn(s, "\r\n");
	text_sanitize(s, n, out, size);
}

static void pad_print(const char *s, int cells)
{
	int used = 0;
	size_t n = text_fit(s, strlen(s), cells, &used);
	printf("%.*s%*s", (int)n, s, cells - used + 2, "");
}

/* The wider of w and the cells of s plus `extra`. */
static int cell_max(int w, const char *s, int extra)
{
	int c = text_width(s, strlen(s)) + extra;
	return c > w ? c : w;
}

/* `jobs --names`. On a terminal every name is shown as shown_name() makes it. Into a pipe or a
 * file (a completion, a script) a name is written exactly as stored, so that aitk:NAME opens it,
 * and a name that would not come back the same (a control character: a newline would split
 * it over two lines, an escape sequence would drive the terminal a completion lists it on) is
 * left out and named on stderr; --json carries every name exactly. */
static int print_names(const struct aitk_job *rows, size_t n, bool tty)
{
	bool told = false;
	for (size_t i = 0; i < n; i++) {
		const char *name = rows[i].name ? rows[i].name : "";
		size_t len = strlen(name), size = 4 * len + 1; /* \xNN: four bytes for one */
		char *vis = malloc(size);
		if (!vis)
			return ERR_SOFTWARE;
		size_t vn = text_visible_cell(name, len, vis, size);
		bool same = vn == len && memcmp(vis, name, len) == 0;
		if (tty || same) {
			puts(tty ? vis : name);
		} else {
			if (!told)
				fprintf(stderr, "%s\n",
					_("oomfix jobs --names: left out these names, which hold a control "
					  "character (a newline, a TAB, an escape sequence) a list of one "
					  "name a line cannot carry; oomfix jobs --json gives them exactly:"));
			told = true;
			fprintf(stderr, "  %s\n", vis);
		}
		free(vis);
	}
	return ERR_OK;
}

static int open_db(struct aitk_db **db, struct err *e)
{
	char *root = NULL;
	int rc = aitkdb_find(source_aitk_dir(), &root, e);
	if (rc == ERR_OK)
		rc = aitkdb_open(root, db, e);
	free(root);
	return rc;
}

enum jobs_form { JOBS_TABLE, JOBS_JSON, JOBS_NAMES };

/* Reads the options of `oomfix jobs` into *form: -1 to go on, else the exit status (help,
 * usage). */
static int jobs_options(int argc, char **argv, enum jobs_form *form)
{
	static const struct option opts[] = {
		{ "aitk", required_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ "names", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool json = false, names = false;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'a': source_set_aitk_dir(optarg); break;
		case 'j': json = true; break;
		case 'n': names = true; break;
		case 'h': jobs_help(stdout); return 0;
		default:
			fprintf(stderr, _("oomfix jobs: unknown or incomplete option '%s'\n"),
				argv[optind - 1]);
			return ERR_USAGE;
		}
	}
	if (optind != argc || (json && names)) {
		fprintf(stderr, "%s\n", _("usage: oomfix jobs [--aitk DIR] [--json | --names]"));
		return ERR_USAGE;
	}
	*form = json ? JOBS_JSON : names ? JOBS_NAMES : JOBS_TABLE;
	return -1;
}

/* What the table and the JSON say of one job besides its row: the verdict of its current log
 * (its errors go to stderr), the last change in ISO 8601 ("" when not known), the info's first
 * line. */
struct job_seen {
	char *log;
	struct source_verdict v;
	char when[40];
	char info[512];
};

static void job_see(const struct aitk_db *db, const struct aitk_job *r, struct job_seen *s)
{
	if (asprintf(&s->log, "%s/%s/log.txt", aitkdb_training_folder(db), r->name) < 0)
		s->log = NULL;
	struct err ve;
	err_clear(&ve);
	const char *cfg = r->job_config ? r->job_config : "";
	char label[300];
	snprintf(label, sizeof label, "aitk:%s", SHOWN_NAME(r->name));
	if (source_verdict_of(label, cfg, strlen(cfg), s->log, &s->v, &ve) != ERR_OK)
		err_print(&ve, stderr);
	s->when[0] = '\0';
	if (r->updated_ms >= 0)
		aitkdb_iso8601(r->updated_ms, s->when, sizeof s->when);
	first_line(r->info, s->info, sizeof s->info);
}

static void json_opt_count(struct json *js, const char *key, long long v)
{
	json_key(js, key);
	if (v >= 0)
		json_int(js, v);
	else
		json_null(js);
}

static void jobs_json_row(struct json *js, const struct aitk_job *r, const struct job_seen *s)
{
	json_obj_begin(js);
	json_key(js, "name");
	json_str(js, r->name);
	json_key(js, "status");
	json_str(js, r->status);
	json_opt_count(js, "step", r->step);
	json_opt_count(js, "total_steps", r->total_steps);
	json_key(js, "updated_at");
	json_str(js, s->when[0] ? s->when : NULL);
	json_key(js, "info");
	json_str(js, r->info);
	json_key(js, "log");
	json_str(js, s->v.have_log ? s->log : NULL);
	json_key(js, "oom");
	if (s->v.have_log)
		json_bool(js, s->v.oom);
	else
		json_null(js); /* no log: nothing is known */
	diag_json_timing(js, s->v.when, true);
	json_key(js, "first_fix");
	json_str(js, s->v.first_fix);
	json_obj_end(js);
}

/* The table's columns in cells, each followed by two spaces but the last. */
struct jobs_cols {
	int name, status, step, updated, verdict, info; /* info 0: no INFO column */
};

/* Fits the columns, as wide as their longest text, to a terminal of `width` cells (E17; 0: a
 * pipe, which keeps them whole, INFO at most 60). When they do not fit, UPDATED drops its year,
 * INFO goes first (the UI's detail line has it), then NAME gives up its middle (not below 12
 * cells); STATUS, STEP and VERDICT keep their width. */
static void jobs_fit(int width, struct jobs_cols *c)
{
	if (c->info > 60)
		c->info = 60;
	if (width <= 0)
		return;
	int fixed = c->status + 2 + c->step + 2 + c->verdict + 2;
	if (fixed + c->updated + 2 + c->name + 2 + c->info >= width)
		c->updated = 11; /* "12-07 23:57" */
	int room = width - 1 - fixed - (c->updated + 2); /* the last column is left free */
	if (c->name + 2 + c->info > room)
		c->info = room - (c->name + 2) >= 12 ? room - (c->name + 2) : 0;
	if (c->info == 0 && c->name > room)
		c->name = room < 12 ? 12 : room;
}

/* A name as the table shows it in `cells`: its middle cut, marked, or its end where the middle
 * is what tells it from another of `names` (E16). */
static void name_cell(const char *name, const char *const *names, size_t n, int cells, char *out,
		      size_t size)
{
	const char *cs = nl_langinfo(CODESET);
	text_cut_apart(name, names, n, cells, cs && !strcmp(cs, "UTF-8") ? "\u2026" : "~", out, size);
}

/* A row's VERDICT: "no log", "no OOM", or the timing's letter and the first change. */
static void verdict_cell(const struct job_seen *s, char *buf, size_t size)
{
	if (!s->v.have_log)
		snprintf(buf, size, "%s", _("no log"));
	else if (!s->v.oom)
		snprintf(buf, size, "%s", _("no OOM"));
	else
		snprintf(buf, size, "%c %s", s->v.timing ? s->v.timing : '?', s->v.first_fix ? s->v.first_fix
			 : plan_decision_word(&(struct plan_decision){ .what = s->v.next,
								  .fix = FIX_NONE }));
}

static void step_cell(const struct aitk_job *r, char *buf, size_t size)
{
	if (r->total_steps >= 0)
		snprintf(buf, size, "%lld/%lld", r->step < 0 ? 0 : r->step, r->total_steps);
	else
		snprintf(buf, size, "%lld", r->step < 0 ? 0 : r->step);
}

static void jobs_table_row(const struct aitk_job *r, struct job_seen *s, const struct jobs_cols *c,
			   const char *const *names, size_t n)
{
	char full[256], name[300], step[48], verdict[96];
	shown_name(r->name, full, sizeof full);
	name_cell(full, names, n, c->name, name, sizeof name);
	step_cell(r, step, sizeof step);
	verdict_cell(s, verdict, sizeof verdict);
	/* "2026-08-21 13:31" reads faster in a table than the full ISO form; "08-21 13:31" where
	 * the terminal is narrow. */
	const char *when = "-";
	if (s->when[0]) {
		s->when[10] = ' ';
		s->when[16] = '\0';
		when = c->updated < 16 ? s->when + 5 : s->when;
	}
	pad_print(name, c->name);
	pad_print(r->status ? SHOWN_NAME(r->status) : "?", c->status);
	pad_print(step, c->step);
	pad_print(when, c->updated);
	if (c->info <= 0) { /* no INFO: nothing after the verdict, not even its padding */
		printf("%s\n", verdict);
		return;
	}
	pad_print(verdict, c->verdict);
	int used;
	size_t k = text_fit(s->info, strlen(s->info), c->info, &used);
	printf("%.*s\n", (int)k, s->info);
}

/* The table: every job seen first, so that each column is as wide as its longest text, then
 * fitted to the terminal (a name is cut there only, never into a pipe). */
static void jobs_table(const struct aitk_db *db, const struct aitk_job *rows, size_t n)
{
	struct job_seen *seen = calloc(n, sizeof *seen);
	char **names = calloc(n, sizeof *names);
	if (!seen || !names) {
		free(seen);
		free(names);
		fprintf(stderr, "oomfix jobs: %s\n", strerror(ENOMEM));
		return;
	}
	struct jobs_cols c = { cell_max(0, _("NAME"), 0), cell_max(9, _("STATUS"), 0),
			       cell_max(0, _("STEP"), 0), cell_max(16, _("UPDATED"), 0),
			       cell_max(0, _("VERDICT"), 0), 0 };
	for (size_t i = 0; i < n; i++) {
		char buf[256];
		job_see(db, &rows[i], &seen[i]);
		verdict_cell(&seen[i], buf, sizeof buf);
		c.verdict = cell_max(c.verdict, buf, 0);
		shown_name(rows[i].name, buf, sizeof buf);
		c.name = cell_max(c.name, buf, 0);
		names[i] = strdup(buf);
		step_cell(&rows[i], buf, sizeof buf);
		c.step = cell_max(c.step, buf, 0);
		c.info = cell_max(c.info, seen[i].info, 0);
	}
	if (c.info)
		c.info = cell_max(c.info, _("INFO"), 0);
	jobs_fit(cli_tty_columns(), &c); /* 0 into a pipe: rows stay whole */
	pad_print(_("NAME"), c.name);
	pad_print(_("STATUS"), c.status);
	pad_print(_("STEP"), c.step);
	pad_print(_("UPDATED"), c.updated);
	if (c.info > 0) {
		pad_print(_("VERDICT"), c.verdict);
		printf("%s\n", _("INFO"));
	} else {
		printf("%s\n", _("VERDICT"));
	}
	for (size_t i = 0; i < n; i++)
		jobs_table_row(&rows[i], &seen[i], &c, (const char *const *)names, n);
	for (size_t i = 0; i < n; i++) {
		free(seen[i].log);
		free(names[i]);
	}
	free(seen);
	free(names);
}

/* The jobs as a table or a JSON list, in the order given. */
static void jobs_list(const struct aitk_db *db, const struct aitk_job *rows, size_t n, bool json)
{
	if (!json) {
		if (n == 0)
			printf("%s\n", _("No jobs in this database."));
		else
			jobs_table(db, rows, n);
		return;
	}
	struct json js;
	setlocale(LC_MESSAGES, "C");
	json_init(&js, stdout, true);
	json_arr_begin(&js);
	for (size_t i = 0; i < n; i++) {
		struct job_seen s;
		job_see(db, &rows[i], &s);
		jobs_json_row(&js, &rows[i], &s);
		free(s.log);
	}
	json_arr_end(&js);
	json_finish(&js);
}

int cmd_jobs(int argc, char **argv)
{
	enum jobs_form form;
	int rc = jobs_options(argc, argv, &form);
	if (rc >= 0)
		return rc;
	struct err e;
	err_clear(&e);
	struct aitk_db *db = NULL;
	struct aitk_job *rows = NULL;
	size_t n = 0;
	rc = open_db(&db, &e);
	if (rc == ERR_OK)
		rc = aitkdb_list(db, &rows, &n, &e);
	if (rc) {
		aitkdb_close(&db);
		return fail(&e);
	}
	/* The same order as the table, so a completion or a script reads the jobs as listed. */
	aitkdb_sort_failed_first(rows, n);
	if (form == JOBS_NAMES)
		rc = print_names(rows, n, isatty(STDOUT_FILENO));
	else
		jobs_list(db, rows, n, form == JOBS_JSON);
	if (rc) {
		aitkdb_rows_free(rows, n);
		aitkdb_close(&db);
		err_set(&e, rc, NULL, 0, 0, "%s", _("out of memory"));
		return fail(&e);
	}
	aitkdb_rows_free(rows, n);
	aitkdb_close(&db);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		err_set(&e, ERR_IOERR, NULL, 0, 0, "%s", _("cannot write to standard output"));
		return fail(&e);
	}
	return 0;
}

/* ---- queue ------------------------------------------------------------------------------------- */

int cmd_queue(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(_("Usage: oomfix queue [--aitk DIR] aitk:NAME\n"
			"\n"
			"Queues the web UI job NAME again, as the UI's start button does (and starts its\n"
			"GPU's queue). A running job is refused: stop it first. A job already queued\n"
			"is left as it is, so it keeps its place in the queue.\n"
			"\n"
			"Exit status: 0 queued (or queued already), 64 usage, 66 no such job, 75 the\n"
			"job is running or the database stayed locked.\n"), stdout);
		return 0;
	}
	if (argc == 2 && names_aitk_job(argv[1])) {
		/* A web UI job's name without "aitk:": say the argument that works. */
		fprintf(stderr, _("oomfix queue: '%s' needs the aitk: prefix; did you mean "
				  "'aitk:%s'?\n"), SHOWN_NAME(argv[1]), SHOWN_NAME(argv[1]));
		return ERR_USAGE;
	}
	if (argc != 2 || !source_is_aitk_arg(argv[1])) {
		fprintf(stderr, "%s\n", _("usage: oomfix queue [--aitk DIR] aitk:NAME"));
		return ERR_USAGE;
	}
	struct err e;
	err_clear(&e);
	struct source *s = NULL;
	int rc = source_open(argv[1], &s, &e);
	if (rc)
		return fail(&e);
	struct aitk_db *db = NULL;
	char *was = NULL;
	const char *name = argv[1] + strlen(SOURCE_AITK_PREFIX);
	rc = open_db(&db, &e);
	if (rc == ERR_OK)
		rc = aitkdb_queue(db, name, &was, &e);
	if (rc == ERR_OK && aitkdb_was_queued(was))
		fprintf(stderr, _("%s: already queued; left as it is, in its place in the queue\n"),
			SHOWN_NAME(source_label(s)));
	else if (rc == ERR_OK)
		fprintf(stderr, _("%s: queued (it was %s)\n"), SHOWN_NAME(source_label(s)),
			was ? SHOWN_NAME(was) : "?");
	else
		fail(&e);
	free(was);
	aitkdb_close(&db);
	source_free(&s);
	return rc;
}

/* ---- restore ----------------------------------------------------------------------------------- */

/* The original a retry kept (retry_original_name): its text, malloc'd. */
static int read_original(const char *path, char **text, size_t *len, struct err *e)
{
	struct doc *d = NULL;
	int rc = path ? doc_load_file(path, &d, e) : err_set(e, ERR_SOFTWARE, NULL, 0, 0, "out of memory");
	if (rc == ERR_NOINPUT)
		err_set(e, rc, path, 0, 0, "%s", _("no original to restore: oomfix retry keeps one when it "
						   "first changes the job"));
	const char *t = rc ? NULL : doc_text(d, len);
	if (t && !(*text = malloc(*len + 1)))
		rc = err_set(e, ERR_SOFTWARE, NULL, 0, 0, "out of memory");
	else if (t)
		memcpy(*text, t, *len), (*text)[*len] = 0;
	doc_free(&d);
	return rc;
}

int cmd_restore(int argc, char **argv)
{
	bool force = false;
	int i = 1;
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(_("Usage: oomfix restore [--force] [--first] JOB\n"
			"\n"
			"Puts the previous version of JOB back (JOB~ for a file; for aitk:NAME the\n"
			"job_config.json~ kept in the job's run folder), through the same safe save; the\n"
			"version it replaces becomes the previous one, so restoring twice undoes it.\n"
			"\n"
			"  --force   overwrite even if JOB changed since it was read\n"
			"  --first   put back the job as it was before oomfix retry first changed it\n"
			"            (kept in JOB.oomfix-runs/0.yaml, or 0.json), however many fixes\n"
			"            the retries saved since\n"
			"\n"
			"Exit status: 0 restored, 64 usage, 65 the previous version is not a job,\n"
			"66 no previous version, 75 JOB is running or changed meanwhile.\n"), stdout);
		return 0;
	}
	bool first = false;
	for (; i < argc && (!strcmp(argv[i], "--force") || !strcmp(argv[i], "--first")); i++) {
		if (!strcmp(argv[i], "--force"))
			force = true;
		else
			first = true;
	}
	if (argc - i != 1) {
		fprintf(stderr, "%s\n", _("usage: oomfix restore [--force] [--first] JOB"));
		return ERR_USAGE;
	}
	struct err e;
	err_clear(&e);
	struct source *s = NULL;
	struct doc *cur = NULL, *prev = NULL;
	struct job *pj = NULL;
	char *text = NULL;
	size_t len = 0;
	int rc = cli_open_job(argv[i], &s, &cur, NULL, &e);
	if (rc)
		return fail(&e);
	char *bak = first ? retry_original_name(s) : source_backup_name(s);
	if (first)
		rc = read_original(bak, &text, &len, &e);
	else
		rc = source_read_backup(s, &text, &len, &e);
	if (rc != ERR_OK || (rc = doc_load(bak ? bak : source_label(s), text, len, &prev, &e)) != ERR_OK ||
	    (rc = job_from_doc(prev, &pj, &e)) != ERR_OK) {
		fail(&e);
		goto done;
	}
	size_t clen;
	const char *ctext = source_text(s, &clen);
	if (clen == len && !memcmp(ctext, text, len)) {
		fprintf(stderr, _("%s: already the same as the previous version; nothing to do\n"),
			SHOWN_NAME(source_label(s)));
		goto done;
	}
	if ((rc = source_save(s, text, len, force ? SOURCE_FORCE : 0, &e)) != ERR_OK) {
		cli_save_failed(s, &e);
		goto done;
	}
	char **changes;
	size_t nch = doc_changes(cur, prev, &changes);
	const char *what = "restore";
	struct err je;
	err_clear(&je);
	bool jok = source_journal(s, &what, 1, (const char *const *)changes, nch, &je) == ERR_OK;
	if (!jok)
		err_print(&je, stderr);
	if (first)
		fprintf(stderr, _("%s: the job as it was before oomfix retry first changed it is back "
				  "(from %s); the values put back:\n"), SHOWN_NAME(source_label(s)),
			SHOWN_NAME(bak));
	else
		fprintf(stderr, _("%s: previous version restored; the values put back:\n"),
			SHOWN_NAME(source_label(s)));
	for (size_t k = 0; k < nch; k++)
		fprintf(stderr, "  %s\n", changes[k]);
	doc_changes_free(changes, nch);
	char *msg = source_saved_message(s, jok);
	if (msg)
		fprintf(stderr, "%s\n", msg);
	free(msg);
	fprintf(stderr, _("The version it replaced is now the previous one: a second 'oomfix restore "
			  "%s' undoes this restore.\n"), argv[i]);
done:
	free(bak);
	free(text);
	job_free(&pj);
	doc_free(&prev);
	doc_free(&cur);
	source_free(&s);
	return rc;
}

/* ---- runs -------------------------------------------------------------------------------------- */

static void iso_time(time_t t, char *buf, size_t size)
{
	if (t <= 0) {
		buf[0] = '\0';
		return;
	}
	aitkdb_iso8601((long long)t * 1000, buf, size);
}

/* "2026-12-03 08:05" in local time, or "?" */
static void short_time(time_t t, char *buf, size_t size)
{
	struct tm tm;
	if (t <= 0 || !localtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, size, "?");
}

static void json_entries(struct json *js, const struct save_journal_entry *const *v, size_t n)
{
	json_arr_begin(js);
	for (size_t i = 0; i < n; i++) {
		char when[40];
		iso_time(v[i]->when, when, sizeof when);
		json_obj_begin(js);
		json_key(js, "saved_at");
		json_str(js, when[0] ? when : NULL);
		json_key(js, "fixes");
		json_arr_begin(js);
		for (size_t k = 0; k < v[i]->nfixes; k++)
			json_str(js, v[i]->fixes[k]);
		json_arr_end(js);
		json_key(js, "changes");
		json_arr_begin(js);
		for (size_t k = 0; k < v[i]->nchanges; k++)
			json_str(js, v[i]->changes[k]);
		json_arr_end(js);
		json_obj_end(js);
	}
	json_arr_end(js);
}

static void runs_json(const struct trail *t)
{
	struct json js;
	json_init(&js, stdout, true);
	json_arr_begin(&js);
	for (size_t i = 0; i < t->n; i++) {
		const struct trail_run *r = &t->runs[i];
		char when[40];
		iso_time(r->when, when, sizeof when);
		json_obj_begin(&js);
		json_key(&js, "run");
		if (r->number == TRAIL_CURRENT)
			json_null(&js);
		else
			json_int(&js, r->number);
		json_key(&js, "log");
		json_str(&js, r->log);
		json_key(&js, "written_at");
		json_str(&js, when[0] ? when : NULL);
		json_key(&js, "oom");
		if (r->v.have_log)
			json_bool(&js, r->v.oom);
		else
			json_null(&js);
		diag_json_timing(&js, r->v.when, true);
		json_key(&js, "phase");
		json_str(&js, r->v.oom ? diag_phase_name((enum diag_phase)r->v.phase) : NULL);
		json_key(&js, "failed_step");
		if (r->v.failed_step >= 0)
			json_int(&js, r->v.failed_step);
		else
			json_null(&js);
		/* E19: run.py's summary comes after a failure too: the run ended, it did not
		 * necessarily finish; "stopped" is a run stopped before its end */
		json_key(&js, "ended");
		json_bool(&js, r->v.finished);
		json_key(&js, "stopped");
		json_bool(&js, r->v.stopped);
		json_key(&js, "saved_after");
		json_entries(&js, r->after, r->nafter);
		json_key(&js, "fix_if_run_now");
		json_str(&js, r->v.first_fix);
		json_obj_end(&js);
	}
	json_arr_end(&js);
	json_finish(&js);
}

static void runs_text(const struct source *s, const struct trail *t)
{
	if (!t->n) {
		printf(_("%s: no run logs yet in %s\n"), SHOWN_NAME(source_label(s)),
		       SHOWN_NAME(t->where));
		return;
	}
	printf(_("%s: the trail of tries, newest first (run logs: %zu), each run with what was "
		 "saved to the job after it (read from its change journal)\n"),
	       SHOWN_NAME(source_label(s)), t->n);
	for (size_t i = 0; i < t->n; i++) {
		const struct trail_run *r = &t->runs[i];
		char when[40], verdict[200], fixes[400];
		short_time(r->when, when, sizeof when);
		trail_verdict_words(r, verdict, sizeof verdict);
		trail_fixes_words(r, fixes, sizeof fixes);
		putchar('\n');
		if (r->number == TRAIL_CURRENT)
			printf(_("current run, log written %s: %s\n"), when, verdict);
		else
			printf(_("run %ld, log written %s: %s\n"), r->number, when, verdict);
		if (r->nafter) {
			char saved[40];
			short_time(r->after[r->nafter - 1]->when, saved, sizeof saved);
			if (i == 0)
				printf(_("  then saved: %s (%s; not run yet)\n"), fixes, saved);
			else
				printf(_("  then saved: %s (%s)\n"), fixes, saved);
		} else if (i > 0) {
			printf("  %s\n", _("then saved: nothing (the next run was of the same job)"));
		}
		printf(_("  log: %s\n"), r->log);
	}
	if (t->nbefore)
		printf(ngettext("\n(%zu earlier journal entry comes before the oldest run)\n",
				"\n(%zu earlier journal entries come before the oldest run)\n",
				t->nbefore),
		       t->nbefore);
}

int cmd_runs(int argc, char **argv)
{
	bool json = false;
	const char *arg = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(_("Usage: oomfix runs [--aitk DIR] [--json] JOB\n"
				"\n"
				"The trail of tries of a job, newest first: for a web UI job (aitk:NAME) its\n"
				"current log.txt and the earlier runs' logs/<n>_log.txt; for a job file the\n"
				"logs oomfix retry kept in JOB.oomfix-runs/<n>.log. Each run is numbered like\n"
				"its file and shows when its log was written, its verdict (timing letter A-E\n"
				"and the phase it failed in) and the fixes saved to the job after it, with\n"
				"their time, from the change journal. It is a history: nothing is\n"
				"re-diagnosed against the job as it is now (--json adds that as\n"
				"fix_if_run_now).\n"
				"\n"
				"  --json   a list of objects: run (null for the current log.txt), log,\n"
				"           written_at, oom, timing, phase, failed_step, finished,\n"
				"           saved_after (saved_at, fixes, changes), fix_if_run_now\n"
				"\n"
				"Exit status: 0 success, 64 usage, 65 bad job, 66 no such job.\n"), stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--json"))
			json = true;
		else if (!arg && argv[i][0] != '-')
			arg = argv[i];
		else
			arg = NULL, i = argc;
	}
	if (!arg) {
		fprintf(stderr, "%s\n", _("usage: oomfix runs [--aitk DIR] [--json] JOB"));
		return ERR_USAGE;
	}
	struct err e;
	err_clear(&e);
	struct source *s = NULL;
	int orc = source_open(arg, &s, &e);
	if (orc) {
		hint_aitk_name(arg, orc, &e);
		return fail(&e);
	}
	if (json)
		setlocale(LC_MESSAGES, "C");
	struct trail t;
	int rc = trail_build(s, &t, &e);
	if (rc) {
		source_free(&s);
		return fail(&e);
	}
	if (json)
		runs_json(&t);
	else
		runs_text(s, &t);
	trail_free(&t);
	source_free(&s);
	return fflush(stdout) != 0 || ferror(stdout) ? ERR_IOERR : 0;
}
