/* Incremental diagnosis: a log fed in pieces, cut anywhere (mid-line, mid-'\r' frame, between
 * '\r' and '\n'), gives exactly the verdict of the whole log, and after each piece the verdict of
 * the bytes so far; a followed file that grows, shrinks or is replaced is read right.
 *   test_follow CASES_DIR...   (every subfolder with a train.log; its job.yaml or expect.json
 *                               args give the job facts)
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oomfix/diag.h"
#include "oomfix/doc.h"
#include "oomfix/job.h"
#include "oomfix/json.h"
#include "oomfix/logidx.h"
#include "oomfix/sig.h"

static char **dirs;
static int ndirs;

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0, r;

	if (!f)
		return NULL;
	do {
		if (n + 65536 > cap) {
			cap = (cap + 65536) * 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
	} while (r > 0);
	fclose(f);
	*len = n;
	return buf;
}

/* Everything a result says, as one string: the JSON members and the counts beside them. */
static char *render(const struct diag_result *r)
{
	char *s = NULL;
	size_t sz = 0;
	FILE *fp = open_memstream(&s, &sz);
	struct json j;

	assert_non_null(fp);
	json_init(&j, fp, false);
	json_obj_begin(&j);
	diag_json_head(&j, r);
	diag_json_tail(&j, r);
	json_obj_end(&j);
	fprintf(fp, " lines=%llu bytes=%llu survived=%d ended=%d warnings=%lu other=%d now=%d/%lld/%s",
		(unsigned long long)r->lines, (unsigned long long)r->bytes, r->survived,
		r->run_ended, r->warnings, (int)r->other, (int)r->now_phase, r->now_step,
		r->now_rate);
	fclose(fp);
	return s;
}

static char *whole(const char *buf, size_t len, const struct diag_job_info *job)
{
	struct diag_result *r = malloc(sizeof *r);
	struct err e;
	char *s;

	assert_non_null(r);
	err_clear(&e);
	assert_int_equal(diag_buffer(buf, len, job, r, &e), ERR_OK);
	s = render(r);
	free(r);
	return s;
}

static char *now(struct diag_state *ds)
{
	struct diag_result *r = malloc(sizeof *r);
	struct err e;
	char *s;

	assert_non_null(r);
	err_clear(&e);
	assert_int_equal(diag_state_result(ds, r, &e), ERR_OK);
	s = render(r);
	free(r);
	return s;
}

static unsigned long long rng = 0x9E3779B97F4A7C15ull;

static unsigned long long next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A cut point: anywhere, or right before/after a '\r' or '\n' (frames and CRLF endings). */
static size_t pick_cut(const char *buf, size_t len)
{
	size_t at = (size_t)(next_rand() % (len + 1));
	unsigned how = (unsigned)(next_rand() % 4);

	if (how >= 2) {
		size_t k = at;
		while (k < len && buf[k] != '\r' && buf[k] != '\n')
			k++;
		if (k < len)
			at = k + (how == 3 ? 1 : 0);
	}
	return at;
}

/* Feeds buf in pieces cut at sorted random points; checks the result after each piece against
 * the whole diagnosis of that prefix when `each`, and at the end against the whole log. */
static void feed_in_pieces(const char *name, const char *buf, size_t len,
			   const struct diag_job_info *job, const char *want, unsigned npieces,
			   bool each)
{
	struct diag_state *ds;
	struct err e;
	size_t cuts[16], n = 0, at = 0;
	char *got;

	err_clear(&e);
	assert_int_equal(diag_state_new(job, &ds, &e), ERR_OK);
	for (unsigned i = 0; i + 1 < npieces && n < 15; i++)
		cuts[n++] = pick_cut(buf, len);
	cuts[n++] = len;
	for (size_t i = 1; i < n; i++) /* insertion sort */
		for (size_t k = i; k > 0 && cuts[k - 1] > cuts[k]; k--) {
			size_t t = cuts[k];
			cuts[k] = cuts[k - 1];
			cuts[k - 1] = t;
		}
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(diag_state_feed(ds, buf + at, cuts[i] - at, &e), ERR_OK);
		at = cuts[i];
		if (each || i + 1 == n) {
			char *part = i + 1 == n ? NULL : whole(buf, at, job);
			got = now(ds);
			if (strcmp(got, part ? part : want) != 0) {
				fprintf(stderr, "%s: cut at %zu of %zu (piece %zu of %zu)\n  want %s\n  got  %s\n",
					name, at, len, i + 1, n, part ? part : want, got);
				fail();
			}
			free(part);
			free(got);
		}
	}
	diag_state_free(&ds);
	assert_null(ds);
}

/* Job facts for a case: job.yaml through the job model, else the args of expect.json. */
static bool case_job(const char *dir, struct diag_job_info *job, char *name, size_t namesz)
{
	char path[4200];
	struct doc *d = NULL;
	struct job *j = NULL;
	struct err e;
	size_t len;
	char *x, *p;

	snprintf(path, sizeof path, "%s/job.yaml", dir);
	err_clear(&e);
	if (access(path, R_OK) == 0) {
		if (doc_load_file(path, &d, &e) != ERR_OK || job_from_doc(d, &j, &e) != ERR_OK) {
			doc_free(&d);
			return false;
		}
		snprintf(name, namesz, "%s", j->name ? j->name : "");
		job->name = name[0] ? name : NULL;
		job->kind = (int)j->kind;
		job->conservative = job_is_conservative(j) ? 1 : 0;
		job_free(&j);
		doc_free(&d);
		return true;
	}
	snprintf(path, sizeof path, "%s/expect.json", dir);
	x = slurp(path, &len);
	if (!x)
		return false;
	x = realloc(x, len + 1);
	x[len] = '\0';
	job->name = NULL;
	job->kind = 0;
	job->conservative = -1;
	if ((p = strstr(x, "\"--name\"")) && (p = strchr(p + 8, '"'))) {
		char *q = strchr(p + 1, '"');
		if (q && (size_t)(q - p - 1) < namesz) {
			memcpy(name, p + 1, (size_t)(q - p - 1));
			name[q - p - 1] = '\0';
			job->name = name;
		}
	}
	if ((p = strstr(x, "\"--kind\"")) && (p = strchr(p + 8, '"')))
		job->kind = atoi(p + 1);
	if ((p = strstr(x, "\"--conservative\"")) && (p = strchr(p + 16, '"')))
		job->conservative = atoi(p + 1);
	free(x);
	return job->name || job->kind || job->conservative != -1;
}

/* A log that is not text is refused whole, and fed in one piece, alike (SPEC §3.6). */
static bool refused(const char *buf, size_t len)
{
	struct diag_result *r = malloc(sizeof *r);
	struct diag_state *ds;
	struct err e;
	int rc;

	assert_non_null(r);
	err_clear(&e);
	rc = diag_buffer(buf, len, NULL, r, &e);
	if (rc != ERR_DATA) {
		free(r);
		return false;
	}
	assert_int_equal(diag_state_new(NULL, &ds, &e), ERR_OK);
	rc = diag_state_feed(ds, buf, len, &e);
	if (rc == ERR_OK)
		rc = diag_state_result(ds, r, &e);
	assert_int_equal(rc, ERR_DATA);
	diag_state_free(&ds);
	free(r);
	return true;
}

static void test_cases_in_pieces(void **state)
{
	unsigned logs = 0;

	(void)state;
	for (int k = 0; k < ndirs; k++) {
		DIR *dh = opendir(dirs[k]);
		struct dirent *de;

		if (!dh)
			continue;
		while ((de = readdir(dh)) != NULL) {
			char dir[4096], path[4200], name[256];
			struct diag_job_info job;
			bool has_job;
			size_t len;
			char *buf, *want;

			if (de->d_name[0] == '.')
				continue;
			snprintf(dir, sizeof dir, "%s/%s", dirs[k], de->d_name);
			snprintf(path, sizeof path, "%s/train.log", dir);
			buf = slurp(path, &len);
			if (!buf)
				continue;
			if (refused(buf, len)) {
				free(buf);
				continue;
			}
			has_job = case_job(dir, &job, name, sizeof name);
			want = whole(buf, len, has_job ? &job : NULL);
			/* the fast lane gives what the ordinary path gives */
			diag_fast_lane(false);
			{
				char *slow = whole(buf, len, has_job ? &job : NULL);
				if (strcmp(slow, want) != 0) {
					fprintf(stderr, "%s: fast lane differs\n  slow %s\n  fast %s\n",
						path, slow, want);
					fail();
				}
				free(slow);
			}
			diag_fast_lane(true);
			/* one piece per byte on short logs' first lines is covered by the 2-piece runs */
			for (unsigned t = 0; t < 6; t++)
				feed_in_pieces(path, buf, len, has_job ? &job : NULL, want, 2 + t * 2,
					       t < 2);
			free(want);
			free(buf);
			logs++;
		}
		closedir(dh);
	}
	if (ndirs)
		assert_true(logs > 10);
}

/* A training log that takes the fast lane for thousands of frames, with a skip the run lives
 * through, a save, a sample and a fatal OOM glued to a frame, cut at every few bytes around
 * the interesting places. */
static char *train_log(size_t *len)
{
	char *s = NULL;
	size_t sz = 0;
	FILE *fp = open_memstream(&s, &sz);

	fputs("Running 1 job\n# Running job: lora_fast\nLoading Flux model\n", fp);
	for (int n = 1; n <= 600; n++) {
		fprintf(fp, "\rlora_fast:  %2d%%|###   | %d/3000 [00:%02d<1:00:00,  1.2s/it, lr: 1e-04 loss: 0.1]",
			n * 100 / 3000, n, n % 60);
		if (n == 250)
			fputs("\n\nSaving at step 250\nSaved checkpoint to out/x.safetensors\n"
			      "\rGenerating Samples:  50%|##  | 2/4 [00:01<00:01, 1.0s/it]\n", fp);
		if (n == 400)
			fputs("\n# OOM during training step, skipping batch 1/3 #\n", fp);
		if (n == 450)
			fputs("\r\x1b[Alora_fast:  15%|###   | 450/3000 [00:10<1:00:00, 1.2s/it]", fp);
	}
	fputs("Error running job: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
	      "capacity of 23.55 GiB of which 0 bytes is free.\n\nResult:\n - 1 failure\n"
	      "Traceback (most recent call last):\n  File \"run.py\", line 1, in <module>\n"
	      "torch.OutOfMemoryError: CUDA out of memory.\n", fp);
	fclose(fp);
	*len = sz;
	return s;
}

static void test_fast_lane_in_pieces(void **state)
{
	size_t len;
	char *buf = train_log(&len), *want;
	struct diag_result *r = malloc(sizeof *r);
	struct err e;

	(void)state;
	assert_non_null(r);
	err_clear(&e);
	assert_int_equal(diag_buffer(buf, len, NULL, r, &e), ERR_OK);
	/* the verdict the log makes, so the comparison below compares something */
	assert_true(r->oom);
	assert_int_equal(r->timing, DIAG_T_INTERMITTENT);
	assert_int_equal(r->failed_step, 601);
	assert_true(r->run_ended);
	free(r);
	want = whole(buf, len, NULL);
	diag_fast_lane(false);
	{
		char *slow = whole(buf, len, NULL);
		assert_string_equal(slow, want);
		free(slow);
	}
	diag_fast_lane(true);
	for (unsigned t = 0; t < 40; t++)
		feed_in_pieces("train_log", buf, len, NULL, want, 2 + t % 14, t < 4);
	/* one byte at a time */
	{
		struct diag_state *ds;
		char *got;
		assert_int_equal(diag_state_new(NULL, &ds, &e), ERR_OK);
		for (size_t i = 0; i < len; i++)
			diag_state_feed(ds, buf + i, 1, &e);
		got = now(ds);
		assert_string_equal(got, want);
		free(got);
		diag_state_free(&ds);
	}
	free(want);
	free(buf);
}

/* Before the end appears, the verdict is none; the run is not over. */
static void test_verdict_changes_as_it_grows(void **state)
{
	static const char a[] = "Running 1 job\n# Running job: j\n\rj:   0%|  | 1/10 [00:01<00:09, 1s/it]";
	static const char b[] = "\rj:  20%|# | 2/10 [00:02<00:08, 1s/it]\nCUDA out of memory. Tried to allocate 1 GiB\n";
	struct diag_state *ds;
	struct diag_result r;
	struct err e;

	(void)state;
	err_clear(&e);
	assert_int_equal(diag_state_new(NULL, &ds, &e), ERR_OK);
	diag_state_feed(ds, a, sizeof a - 1, &e);
	assert_int_equal(diag_state_result(ds, &r, &e), ERR_OK);
	assert_false(r.oom);
	assert_false(r.run_ended);
	assert_int_equal(r.total_steps, 10);
	assert_int_equal(r.now_phase, DIAG_P_TRAINING);
	assert_int_equal(r.now_step, 1);
	assert_string_equal(r.now_rate, "1s/it");
	diag_state_feed(ds, b, sizeof b - 1, &e);
	assert_int_equal(diag_state_result(ds, &r, &e), ERR_OK);
	assert_true(r.oom);
	assert_int_equal(r.failed_step, 3);
	assert_int_equal(r.timing, DIAG_T_FIRST_STEPS);
	assert_int_equal(diag_state_offset(ds), sizeof a - 1 + sizeof b - 1);
	diag_state_free(&ds);
}

/* Segments as "line:seg:piece:off:text|". */
struct segs {
	char *out;
	size_t n, cap;
};

static int seg_cb(const struct logidx_seg *sg, void *ctx)
{
	struct segs *c = ctx;
	char head[96];
	int w = snprintf(head, sizeof head, "%llu:%u:%d:%llu:%llu:", (unsigned long long)sg->line,
			 sg->seg, sg->piece, (unsigned long long)sg->off,
			 (unsigned long long)sg->line_off);

	if (c->n + (size_t)w + sg->len + 2 > c->cap) {
		c->cap = (c->cap + (size_t)w + sg->len + 2) * 2;
		c->out = realloc(c->out, c->cap);
		assert_non_null(c->out);
	}
	memcpy(c->out + c->n, head, (size_t)w);
	c->n += (size_t)w;
	memcpy(c->out + c->n, sg->p, sg->len);
	c->n += sg->len;
	c->out[c->n++] = '|';
	c->out[c->n] = '\0';
	return 0;
}

/* The scanner fed in pieces hands over the segments logidx_scan does over the whole, with a
 * small cap so that long segments come in pieces that span the cuts. */
static void test_scanner_in_pieces(void **state)
{
	static const char log[] = "Running 1 job\r\n\rA: 1%|#| 1/9 [a]\rA: 2%|#| 2/9 [b]\r\r"
				  "\nabcdefghijklmnopqrstuvwxyz0123456789\n\n\r\nlast line no newline"
				  "\rand a frame 0123456789abcdef";
	const size_t len = sizeof log - 1;
	struct segs whole_s = { 0 };
	struct logidx *li;
	struct err e;

	(void)state;
	err_clear(&e);
	assert_int_equal(logidx_open_buffer("t", log, len, &li, &e), ERR_OK);
	logidx_set_seg_cap(li, 16);
	assert_int_equal(logidx_scan(li, seg_cb, &whole_s, &e), ERR_OK);
	logidx_close(&li);
	for (unsigned t = 0; t < 300; t++) {
		struct logidx_scanner *sc;
		struct segs got = { 0 }, tail = { 0 };
		size_t at = 0;

		assert_int_equal(logidx_scanner_new(16, &sc), ERR_OK);
		while (at < len) {
			size_t step = 1 + (size_t)(next_rand() % (t % 3 == 0 ? 3 : 40));
			if (step > len - at)
				step = len - at;
			logidx_scanner_feed(sc, log + at, step, seg_cb, &got);
			at += step;
			/* the tail is handed over without being consumed */
			logidx_scanner_tail(sc, seg_cb, &tail);
			free(tail.out);
			tail = (struct segs){ 0 };
		}
		logidx_scanner_end(sc, seg_cb, &got);
		assert_string_equal(got.out, whole_s.out);
		assert_int_equal(logidx_scanner_lines(sc), 6);
		assert_int_equal(logidx_scanner_offset(sc), len);
		logidx_scanner_free(&sc);
		assert_null(sc);
		free(got.out);
	}
	free(whole_s.out);
}

static void append(const char *path, const char *s)
{
	FILE *f = fopen(path, "ab");
	assert_non_null(f);
	fputs(s, f);
	assert_int_equal(fclose(f), 0);
}

/* A new temporary folder in dir (a mkdtemp template) with path = dir/log.txt holding `text`,
 * followed by a new diag_state that has read it all. */
static struct diag_state *follow_new(char *dir, char *path, size_t pathsize, const char *text)
{
	struct diag_state *ds;
	enum diag_follow w;
	struct err e;

	assert_non_null(mkdtemp(dir));
	snprintf(path, pathsize, "%s/log.txt", dir);
	append(path, text);
	err_clear(&e);
	assert_int_equal(diag_state_new(NULL, &ds, &e), ERR_OK);
	assert_int_equal(diag_state_follow(ds, path, 0, &w, &e), ERR_OK);
	assert_int_equal(w, DIAG_FOLLOW_GREW);
	return ds;
}

/* A followed file: grows (only the new bytes are read), is truncated, replaced, removed. */
static void test_follow_file(void **state)
{
	char dir[] = "/tmp/oomfix-follow.XXXXXX", path[128], aside[160];
	struct diag_state *ds;
	struct diag_result r;
	enum diag_follow w;
	struct err e;

	(void)state;
	ds = follow_new(dir, path, sizeof path, "Running 1 job\nLoading Flux model\n");
	snprintf(aside, sizeof aside, "%s/log_1.txt", dir);
	err_clear(&e);
	assert_int_equal(diag_state_follow(ds, path, 0, &w, &e), ERR_OK);
	assert_int_equal(w, DIAG_FOLLOW_SAME);
	append(path, "CUDA out of memory. Tried to allocate 20.00 MiB\n");
	assert_int_equal(diag_state_follow(ds, path, 8, &w, &e), ERR_OK); /* at most 8 bytes... */
	assert_int_equal(w, DIAG_FOLLOW_GREW);
	assert_true(diag_state_pending(ds));
	assert_int_equal(diag_state_follow(ds, path, 0, &w, &e), ERR_OK); /* ...then the rest */
	assert_false(diag_state_pending(ds));
	assert_int_equal(diag_state_result(ds, &r, &e), ERR_OK);
	assert_true(r.oom);
	assert_int_equal(r.timing, DIAG_T_BEFORE_TRAINING);
	assert_int_equal(r.lines, 3);

	/* the web UI moves log.txt aside on a restart and writes a new one */
	assert_int_equal(rename(path, aside), 0);
	assert_int_equal(diag_state_follow(ds, path, 0, &w, &e), ERR_OK); /* gone: keeps the last */
	assert_int_equal(w, DIAG_FOLLOW_SAME);
	assert_int_equal(diag_state_result(ds, &r, &e), ERR_OK);
	assert_true(r.oom);
	append(path, "Running 1 job\nLoading Flux model\nLoading transformer\nLoading T5 and more\n");
	assert_int_equal(diag_state_follow(ds, path, 0, &w, &e), ERR_OK);
	assert_int_equal(w, DIAG_FOLLOW_RESTARTED);
	assert_int_equal(diag_state_result(ds, &r, &e), ERR_OK);
	assert_false(r.oom);
	assert_int_equal(r.lines, 4);

	/* truncated in place (shorter than what was read): from the start again */
	assert_int_equal(truncate(path, 0), 0);
	append(path, "Running 1 job\n");
	assert_int_equal(diag_state_follow(ds, path, 0, &w, &e), ERR_OK);
	assert_int_equal(w, DIAG_FOLLOW_RESTARTED);
	assert_int_equal(diag_state_result(ds, &r, &e), ERR_OK);
	assert_int_equal(r.lines, 1);
	assert_int_equal(r.bytes, 14);

	/* the index of the view built on the way: the lines are counted with no second pass */
	{
		struct logidx *li;
		char line[64];
		size_t ll;
		bool clipped;
		uint64_t nl = 0, stride = 0;
		FILE *f = fopen(path, "wb");
		assert_non_null(f);
		for (int i = 1; i <= 2000; i++)
			fprintf(f, "line %d\n", i);
		fputs("no newline", f);
		assert_int_equal(fclose(f), 0);
		assert_int_equal(logidx_open(path, &li, &e), ERR_OK);
		diag_state_index_into(ds, li);
		/* rewritten in place and already longer than what was read: seen by its first bytes */
		assert_int_equal(diag_state_follow(ds, path, 0, &w, &e), ERR_OK);
		assert_int_equal(w, DIAG_FOLLOW_RESTARTED);
		diag_state_index_into(ds, NULL);
		assert_true(logidx_checkpoints(li, &stride) > 1);
		assert_int_equal(logidx_count_lines(li, &nl, &e), ERR_OK);
		assert_int_equal(nl, 2001);
		assert_int_equal(logidx_read_line(li, 1999, line, sizeof line, &ll, &clipped, NULL, &e),
				 ERR_OK);
		assert_string_equal(line, "line 1999");
		assert_int_equal(logidx_read_line(li, 2001, line, sizeof line, &ll, &clipped, NULL, &e),
				 ERR_OK);
		assert_string_equal(line, "no newline");
		logidx_close(&li);
	}

	/* not a regular file */
	assert_int_equal(diag_state_follow(ds, dir, 0, &w, &e), ERR_NOINPUT);
	diag_state_free(&ds);
	unlink(path);
	unlink(aside);
	rmdir(dir);
}

/* Another file renamed over the followed one, starting with the same bytes and longer than what
 * was read: only its inode tells it is new, and it is read from its start. */
static void test_follow_renamed_over(void **state)
{
	char dir[] = "/tmp/oomfix-follow.XXXXXX", path[128], other[160];
	struct diag_state *ds;
	struct diag_result r;
	enum diag_follow w;
	struct err e;

	(void)state;
	ds = follow_new(dir, path, sizeof path, "Running 1 job\n");
	snprintf(other, sizeof other, "%s/log.new", dir);
	err_clear(&e);
	append(other, "Running 1 job\nLoading Flux model\nLoading transformer\n");
	assert_int_equal(rename(other, path), 0);
	assert_int_equal(diag_state_follow(ds, path, 0, &w, &e), ERR_OK);
	assert_int_equal(w, DIAG_FOLLOW_RESTARTED);
	assert_int_equal(diag_state_result(ds, &r, &e), ERR_OK);
	assert_int_equal(r.lines, 3);
	assert_int_equal(r.bytes, 53);
	diag_state_free(&ds);
	unlink(path);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scanner_in_pieces),
		cmocka_unit_test(test_verdict_changes_as_it_grows),
		cmocka_unit_test(test_fast_lane_in_pieces),
		cmocka_unit_test(test_follow_file),
		cmocka_unit_test(test_follow_renamed_over),
		cmocka_unit_test(test_cases_in_pieces),
	};
	dirs = argv + 1;
	ndirs = argc - 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
