/* The store of the user's own measurements (SPEC §12.2, measure.h), for real: a SQLite file
 * written and read back; the estimate corrected by what it holds; and the faults a user's
 * machine has: a damaged store, one that cannot be written, one locked by another process, a
 * full disk, two processes writing at once. Each fault runs in a child process of its own, as a
 * command would (a problem is said once per process). */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "oomfix/estimate.h"
#include "oomfix/measure.h"

#define GIB 1073741824.0

static char dir[256], store[320];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "%s/oomfix-measure-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR")
										: "/tmp");
	if (!mkdtemp(dir))
		return -1;
	snprintf(store, sizeof store, "%s/m.db", dir);
	setenv("OOMFIX_MEASUREMENTS", store, 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	DIR *d = opendir(dir);
	struct dirent *de;
	char p[600];
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.') {
			snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
			unlink(p);
		}
	if (d)
		closedir(d);
	rmdir(dir);
	return 0;
}

static void fresh(void)
{
	teardown(NULL);
	mkdir(dir, 0700);
}

/* A FLUX LoRA at batch b on 1024, quantized. */
static void flux_input(struct est_input *in, long long batch)
{
	memset(in, 0, sizeof *in);
	snprintf(in->arch, sizeof in->arch, "flux");
	snprintf(in->variant, sizeof in->variant, "-");
	in->quantize = in->quantize_te = true;
	snprintf(in->qtype, sizeof in->qtype, "qfloat8");
	snprintf(in->qtype_te, sizeof in->qtype_te, "qfloat8");
	in->res = 1024;
	in->frames = 1;
	in->batch = batch;
	in->gc = true;
	in->rank = 16;
	snprintf(in->optimizer, sizeof in->optimizer, "adamw8bit");
	in->te_gpu = in->cache_latents = true;
}

/* Runs fn in a child process and returns its exit status (fresh statics, as a new command). */
static int in_child(int (*fn)(void *), void *arg)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		_exit(fn(arg));
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static size_t rows(void)
{
	struct measurement *m;
	size_t n;
	struct err e;
	err_clear(&e);
	assert_int_equal(measure_list(&m, &n, &e), ERR_OK);
	free(m);
	return n;
}

static void test_round_trip(void **state)
{
	(void)state;
	fresh();
	struct est_input in;
	flux_input(&in, 2);
	assert_int_equal(measure_record(&in, (int64_t)(23.55 * GIB), EST_TRAINING,
					(int64_t)(24.1 * GIB), MEASURE_LOWER, "train.log"), ERR_OK);
	/* the same again (the log read twice) is not doubled; a peak is another row */
	assert_int_equal(measure_record(&in, (int64_t)(23.55 * GIB), EST_TRAINING,
					(int64_t)(24.1 * GIB), MEASURE_LOWER, "train.log"), ERR_OK);
	assert_int_equal(measure_record(&in, 0, EST_SAMPLING, (int64_t)(19 * GIB), MEASURE_PEAK,
					NULL), ERR_OK);
	struct measurement *m;
	size_t n;
	struct err e;
	err_clear(&e);
	assert_int_equal(measure_list(&m, &n, &e), ERR_OK);
	assert_int_equal(n, 2);
	char a[1024], b[1024];
	est_input_key(&in, true, a, sizeof a);
	for (size_t i = 0; i < n; i++) {
		est_input_key(&m[i].in, true, b, sizeof b);
		assert_string_equal(a, b);
	}
	bool lower = false;
	for (size_t i = 0; i < n; i++)
		if (m[i].kind == MEASURE_LOWER) {
			lower = true;
			assert_int_equal(m[i].phase, EST_TRAINING);
			assert_int_equal(m[i].bytes, (int64_t)(24.1 * GIB));
			assert_int_equal(m[i].card, (int64_t)(23.55 * GIB));
			assert_non_null(strstr(m[i].log, "train.log"));
		}
	assert_true(lower);
	free(m);
	/* as private as a job: 0600 */
	struct stat st;
	assert_int_equal(stat(store, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* nothing to keep: not a row */
	assert_int_equal(measure_record(&in, 0, EST_TRAINING, 0, MEASURE_LOWER, NULL), ERR_OK);
	assert_int_equal(rows(), 2);
	/* off: nothing kept, nothing read */
	setenv("OOMFIX_MEASUREMENTS", "off", 1);
	char buf[64];
	assert_null(measure_store_path(buf, sizeof buf));
	assert_int_equal(rows(), 0);
	setenv("OOMFIX_MEASUREMENTS", store, 1);
}

/* The estimate corrected: the same settings win, nearby ones carry the model's difference. */
static void test_apply(void **state)
{
	(void)state;
	struct est_input b2, b4;
	flux_input(&b2, 2);
	flux_input(&b4, 4);
	struct estimate e2, e4;
	estimate_input(&b2, &e2);
	estimate_input(&b4, &e4);
	int64_t model2 = e2.phase[EST_TRAINING].bytes, model4 = e4.phase[EST_TRAINING].bytes;
	assert_true(model4 > model2);

	/* a card the model calls a fit */
	int64_t top = 0;
	for (int p = 0; p < EST_NPHASES; p++)
		if (e2.phase[p].on && e2.phase[p].high > top)
			top = e2.phase[p].high;
	int64_t card = top + (int64_t)(GIB / 2);
	/* an OOM of this very job needed more than that card: it wins */
	int64_t extra = card + (int64_t)GIB - model2;
	struct measurement m = { .at = time(NULL), .in = b2, .phase = EST_TRAINING,
				 .bytes = model2 + extra, .kind = MEASURE_LOWER };
	struct estimate e = e2;
	estimate_apply_measured(&e, &b2, &m, 1);
	assert_true(e.measured[EST_TRAINING].on && e.measured[EST_TRAINING].same);
	assert_int_equal(e.phase[EST_TRAINING].bytes, m.bytes);
	assert_int_equal(e.phase[EST_TRAINING].low, m.bytes);
	assert_true(e.phase[EST_TRAINING].high > m.bytes);
	assert_int_equal(e.phase[EST_TRAINING].basis, EST_MEASURED);
	assert_int_equal(e.phase[EST_TRAINING].terms.measured, extra);
	/* on a card between the model and the measurement: "will not fit", not "fits" */
	enum est_phase at;
	assert_int_equal(estimate_verdict(&e2, card, NULL), EST_V_FITS);
	assert_int_equal(estimate_verdict(&e, card, &at), EST_V_NO);
	assert_int_equal(at, EST_TRAINING);
	char words[512];
	estimate_measured_words(&e, EST_TRAINING, words, sizeof words);
	assert_non_null(strstr(words, "at least"));

	/* measured at batch 4, asked at batch 2: the measurement less the model's difference */
	m.in = b4;
	m.bytes = model4 + (int64_t)(3 * GIB);
	e = e2;
	estimate_apply_measured(&e, &b2, &m, 1);
	assert_true(e.measured[EST_TRAINING].on);
	assert_false(e.measured[EST_TRAINING].same);
	assert_int_equal(e.measured[EST_TRAINING].adjusted, m.bytes - (model4 - model2));
	assert_int_equal(e.phase[EST_TRAINING].bytes, model2 + (int64_t)(3 * GIB));
	assert_non_null(strstr(e.measured[EST_TRAINING].differs, "batch 4"));
	/* the carried part widens the floor: it is not a measurement of this job */
	assert_true(e.phase[EST_TRAINING].low < e.phase[EST_TRAINING].bytes);

	/* an OOM lower bound under the model's floor tells nothing more */
	m.in = b2;
	m.bytes = e2.phase[EST_TRAINING].low / 2;
	e = e2;
	estimate_apply_measured(&e, &b2, &m, 1);
	assert_false(e.measured[EST_TRAINING].on);
	assert_int_equal(e.phase[EST_TRAINING].bytes, model2);

	/* a peak of the same job: the number, a narrow band */
	m.kind = MEASURE_PEAK;
	m.bytes = model2 - (int64_t)GIB;
	e = e2;
	estimate_apply_measured(&e, &b2, &m, 1);
	assert_int_equal(e.phase[EST_TRAINING].bytes, m.bytes);
	assert_true(e.phase[EST_TRAINING].high - e.phase[EST_TRAINING].low < m.bytes / 10);

	/* another arch's measurement, or other settings than sizes: not used */
	struct est_input other = b2;
	other.low_vram = true;
	m.in = other;
	e = e2;
	estimate_apply_measured(&e, &b2, &m, 1);
	assert_false(e.measured[EST_TRAINING].on);

	/* the key reads back; a bad one does not */
	char key[1024];
	struct est_input back;
	est_input_key(&b4, true, key, sizeof key);
	assert_true(est_input_parse(key, &back));
	assert_int_equal(back.batch, 4);
	assert_string_equal(back.qtype, "qfloat8");
	assert_false(est_input_parse("arch=flux;", &back));
	assert_false(est_input_parse("arch=flux;res=abc;", &back));
	assert_false(est_input_parse("garbage", &back));
	/* a key written before the adapter's fields reads with them false (AI Toolkit's LoRA) */
	struct est_input attn = b4;
	attn.adapter_attn = attn.adapter_bf16 = true;
	est_input_key(&attn, true, key, sizeof key);
	assert_true(est_input_parse(key, &back));
	assert_true(back.adapter_attn && back.adapter_bf16);
	char old[1024] = "";
	for (char *f = strtok(key, ";"); f; f = strtok(NULL, ";"))
		if (strncmp(f, "adapter_", 8))
			snprintf(old + strlen(old), sizeof old - strlen(old), "%s;", f);
	assert_null(strstr(old, "adapter_"));
	assert_true(est_input_parse(old, &back));
	assert_false(back.adapter_attn || back.adapter_bf16);
	assert_int_equal(back.batch, 4);
	/* a key that repeats a field cannot stand for one it lacks */
	char *res = strstr(old, "res=");
	assert_non_null(res);
	memcpy(res, "gc=1", 4); /* "res=<n>" becomes "gc=1<n>": gc twice, no res */
	assert_false(est_input_parse(old, &back));
}

static int record_one(void *arg)
{
	long long batch = arg ? *(long long *)arg : 1;
	struct est_input in;
	flux_input(&in, batch);
	int rc = measure_record(&in, 0, EST_TRAINING, (int64_t)(20 * GIB) + batch, MEASURE_LOWER,
				"x.log");
	const char *n = measure_note();
	if (n)
		fprintf(stderr, "# note: %s\n", n);
	/* said once: a second problem in the same process is not said again */
	measure_record(&in, 0, EST_TRAINING, (int64_t)(21 * GIB) + batch, MEASURE_LOWER, "x.log");
	if (n && measure_note())
		return 9;
	return rc == ERR_OK ? 0 : n ? (strstr(n, "busy") ? 3 : strstr(n, "damaged") ? 4 : 5) : 6;
}

/* A damaged store is kept aside and a new one started: nothing of it is lost. */
static void test_damaged(void **state)
{
	(void)state;
	fresh();
	FILE *f = fopen(store, "w");
	assert_non_null(f);
	fputs("this is not a SQLite database, it is what a crash left\n", f);
	for (int i = 0; i < 200; i++)
		fputs("0123456789abcdef0123456789abcdef\n", f);
	fclose(f);
	assert_int_equal(in_child(record_one, NULL), 0);
	/* the new store has the measurement; the damaged one is beside it, unchanged */
	assert_true(rows() >= 1);
	DIR *d = opendir(dir);
	struct dirent *de;
	bool aside = false;
	while ((de = readdir(d)))
		if (strstr(de->d_name, "m.db.damaged-")) {
			char p[600], line[80];
			snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
			FILE *g = fopen(p, "r");
			assert_non_null(g);
			assert_non_null(fgets(line, sizeof line, g));
			assert_non_null(strstr(line, "not a SQLite database"));
			fclose(g);
			aside = true;
		}
	closedir(d);
	assert_true(aside);
}

/* A store that cannot be written (its folder is a file): the command goes on, it is said once. */
static void test_unwritable(void **state)
{
	(void)state;
	fresh();
	char file[400], bad[420];
	snprintf(file, sizeof file, "%s/plain-file", dir);
	FILE *f = fopen(file, "w");
	assert_non_null(f);
	fclose(f);
	snprintf(bad, sizeof bad, "%s/m.db", file);
	setenv("OOMFIX_MEASUREMENTS", bad, 1);
	assert_int_equal(in_child(record_one, NULL), 5);
	setenv("OOMFIX_MEASUREMENTS", store, 1);
	assert_int_equal(rows(), 0);
}

/* A link planted where the store would be: refused, the file it points at untouched. */
static void test_planted_link(void **state)
{
	(void)state;
	fresh();
	char victim[400];
	snprintf(victim, sizeof victim, "%s/victim.txt", dir);
	FILE *f = fopen(victim, "w");
	assert_non_null(f);
	fputs("precious\n", f);
	fclose(f);
	assert_int_equal(symlink(victim, store), 0);
	assert_int_equal(in_child(record_one, NULL), 5);
	char line[32] = "";
	f = fopen(victim, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof line, f));
	assert_string_equal(line, "precious\n");
	assert_null(fgets(line, sizeof line, f));
	fclose(f);
	struct stat st;
	assert_int_equal(lstat(store, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
}

static int full_disk(void *arg)
{
	(void)arg;
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit rl = { 0, 0 }; /* no byte may be written: a full disk */
	setrlimit(RLIMIT_FSIZE, &rl);
	return record_one(NULL);
}

static void test_full_disk(void **state)
{
	(void)state;
	fresh();
	int rc = in_child(full_disk, NULL);
	assert_true(rc == 5 || rc == 4); /* not kept, said; never a crash */
}

/* Another process holds the store's write lock: the command waits a moment at most, goes on
 * without that row, and says so; once the lock is gone the next one is kept. */
static void test_locked(void **state)
{
	(void)state;
	fresh();
	struct est_input in;
	flux_input(&in, 1);
	assert_int_equal(measure_record(&in, 0, EST_CACHING, (int64_t)GIB, MEASURE_LOWER, NULL),
			 ERR_OK); /* the store exists */
	int ready[2], go[2];
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(go), 0);
	fflush(NULL);
	pid_t holder = fork();
	if (holder == 0) {
		sqlite3 *db;
		char c = 0;
		if (sqlite3_open(store, &db) != SQLITE_OK ||
		    sqlite3_exec(db, "BEGIN EXCLUSIVE", NULL, NULL, NULL) != SQLITE_OK)
			_exit(1);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(2);
		sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
		sqlite3_close(db);
		_exit(0);
	}
	char c;
	assert_int_equal(read(ready[0], &c, 1), 1);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int rc = in_child(record_one, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_int_equal(write(go[1], "g", 1), 1);
	int st;
	waitpid(holder, &st, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(rc, 3);
	/* it did not wait for the lock to go: two tries of the short busy wait at most */
	assert_true(t1.tv_sec - t0.tv_sec < 10);
	assert_int_equal(in_child(record_one, NULL), 0);
	assert_int_equal(rows(), 3); /* the first, and the two of the child after the lock */
}

static int record_many(void *arg)
{
	long long base = *(long long *)arg;
	int failed = 0;
	for (long long b = base; b < base + 25; b++) {
		struct est_input in;
		flux_input(&in, b);
		failed += measure_record(&in, 0, EST_TRAINING, (int64_t)(10 * GIB), MEASURE_LOWER,
					 NULL) != ERR_OK;
	}
	return failed;
}

/* Two processes writing at once: every row of both is kept. */
static void test_two_writers(void **state)
{
	(void)state;
	fresh();
	long long a = 1, b = 101;
	fflush(NULL);
	pid_t p1 = fork();
	if (p1 == 0)
		_exit(record_many(&a));
	pid_t p2 = fork();
	if (p2 == 0)
		_exit(record_many(&b));
	int s1, s2;
	waitpid(p1, &s1, 0);
	waitpid(p2, &s2, 0);
	assert_true(WIFEXITED(s1) && WIFEXITED(s2));
	printf("# rows not kept under contention: %d and %d\n", WEXITSTATUS(s1), WEXITSTATUS(s2));
	assert_int_equal((int)rows() + WEXITSTATUS(s1) + WEXITSTATUS(s2), 50);
	assert_true(rows() >= 48); /* a short busy wait each: at most a row or two lost */
}

/* A store whose rows were edited by hand: what does not read back is skipped, not trusted. */
static void test_bad_rows(void **state)
{
	(void)state;
	fresh();
	struct est_input in;
	flux_input(&in, 2);
	assert_int_equal(measure_record(&in, 0, EST_TRAINING, (int64_t)(24 * GIB), MEASURE_LOWER,
					NULL), ERR_OK);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(store, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db,
		"INSERT INTO measurements (at, arch, key, base, card, phase, bytes, kind) VALUES"
		" (1, 'flux', 'arch=flux;', 'x', 0, 'training', 5, 'lower'),"
		" (2, 'flux', (SELECT key FROM measurements LIMIT 1), 'y', 0, 'nonsense', 5, 'lower'),"
		" (3, 'flux', (SELECT key FROM measurements LIMIT 1), 'z', 0, 'training', -7, 'peak'),"
		" (4, 'flux', (SELECT key FROM measurements LIMIT 1), 'w', 0, 'training', 9, 'maybe')",
		NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(rows(), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip), cmocka_unit_test(test_apply),
		cmocka_unit_test(test_damaged),    cmocka_unit_test(test_unwritable),
		cmocka_unit_test(test_full_disk),  cmocka_unit_test(test_locked),
		cmocka_unit_test(test_planted_link),
		cmocka_unit_test(test_two_writers), cmocka_unit_test(test_bad_rows),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
