/* source.c — see source.h. */
#include "oomfix/source.h"
#include "oomfix/aitkdb.h"
#include "oomfix/buf.h"
#include "oomfix/diag.h"
#include "oomfix/diff.h"
#include "oomfix/doc.h"
#include "oomfix/i18n.h"
#include "oomfix/job.h"
#include "oomfix/json.h"
#include "oomfix/text.h"
#include "oomfix/plan.h"
#include "oomfix/save.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum source_kind { SOURCE_FILE, SOURCE_AITK };

struct source {
	enum source_kind kind;
	char *text;
	size_t len;
	char *label, *path;
	struct save_stamp stamp; /* file */
	struct aitk_db *db;      /* database job */
	struct aitk_job row;
	char *run_dir, *log;
};

static char *aitk_dir;

void source_set_aitk_dir(const char *dir)
{
	free(aitk_dir);
	aitk_dir = dir ? strdup(dir) : NULL;
}

const char *source_aitk_dir(void)
{
	return aitk_dir;
}

bool source_is_aitk_arg(const char *arg)
{
	return arg && !strncmp(arg, SOURCE_AITK_PREFIX, strlen(SOURCE_AITK_PREFIX));
}

static int oom(struct err *e)
{
	return err_set(e, ERR_SOFTWARE, NULL, 0, 0, "%s", _("out of memory"));
}

static char *cat3(const char *a, const char *b, const char *c)
{
	size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
	char *r = malloc(la + lb + lc + 1);
	if (r) {
		memcpy(r, a, la);
		memcpy(r + la, b, lb);
		memcpy(r + la + lb, c, lc + 1);
	}
	return r;
}

static int open_file(struct source *s, const char *path, struct err *e)
{
	/* The stamp is taken before reading, so a change made while we work is noticed at save. */
	int rc = save_stamp(path, &s->stamp, e);
	if (rc)
		return rc;
	struct doc *d = NULL;
	if ((rc = doc_load_file(path, &d, e)) != ERR_OK)
		return rc;
	size_t len;
	const char *t = doc_text(d, &len);
	s->text = malloc(len + 1);
	if (s->text) {
		memcpy(s->text, t, len);
		s->text[len] = '\0';
		s->len = len;
	}
	doc_free(&d);
	if (!s->text || !(s->label = strdup(path)))
		return oom(e);
	/* A symlinked job is saved through to its target (SPEC §5): the backup, the journal and the
	 * emergency save go beside the target too, where the messages say they are. */
	struct stat ls;
	if (lstat(path, &ls) == 0 && S_ISLNK(ls.st_mode))
		s->path = realpath(path, NULL);
	if (!s->path && !(s->path = strdup(path)))
		return oom(e);
	return ERR_OK;
}

/* A JSON error at byte `off` of a one-line config, as line and column. */
static void json_where(const char *t, size_t off, int *line, int *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off && t[i]; i++) {
		if (t[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

static int open_aitk(struct source *s, const char *name, struct err *e)
{
	if (!*name)
		return err_set(e, ERR_USAGE, NULL, 0, 0, "%s",
			       _("aitk: needs a job name, e.g. aitk:my_lora (oomfix jobs lists them)"));
	char *root = NULL;
	int rc = aitkdb_find(aitk_dir, &root, e);
	if (rc)
		return rc;
	rc = aitkdb_open(root, &s->db, e);
	if (rc) {
		char *db = cat3(root, "/", AITKDB_FILE);
		if (db)
			aitkdb_about_job(db, name, e, rc);
		free(db);
		free(root);
		return rc;
	}
	free(root);
	if ((rc = aitkdb_get(s->db, name, &s->row, e)) != ERR_OK)
		return rc;
	if (!(s->label = cat3(SOURCE_AITK_PREFIX, name, "")) ||
	    !(s->run_dir = cat3(aitkdb_training_folder(s->db), "/", name)) ||
	    !(s->path = cat3(s->run_dir, "/", "job_config.json")) ||
	    !(s->log = cat3(s->run_dir, "/", "log.txt")))
		return oom(e);
	const char *cfg = s->row.job_config ? s->row.job_config : "";
	size_t off = 0;
	char shown[256];
	text_visible(s->label, strlen(s->label), shown, sizeof shown);
	if (!json_check(cfg, strlen(cfg), &off)) {
		int line, col;
		json_where(cfg, off, &line, &col);
		return err_set(e, ERR_DATA, shown, line, col, _("job_config is not valid JSON (in %s)"),
			       aitkdb_path(s->db));
	}
	/* The web UI stores an object; an array or a bare value is no job it could have written. */
	const char *first = cfg + strspn(cfg, " \t\n\r");
	if (*first != '{') {
		int line, col;
		json_where(cfg, (size_t)(first - cfg), &line, &col);
		return err_set(e, ERR_DATA, shown, line, col,
			       _("job_config is not a JSON object (in %s)"), aitkdb_path(s->db));
	}
	if (!(s->text = strdup(cfg)))
		return oom(e);
	s->len = strlen(cfg);
	return ERR_OK;
}

int source_open(const char *arg, struct source **out, struct err *e)
{
	*out = NULL;
	struct source *s = calloc(1, sizeof *s);
	if (!s)
		return oom(e);
	int rc;
	if (source_is_aitk_arg(arg)) {
		s->kind = SOURCE_AITK;
		rc = open_aitk(s, arg + strlen(SOURCE_AITK_PREFIX), e);
	} else {
		s->kind = SOURCE_FILE;
		rc = open_file(s, arg, e);
	}
	if (rc) {
		source_free(&s);
		return rc;
	}
	*out = s;
	return ERR_OK;
}

void source_free(struct source **s)
{
	if (!s || !*s)
		return;
	struct source *p = *s;
	free(p->text);
	free(p->label);
	free(p->path);
	free(p->run_dir);
	free(p->log);
	aitkdb_job_clear(&p->row);
	aitkdb_close(&p->db);
	free(p);
	*s = NULL;
}

const char *source_text(const struct source *s, size_t *len)
{
	if (len)
		*len = s->len;
	return s->text;
}

const char *source_label(const struct source *s)
{
	return s->label;
}

const char *source_path(const struct source *s)
{
	return s->path;
}

const char *source_log(const struct source *s)
{
	return s->log;
}

const char *source_run_dir(const struct source *s)
{
	return s->run_dir;
}

const struct aitk_job *source_row(const struct source *s)
{
	return s->kind == SOURCE_AITK ? &s->row : NULL;
}

int source_gpu(const struct source *s)
{
	const struct aitk_job *row = source_row(s);
	if (!row || !row->gpu_ids)
		return -1;
	char *end;
	long v = strtol(row->gpu_ids, &end, 10);
	return end != row->gpu_ids && v >= 0 && v < 1024 ? (int)v : -1;
}

const struct save_stamp *source_stamp(const struct source *s)
{
	return s->kind == SOURCE_FILE ? &s->stamp : NULL;
}

bool source_is_json(const struct source *s)
{
	if (s->kind == SOURCE_AITK)
		return true;
	size_t i = 0;
	while (i < s->len && strchr(" \t\r\n", s->text[i]) && s->text[i])
		i++;
	return i < s->len && (s->text[i] == '{' || s->text[i] == '[') &&
	       json_check(s->text, s->len, NULL);
}

int source_changed(struct source *s, bool *changed, char *why, size_t whysize, struct err *e)
{
	*changed = false;
	if (why && whysize)
		why[0] = '\0';
	if (s->kind == SOURCE_FILE) {
		struct save_stamp now;
		int rc = save_stamp(s->path, &now, e);
		if (rc)
			return rc;
		*changed = !save_stamp_same(&now, &s->stamp);
		if (*changed && why)
			snprintf(why, whysize, _("%s changed on disk since it was read"), s->path);
		return ERR_OK;
	}
	struct aitk_job now;
	int rc = aitkdb_get(s->db, s->row.name, &now, e);
	if (rc)
		return rc;
	if (now.status && !strcmp(now.status, "running")) {
		*changed = true;
		if (why)
			snprintf(why, whysize, _("%s is running now"), s->label);
	} else if (!now.job_config || strcmp(now.job_config, s->text)) {
		*changed = true;
		if (why)
			snprintf(why, whysize, _("%s was changed in the database since it was read"),
				 s->label);
	}
	aitkdb_job_clear(&now);
	return ERR_OK;
}

char *source_backup_name(const struct source *s)
{
	return cat3(s->path, "~", "");
}

char *source_journal_name(const struct source *s)
{
	return save_journal_name(s->path);
}

int source_journal(const struct source *s, const char *const *fixes, size_t nfixes,
		   const char *const *changes, size_t nchanges, struct err *e)
{
	return source_journal_note(s, NULL, fixes, nfixes, changes, nchanges, e);
}

int source_journal_note(const struct source *s, const char *note, const char *const *fixes,
			size_t nfixes, const char *const *changes, size_t nchanges, struct err *e)
{
	/* a web UI job's entry names its run by the log's identity: the worker moves log.txt
	 * to logs/<n>_log.txt when it starts the next run (E4) */
	return save_journal_run(s->path, s->kind == SOURCE_AITK ? s->label : NULL, note,
				s->kind == SOURCE_AITK ? source_log(s) : NULL, fixes, nfixes, changes,
				nchanges, e);
}

bool source_sniff_job(const char *path)
{
	char buf[8192];
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return false;
	size_t n = fread(buf, 1, sizeof buf - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	if (memchr(buf, '\0', n))
		return false;
	for (const char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, "job:", 4) || !strncmp(p, "config:", 7))
			return true;
	const char *b = buf + strspn(buf, " \t\r\n");
	return *b == '{' && strstr(b, "\"config\"") != NULL;
}

char *source_where(const struct source *s)
{
	char *out = NULL;
	if (s->kind != SOURCE_AITK)
		return strdup(s->path);
	if (asprintf(&out, _("the web UI database %s (job '%s')"), aitkdb_path(s->db),
		     s->row.name) < 0)
		out = NULL;
	return out;
}

static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash && slash[1] ? slash + 1 : path;
}

static char *saved_message(const struct source *s, bool journal_ok, bool relative)
{
	char *where = source_where(s), *bak = source_backup_name(s);
	char *jour = source_journal_name(s), *out = NULL;
	int k = -1;
	if (where && bak && jour) {
		if (relative && s->kind == SOURCE_AITK && journal_ok)
			k = asprintf(&out, _("Saved into %s; the previous version (%s) and the change "
					     "journal (%s) are beside its log"), where, base_of(bak),
				     base_of(jour));
		else if (s->kind == SOURCE_AITK && journal_ok)
			k = asprintf(&out, _("Saved into %s; previous version in %s, change journal in %s"),
				     where, bak, jour);
		else if (s->kind == SOURCE_AITK)
			k = asprintf(&out, _("Saved into %s; previous version in %s, but the change "
					     "journal %s could not be written"), where, bak, jour);
		else if (journal_ok)
			k = asprintf(&out, _("Saved %s (previous version in %s, change journal in %s)"),
				     where, bak, jour);
		else
			k = asprintf(&out, _("Saved %s (previous version in %s), but the change journal "
					     "%s could not be written"), where, bak, jour);
	}
	if (k < 0)
		out = NULL;
	free(where);
	free(bak);
	free(jour);
	return out;
}

char *source_saved_message(const struct source *s, bool journal_ok)
{
	return saved_message(s, journal_ok, false);
}

char *source_saved_message_short(const struct source *s, bool journal_ok)
{
	return saved_message(s, journal_ok, true);
}

bool source_log_untried(const struct source *s, const char *log, time_t *when)
{
	return source_path_untried(s->path, log, when, NULL, 0);
}

bool source_path_untried(const char *path, const char *log, time_t *when, char *fixes,
			 size_t size)
{
	struct stat st;
	time_t last;

	if (fixes && size)
		fixes[0] = '\0';
	if (!log || stat(log, &st) != 0 || !save_journal_last_fixes(path, &last, fixes, size))
		return false;
	if (when)
		*when = last;
	if (last != st.st_mtim.tv_sec)
		return last > st.st_mtim.tv_sec;
	/* The journal's times are whole seconds; a save and a run's end in the same second (the
	 * retry loop judges a log and saves its fix at once) are told apart by the journal file's
	 * own time, when its last write is that entry's. Otherwise the run counts as newer. */
	struct stat js;
	char *name = save_journal_name(path);
	bool after = name && stat(name, &js) == 0 && js.st_mtim.tv_sec == last &&
		     js.st_mtim.tv_nsec > st.st_mtim.tv_nsec;
	free(name);
	return after;
}

/* The fields the web UI and its worker rely on: a database job never changes them. */
static const char *const protected_paths[] = {
	"config.name",
	"config.process[0].sqlite_db_path",
	"config.process[0].training_folder",
};

static int check_protected(const struct source *s, const char *text, size_t len, struct err *e)
{
	struct doc *a = NULL, *b = NULL;
	int rc = doc_load(s->label, s->text, s->len, &a, e);
	if (rc == ERR_OK)
		rc = doc_load(s->label, text, len, &b, e);
	for (size_t i = 0; rc == ERR_OK && i < sizeof protected_paths / sizeof *protected_paths; i++) {
		const struct doc_node *na = doc_get(a, protected_paths[i]);
		const struct doc_node *nb = doc_get(b, protected_paths[i]);
		if ((na || nb) && !(na && nb && doc_node_equal(na, nb)))
			rc = err_set(e, ERR_DATA, s->label, 0, 0,
				     _("%s cannot be changed in a web UI job (the UI and the trainer "
				       "rely on it)"), protected_paths[i]);
	}
	doc_free(&a);
	doc_free(&b);
	return rc;
}

/* mkdir -p for the run folder of a job that has not run yet; what oomfix makes is the user's
 * alone (0700), as the rest of what it keeps. */
static int make_dirs(const char *dir, struct err *e)
{
	char *p = strdup(dir);
	if (!p)
		return oom(e);
	for (char *q = p + 1;; q++) {
		if (*q == '/' || !*q) {
			char c = *q;
			*q = '\0';
			if (mkdir(p, 0700) != 0 && errno != EEXIST) {
				int rc = err_set(e, ERR_CANTCREAT, p, 0, 0,
						 _("cannot create the job's folder: %s"), strerror(errno));
				free(p);
				return rc;
			}
			*q = c;
			if (!c)
				break;
		}
	}
	free(p);
	return ERR_OK;
}

/* Inside the save transaction: the version being replaced is kept as the backup file first. */
static int keep_previous(void *arg, const char *current, struct err *e)
{
	const struct source *s = arg;
	char *bak = source_backup_name(s);
	if (!bak)
		return oom(e);
	/* Not save_file: that follows a link to its target, which is right for the job the user
	 * named but not for a name oomfix picked in a folder others may write to. */
	int rc = save_private(bak, current, strlen(current), save_mode_for(s->path), e);
	free(bak);
	return rc;
}

int source_save(struct source *s, const char *text, size_t len, unsigned flags, struct err *e)
{
	bool force = flags & SOURCE_FORCE;
	int rc;
	if (s->kind == SOURCE_FILE) {
		rc = save_file(s->path, text, len, &s->stamp, SAVE_BACKUP | (force ? SAVE_FORCE : 0),
			       true, e);
		if (rc)
			return rc;
		struct err ignore;
		if (save_stamp(s->path, &s->stamp, &ignore))
			memset(&s->stamp, 0, sizeof s->stamp);
	} else {
		size_t off = 0;
		if (memchr(text, '\0', len) || !json_check(text, len, &off)) {
			int line, col;
			json_where(text, off, &line, &col);
			return err_set(e, ERR_DATA, s->label, line, col, "%s",
				       _("the new config is not valid JSON; nothing was written"));
		}
		if ((rc = check_protected(s, text, len, e)) != ERR_OK)
			return rc;
		if ((rc = make_dirs(s->run_dir, e)) != ERR_OK)
			return rc;
		char *z = malloc(len + 1);
		if (!z)
			return oom(e);
		memcpy(z, text, len);
		z[len] = '\0';
		rc = aitkdb_save_config(s->db, s->row.name, s->text, z, force, keep_previous, s, e);
		if (rc) {
			free(z);
			return rc;
		}
		free(s->row.job_config);
		s->row.job_config = z;
	}
	char *nt = malloc(len + 1);
	if (!nt)
		return oom(e);
	memcpy(nt, text, len);
	nt[len] = '\0';
	free(s->text);
	s->text = nt;
	s->len = len;
	return ERR_OK;
}

int source_read_backup(const struct source *s, char **text, size_t *len, struct err *e)
{
	*text = NULL;
	*len = 0;
	char *bak = source_backup_name(s);
	if (!bak)
		return oom(e);
	int fd = open(bak, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int rc = err_set(e, ERR_NOINPUT, bak, 0, 0,
				 errno == ENOENT ? _("no previous version to restore (%s)")
						 : _("cannot read the previous version: %s"),
				 strerror(errno));
		free(bak);
		return rc;
	}
	char *buf;
	size_t n;
	int rc = ERR_OK, er = read_all(fd, DOC_MAX_BYTES, &buf, &n);
	if (er == ENOMEM)
		rc = oom(e);
	else if (er == EFBIG)
		rc = err_set(e, ERR_DATA, bak, 0, 0, "%s", _("file too large"));
	else if (er)
		rc = err_set(e, ERR_IOERR, bak, 0, 0, "%s", strerror(er));
	close(fd);
	free(bak);
	if (rc) {
		free(buf);
		return rc;
	}
	*text = buf;
	*len = n;
	return ERR_OK;
}

char *source_diff(const char *label, const char *old, size_t oldlen, const char *new_,
		  size_t newlen, int context)
{
	size_t la = 0, lb = 0;
	char *a = NULL, *b = NULL;
	/* Only when both sides are JSON objects: a YAML file that happens to be a bare number or a
	 * string keeps its own lines. */
	if (oldlen && newlen && memchr(old, '{', oldlen) && memchr(new_, '{', newlen)) {
		a = json_indent(old, oldlen, &la);
		b = a ? json_indent(new_, newlen, &lb) : NULL;
	}
	char *d = a && b ? diff_unified(label, a, la, label, b, lb, context)
			 : diff_unified(label, old, oldlen, label, new_, newlen, context);
	free(a);
	free(b);
	return d;
}

int source_verdict_of(const char *label, const char *text, size_t len, const char *log,
		      struct source_verdict *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	out->failed_step = -1;
	struct stat st;
	if (!log || stat(log, &st) != 0 || !S_ISREG(st.st_mode))
		return ERR_OK;
	struct doc *d = NULL;
	struct job *j = NULL;
	/* A job that cannot be read still gets the log's verdict, without the job's help. */
	if (doc_load(label, text, len, &d, e) != ERR_OK || job_from_doc(d, &j, e) != ERR_OK)
		err_clear(e);
	struct diag_job_info info = {
		.name = j ? j->name : NULL,
		.kind = j ? (int)j->kind : 0,
		.conservative = j ? (job_is_conservative(j) ? 1 : 0) : -1,
	};
	struct diag_result *r = malloc(sizeof *r);
	int rc = r ? diag_file(log, &info, r, e) : oom(e);
	if (rc == ERR_OK) {
		struct plan p;
		plan_build(j, r, &p);
		out->have_log = true;
		out->oom = r->oom;
		out->when = r->oom ? r->timing : DIAG_T_NONE;
		out->timing = diag_timing_letter(out->when);
		/* the one decision's first change (SPEC §3.4), as every other front end shows it */
		struct plan_decision dec = plan_decide(&p, r, false);
		enum fix_id first = plan_decision_first(&dec);
		out->first_fix = first != FIX_NONE ? fix_name(first) : NULL;
		out->next = (int)dec.what;
		out->phase = r->oom ? (int)r->phase : 0;
		out->failed_step = r->oom ? r->failed_step : -1;
		out->finished = r->run_ended;
		out->stopped = r->stopped;
		out->last_step = r->now_step;
	}
	free(r);
	job_free(&j);
	doc_free(&d);
	return rc;
}

struct run_ent {
	long n;
	char *path;
};

static int cmp_run(const void *a, const void *b)
{
	const struct run_ent *x = a, *y = b;
	return x->n < y->n ? 1 : x->n > y->n ? -1 : 0;
}

size_t source_runs(const struct source *s, char ***paths)
{
	*paths = NULL;
	if (s->kind != SOURCE_AITK)
		return 0;
	struct run_ent *v = NULL;
	size_t n = 0, cap = 0;
	char *dir = cat3(s->run_dir, "/", "logs");
	DIR *dp = dir ? opendir(dir) : NULL;
	struct dirent *de;
	while (dp && (de = readdir(dp))) {
		char *end;
		long k = strtol(de->d_name, &end, 10);
		if (end == de->d_name || strcmp(end, "_log.txt") || k < 0)
			continue;
		if (!ARRAY_GROW(v, n + 1, cap))
			break;
		v[n].n = k;
		if (!(v[n].path = cat3(dir, "/", de->d_name)))
			break;
		n++;
	}
	if (dp)
		closedir(dp);
	free(dir);
	if (n > 1)
		qsort(v, n, sizeof *v, cmp_run);
	struct stat st;
	bool cur = s->log && stat(s->log, &st) == 0;
	char **out = calloc(n + 1, sizeof *out);
	size_t k = 0;
	if (out && cur && (out[k] = strdup(s->log)))
		k++;
	for (size_t i = 0; i < n; i++) {
		if (out)
			out[k++] = v[i].path;
		else
			free(v[i].path);
	}
	free(v);
	*paths = out;
	return out ? k : 0;
}

void source_runs_free(char **paths, size_t n)
{
	for (size_t i = 0; paths && i < n; i++)
		free(paths[i]);
	free(paths);
}

bool source_status(struct source *s, struct aitk_status *out)
{
	struct err e;
	if (s->kind != SOURCE_AITK)
		return false;
	return aitkdb_status(s->db, s->row.name, out, &e) == ERR_OK;
}

bool source_running(struct source *s)
{
	if (s->kind != SOURCE_AITK)
		return false;
	struct aitk_job now;
	struct err e;
	if (aitkdb_get(s->db, s->row.name, &now, &e) != ERR_OK)
		return false;
	bool r = now.status && !strcmp(now.status, "running");
	aitkdb_job_clear(&now);
	return r;
}

int source_refuse_running(struct source *s, struct err *e)
{
	return source_running(s) ? aitkdb_refuse_running(s->db, s->row.name, e) : ERR_OK;
}
