/* test_source.c — the JSON checker and indented rendering, compact JSON edits, and the job
 * source of both kinds: a file and a row of a web UI database (created here with the schema the
 * UI's ORM makes), including a job that starts running or is edited between load and save. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "oomfix/aitkdb.h"
#include "oomfix/doc.h"
#include "oomfix/json.h"
#include "oomfix/save.h"
#include "oomfix/source.h"

static const char CFG[] =
	"{\"job\":\"extension\",\"config\":{\"name\":\"t job\",\"process\":[{\"type\":"
	"\"diffusion_trainer\",\"training_folder\":\"output\",\"sqlite_db_path\":\"./aitk_db.db\","
	"\"train\":{\"batch_size\":4,\"lr\":0.0001,\"gradient_checkpointing\":false},"
	"\"datasets\":[{\"folder_path\":\"/d\",\"resolution\":[512,768,1024]}]}]},"
	"\"meta\":{\"name\":\"[name]\",\"version\":\"1.0\"}}";

static void json_check_cases(void **state)
{
	(void)state;
	const char *good[] = { "{}", "[]", " {\"a\" : [1, -2.5e+3, true, false, null, \"x\\u00e9\\n\"]} ",
			       "0", "\"s\"", CFG };
	for (size_t i = 0; i < sizeof good / sizeof *good; i++)
		assert_true(json_check(good[i], strlen(good[i]), NULL));
	struct { const char *s; size_t off; } bad[] = {
		{ "{a: 1}", 1 }, { "{\"a\":1,}", 7 }, { "[1 2]", 3 }, { "01", 1 }, { "{\"a\":1} x", 8 },
		{ "\"tab\there\"", 4 }, { "{\"a\":tru}", 5 }, { "", 0 }, { "[1.]", 3 },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		size_t off = 999;
		assert_false(json_check(bad[i].s, strlen(bad[i].s), &off));
		assert_int_equal(off, bad[i].off);
	}
}

static void json_indent_layout(void **state)
{
	(void)state;
	const char in[] = "{\"b\":1,\"a\":[1e-4,{}],\"c\":{\"x\":\"q\\\"uote, {not} [json]\"},\"d\":[]}";
	size_t len = 0;
	char *out = json_indent(in, strlen(in), &len);
	assert_non_null(out);
	assert_string_equal(out, "{\n"
				 "  \"b\": 1,\n"
				 "  \"a\": [\n"
				 "    1e-4,\n"
				 "    {}\n"
				 "  ],\n"
				 "  \"c\": {\n"
				 "    \"x\": \"q\\\"uote, {not} [json]\"\n"
				 "  },\n"
				 "  \"d\": []\n"
				 "}\n");
	assert_int_equal(len, strlen(out));
	assert_true(json_check(out, len, NULL));
	free(out);
	assert_null(json_indent("{a:1}", 5, NULL));
}

/* An edit of a compact one-line JSON job stays one line, keeps the key order and every byte it
 * did not touch. */
static void compact_json_edits(void **state)
{
	(void)state;
	struct doc *d = NULL, *nd = NULL;
	struct err e;
	err_clear(&e);
	assert_int_equal(doc_load("cfg", CFG, strlen(CFG), &d, &e), ERR_OK);
	struct doc_edit ed[] = {
		{ DOC_EDIT_SET, "config.process[0].train.batch_size", "1", 0 },
		{ DOC_EDIT_SET, "config.process[0].train.optimizer", "adamw8bit", 0 },
		{ DOC_EDIT_SET, "config.process[0].model.low_vram", "true", 0 },
		{ DOC_EDIT_APPEND_ITEM, "config.process[0].datasets[0].resolution", "1280", 0 },
		{ DOC_EDIT_REMOVE_ITEM, "config.process[0].datasets[0].resolution", NULL, 0 },
	};
	assert_int_equal(doc_apply(d, ed, 5, &nd, &e), ERR_OK);
	size_t len;
	const char *t = doc_text(nd, &len);
	assert_true(json_check(t, len, NULL));
	assert_null(memchr(t, '\n', len));
	const char *want =
		"{\"job\":\"extension\",\"config\":{\"name\":\"t job\",\"process\":[{\"type\":"
		"\"diffusion_trainer\",\"training_folder\":\"output\",\"sqlite_db_path\":\"./aitk_db.db\","
		"\"train\":{\"batch_size\":1,\"lr\":0.0001,\"gradient_checkpointing\":false,"
		"\"optimizer\":\"adamw8bit\"},"
		"\"datasets\":[{\"folder_path\":\"/d\",\"resolution\":[768,1024,1280]}],"
		"\"model\":{\"low_vram\":true}}]},"
		"\"meta\":{\"name\":\"[name]\",\"version\":\"1.0\"}}";
	assert_int_equal(len, strlen(want));
	assert_memory_equal(t, want, len);
	doc_free(&nd);
	doc_free(&d);
}

static void diff_of_json_is_indented(void **state)
{
	(void)state;
	char *newcfg = strdup(CFG);
	char *p = strstr(newcfg, "\"batch_size\":4");
	p[strlen("\"batch_size\":")] = '1';
	char *d = source_diff("aitk:t", CFG, strlen(CFG), newcfg, strlen(newcfg), 1);
	assert_non_null(d);
	assert_non_null(strstr(d, "\n-          \"batch_size\": 4,\n+          \"batch_size\": 1,\n"));
	free(d);
	/* YAML stays as it is */
	d = source_diff("j", "a: 1\n", 5, "a: 2\n", 5, 3);
	assert_non_null(strstr(d, "-a: 1\n+a: 2\n"));
	free(d);
	free(newcfg);
}

/* ---- sources ---------------------------------------------------------------------------------- */

struct fx {
	char dir[512];
	char db[600];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);
	snprintf(f->dir, sizeof f->dir, "%s/oomfix-src-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->db, sizeof f->db, "%s/aitk_db.db", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[700];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

static void sql(const char *db, const char *stmt)
{
	sqlite3 *h;
	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	sqlite3_busy_timeout(h, 5000);
	char *msg = NULL;
	int rc = sqlite3_exec(h, stmt, NULL, NULL, &msg);
	if (rc)
		fail_msg("%s: %s", stmt, msg);
	sqlite3_close(h);
}

static void make_db(const struct fx *f)
{
	sql(f->db, "PRAGMA journal_mode=WAL;"
		   "CREATE TABLE \"Job\" (\"id\" TEXT NOT NULL PRIMARY KEY, \"name\" TEXT NOT NULL,"
		   " \"gpu_ids\" TEXT NOT NULL, \"job_config\" TEXT NOT NULL,"
		   " \"created_at\" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,"
		   " \"updated_at\" DATETIME NOT NULL, \"status\" TEXT NOT NULL DEFAULT 'stopped',"
		   " \"stop\" BOOLEAN NOT NULL DEFAULT false, \"return_to_queue\" BOOLEAN NOT NULL DEFAULT false,"
		   " \"step\" INTEGER NOT NULL DEFAULT 0, \"total_steps\" INTEGER,"
		   " \"info\" TEXT NOT NULL DEFAULT '', \"queue_position\" INTEGER NOT NULL DEFAULT 0);"
		   "CREATE UNIQUE INDEX \"Job_name_key\" ON \"Job\"(\"name\");");
	sqlite3 *h;
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_open(f->db, &h), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, "INSERT INTO Job (id, name, gpu_ids, job_config, updated_at,"
					       " status) VALUES ('u1', 't job', '0', ?, 1700000000000, 'error')",
					    -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_text(st, 1, CFG, -1, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	sqlite3_close(h);
}

static char *edited(const char *from, const char *to)
{
	char *s = strdup(CFG);
	char *p = strstr(s, from);
	assert_non_null(p);
	assert_int_equal(strlen(from), strlen(to));
	memcpy(p, to, strlen(to));
	return s;
}

static void file_source(void **state)
{
	struct fx *f = *state;
	char path[700];
	snprintf(path, sizeof path, "%s/job.yaml", f->dir);
	FILE *fp = fopen(path, "w");
	fputs("job: extension\nconfig:\n  name: x\n", fp);
	fclose(fp);
	struct source *s = NULL;
	struct err e;
	err_clear(&e);
	assert_int_equal(source_open(path, &s, &e), ERR_OK);
	assert_null(source_log(s));
	assert_false(source_is_json(s));
	assert_string_equal(source_label(s), path);
	bool ch = true;
	assert_int_equal(source_changed(s, &ch, NULL, 0, &e), ERR_OK);
	assert_false(ch);
	const char nt[] = "job: extension\nconfig:\n  name: y\n";
	assert_int_equal(source_save(s, nt, strlen(nt), 0, &e), ERR_OK);
	char *bak = NULL;
	size_t blen;
	assert_int_equal(source_read_backup(s, &bak, &blen, &e), ERR_OK);
	assert_string_equal(bak, "job: extension\nconfig:\n  name: x\n");
	free(bak);
	/* someone else writes the file: noticed, and the save is refused until forced */
	sleep(0);
	fp = fopen(path, "w");
	fputs("job: extension\nconfig:\n  name: other writer\n", fp);
	fclose(fp);
	assert_int_equal(source_changed(s, &ch, NULL, 0, &e), ERR_OK);
	assert_true(ch);
	assert_int_equal(source_save(s, nt, strlen(nt), 0, &e), ERR_TEMPFAIL);
	assert_int_equal(source_save(s, nt, strlen(nt), SOURCE_FORCE, &e), ERR_OK);
	source_free(&s);
	assert_null(s);
}

/* Sets path's modification time to (sec, nsec). */
static void set_mtime(const char *path, time_t sec, long nsec)
{
	struct timespec ts[2] = { { sec, nsec }, { sec, nsec } };
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

/* A change saved to the job after a log was written makes that log untried, even when both fall
 * in the same second (the journal's times are whole seconds); a log written after the save, in
 * that second too, has tried it. */
static void untried_within_a_second(void **state)
{
	struct fx *f = *state;
	char job[700], log[700];
	snprintf(job, sizeof job, "%s/job.yaml", f->dir);
	snprintf(log, sizeof log, "%s/run.log", f->dir);
	FILE *fp = fopen(job, "w");
	fputs("job: extension\nconfig:\n  name: x\n", fp);
	fclose(fp);
	fp = fopen(log, "w");
	fputs("a run\n", fp);
	fclose(fp);
	struct err e;
	err_clear(&e);
	const char *fixes[] = { "batch_size" };
	assert_int_equal(save_journal(job, fixes, 1, NULL, 0, &e), ERR_OK);
	time_t last;
	assert_true(save_journal_last(job, &last));
	char *journal = save_journal_name(job);
	struct stat js;
	assert_int_equal(stat(journal, &js), 0);
	free(journal);
	if (js.st_mtim.tv_sec != last || js.st_mtim.tv_nsec < 2 || js.st_mtim.tv_nsec > 999999997)
		skip(); /* the journal's write fell on a second's edge: nothing to tell apart */
	/* the log ended in the second of the save, before it: the change has not run */
	set_mtime(log, last, js.st_mtim.tv_nsec - 1);
	assert_true(source_path_untried(job, log, NULL, NULL, 0));
	/* ... after it: the run had the change */
	set_mtime(log, last, js.st_mtim.tv_nsec + 1);
	assert_false(source_path_untried(job, log, NULL, NULL, 0));
	/* whole seconds apart, the journal's time decides */
	set_mtime(log, last - 1, 999999999);
	assert_true(source_path_untried(job, log, NULL, NULL, 0));
	set_mtime(log, last + 1, 0);
	assert_false(source_path_untried(job, log, NULL, NULL, 0));
}

static void db_source_open_save(void **state)
{
	struct fx *f = *state;
	make_db(f);
	source_set_aitk_dir(f->dir);
	struct source *s = NULL;
	struct err e;
	err_clear(&e);
	assert_int_equal(source_open("aitk:t job", &s, &e), ERR_OK);
	assert_true(source_is_json(s));
	assert_string_equal(source_label(s), "aitk:t job");
	char want[700];
	snprintf(want, sizeof want, "%s/output/t job/log.txt", f->dir);
	assert_string_equal(source_log(s), want);
	size_t len;
	assert_string_equal(source_text(s, &len), CFG);
	char *nc = edited("\"batch_size\":4", "\"batch_size\":2");
	assert_int_equal(source_save(s, nc, strlen(nc), 0, &e), ERR_OK);
	assert_string_equal(source_text(s, NULL), nc);
	char *bak = NULL;
	size_t blen;
	assert_int_equal(source_read_backup(s, &bak, &blen, &e), ERR_OK);
	assert_string_equal(bak, CFG);
	free(bak);
	/* a second save goes on from the saved text */
	char *nc2 = edited("\"batch_size\":4", "\"batch_size\":1");
	assert_int_equal(source_save(s, nc2, strlen(nc2), 0, &e), ERR_OK);
	/* not JSON, or a protected field: refused, nothing written */
	assert_int_equal(source_save(s, "job: extension\n", 15, 0, &e), ERR_DATA);
	char *renamed = edited("\"name\":\"t job\"", "\"name\":\"t jib\"");
	assert_int_equal(source_save(s, renamed, strlen(renamed), 0, &e), ERR_DATA);
	assert_non_null(strstr(e.msg, "config.name"));
	source_free(&s);
	assert_int_equal(source_open("aitk:t job", &s, &e), ERR_OK);
	assert_string_equal(source_text(s, NULL), nc2);
	source_free(&s);
	free(nc);
	free(nc2);
	free(renamed);
	source_set_aitk_dir(NULL);
}

/* Following a run: the status poll reads what the worker and the trainer write; the stop request
 * writes what the UI's stop button writes, and only while the job runs. This database is of an
 * older UI without the pid column. */
static void db_status_and_stop(void **state)
{
	struct fx *f = *state;
	make_db(f);
	struct aitk_db *db = NULL;
	struct aitk_status st;
	struct err e;
	bool asked = true;
	err_clear(&e);
	assert_int_equal(aitkdb_open(f->dir, &db, &e), ERR_OK);
	assert_int_equal(aitkdb_status(db, "t job", &st, &e), ERR_OK);
	assert_true(st.found);
	assert_string_equal(st.status, "error");
	assert_int_equal(st.step, 0);
	assert_int_equal(st.total_steps, -1);
	assert_int_equal(st.pid, -1);
	/* not running: nothing is written */
	assert_int_equal(aitkdb_request_stop(db, "t job", &asked, &e), ERR_OK);
	assert_false(asked);
	sql(f->db, "UPDATE Job SET status = 'running', step = 7, total_steps = 40 WHERE name = 't job'");
	assert_int_equal(aitkdb_status(db, "t job", &st, &e), ERR_OK);
	assert_string_equal(st.status, "running");
	assert_int_equal(st.step, 7);
	assert_int_equal(st.total_steps, 40);
	assert_int_equal(aitkdb_request_stop(db, "t job", &asked, &e), ERR_OK);
	assert_true(asked);
	assert_int_equal(aitkdb_status(db, "t job", &st, &e), ERR_OK);
	assert_string_equal(st.info, "Stopping job...");
	assert_string_equal(st.status, "running"); /* the trainer writes 'stopped' itself */
	/* a long info is cut on a character boundary: 300 two-byte characters */
	char q[700] = "UPDATE Job SET info = '";
	for (int i = 0; i < 300; i++)
		strcat(q, "\xc3\xa9");
	strcat(q, "' WHERE name = 't job'");
	sql(f->db, q);
	assert_int_equal(aitkdb_status(db, "t job", &st, &e), ERR_OK);
	assert_true(strlen(st.info) > 200);
	assert_int_equal(strlen(st.info) % 2, 0);
	assert_int_equal((unsigned char)st.info[strlen(st.info) - 2], 0xc3);
	/* a job that is gone */
	assert_int_equal(aitkdb_status(db, "no such job", &st, &e), ERR_NOINPUT);
	aitkdb_close(&db);
}

/* Between load and save the job starts running, or the UI saves its own edit: refused (75),
 * and --force overrides only the edit, never a running job. */
static void db_source_changed_between(void **state)
{
	struct fx *f = *state;
	make_db(f);
	source_set_aitk_dir(f->dir);
	struct source *s = NULL;
	struct err e;
	err_clear(&e);
	assert_int_equal(source_open("aitk:t job", &s, &e), ERR_OK);
	char *nc = edited("\"batch_size\":4", "\"batch_size\":2");

	sql(f->db, "UPDATE Job SET status='running' WHERE name='t job'");
	bool ch = false;
	assert_int_equal(source_changed(s, &ch, NULL, 0, &e), ERR_OK);
	assert_true(ch);
	assert_int_equal(source_save(s, nc, strlen(nc), 0, &e), ERR_TEMPFAIL);
	assert_non_null(strstr(e.msg, "stop it first"));
	assert_int_equal(source_save(s, nc, strlen(nc), SOURCE_FORCE, &e), ERR_TEMPFAIL);

	sql(f->db, "UPDATE Job SET status='stopped', job_config=replace(job_config, "
		   "'\"lr\":0.0001', '\"lr\":0.0002') WHERE name='t job'");
	assert_int_equal(source_save(s, nc, strlen(nc), 0, &e), ERR_TEMPFAIL);
	assert_non_null(strstr(e.msg, "--force"));
	assert_int_equal(source_save(s, nc, strlen(nc), SOURCE_FORCE, &e), ERR_OK);
	/* the version overwritten by --force is the one kept */
	char *bak = NULL;
	size_t blen;
	assert_int_equal(source_read_backup(s, &bak, &blen, &e), ERR_OK);
	assert_non_null(strstr(bak, "\"lr\":0.0002"));
	free(bak);
	source_free(&s);
	free(nc);
	source_set_aitk_dir(NULL);
}

static void db_sort_and_time(void **state)
{
	(void)state;
	struct aitk_job rows[6] = {
		{ .name = "c", .status = "completed", .updated_ms = 5 },
		{ .name = "e1", .status = "error", .updated_ms = 1 },
		{ .name = "q", .status = "queued", .updated_ms = 9 },
		{ .name = "s", .status = "stopped", .updated_ms = 9 },
		{ .name = "r", .status = "running", .updated_ms = 2 },
		{ .name = "e2", .status = "error", .updated_ms = 3 },
	};
	aitkdb_sort_failed_first(rows, 6);
	assert_string_equal(rows[0].name, "e2");
	assert_string_equal(rows[1].name, "e1");
	assert_string_equal(rows[2].name, "s");
	/* the running job, the one people watch, before the queued ones */
	assert_string_equal(rows[3].name, "r");
	assert_string_equal(rows[4].name, "q");
	assert_string_equal(rows[5].name, "c");
	char buf[40];
	aitkdb_iso8601(1755783062123LL, buf, sizeof buf);
	assert_string_equal(buf, "2025-08-21T13:31:02.123Z");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(json_check_cases),
		cmocka_unit_test(json_indent_layout),
		cmocka_unit_test(compact_json_edits),
		cmocka_unit_test(diff_of_json_is_indented),
		cmocka_unit_test(db_sort_and_time),
		cmocka_unit_test_setup_teardown(file_source, setup, teardown),
		cmocka_unit_test_setup_teardown(untried_within_a_second, setup, teardown),
		cmocka_unit_test_setup_teardown(db_source_open_save, setup, teardown),
		cmocka_unit_test_setup_teardown(db_source_changed_between, setup, teardown),
		cmocka_unit_test_setup_teardown(db_status_and_stop, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
