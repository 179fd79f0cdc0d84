/* Unit tests for logidx: \r segments, CRLF, caps, the sparse index, truncation, streams. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oomfix/logidx.h"

/* Segments collected as "line:seg:text|" into a string. */
struct collect {
	char out[4096];
	size_t n;
	size_t pieces;
	size_t maxlen;
	uint64_t bytes;
};

static int collect_cb(const struct logidx_seg *s, void *ctx)
{
	struct collect *c = ctx;
	int w = snprintf(c->out + c->n, sizeof c->out - c->n, "%llu:%u:%.*s|",
			 (unsigned long long)s->line, s->seg, (int)s->len, s->p);
	if (w > 0 && (size_t)w < sizeof c->out - c->n)
		c->n += (size_t)w;
	if (s->piece)
		c->pieces++;
	if (s->len > c->maxlen)
		c->maxlen = s->len;
	c->bytes += s->len;
	return 0;
}

static void scan_buf(const char *buf, size_t len, size_t cap, struct collect *c)
{
	struct logidx *li;
	struct err e;
	memset(c, 0, sizeof *c);
	assert_int_equal(logidx_open_buffer("t", buf, len, &li, &e), ERR_OK);
	if (cap)
		logidx_set_seg_cap(li, cap);
	assert_int_equal(logidx_scan(li, collect_cb, c, &e), ERR_OK);
	logidx_close(&li);
	assert_null(li);
}

static void test_segments(void **state)
{
	struct collect c;
	const char log[] = "a\rb\r\rc\nplain\r\n\nlast";
	(void)state;
	scan_buf(log, sizeof log - 1, 0, &c);
	/* empty \r segments are skipped; CRLF adds none; an empty line gives one empty segment */
	assert_string_equal(c.out, "1:0:a|1:1:b|1:2:c|2:0:plain|3:0:|4:0:last|");
}

static void test_only_cr(void **state)
{
	struct collect c;
	(void)state;
	scan_buf("\r\r\n", 3, 0, &c);
	assert_string_equal(c.out, "1:0:|");
	scan_buf("", 0, 0, &c);
	assert_string_equal(c.out, "");
}

static void test_cap_pieces(void **state)
{
	struct collect c;
	char big[1000];
	(void)state;
	memset(big, 'x', sizeof big);
	big[500] = '\r';
	scan_buf(big, sizeof big, 64, &c);
	assert_true(c.maxlen <= 64);
	assert_true(c.pieces >= 14);
	assert_int_equal(c.bytes, sizeof big - 1); /* every byte but the \r handed over */
}

static char tmpdir[64];

static void tmp_path(char *buf, size_t n, const char *name)
{
	if (!tmpdir[0]) {
		strcpy(tmpdir, "/tmp/oomfix-logidx-XXXXXX");
		assert_non_null(mkdtemp(tmpdir));
	}
	snprintf(buf, n, "%s/%s", tmpdir, name);
}

/* A file of `lines` lines; line k is the digit k % 10 (every 1000th line is longer). */
static void write_lines(const char *path, unsigned long lines)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	for (unsigned long k = 1; k <= lines; k++) {
		if (k % 1000 == 0)
			fprintf(f, "%lu line number %lu\r%lu\n", k % 10, k, k % 10);
		else
			fprintf(f, "%lu\n", k % 10);
	}
	fclose(f);
}

static void check_line(struct logidx *li, uint64_t k)
{
	char buf[64];
	size_t len;
	bool clipped;
	struct err e;
	assert_int_equal(logidx_read_line(li, k, buf, sizeof buf, &len, &clipped, NULL, &e), ERR_OK);
	assert_true(len >= 1);
	assert_int_equal(buf[0] - '0', (int)(k % 10));
	assert_false(clipped);
}

static void test_sparse_index(void **state)
{
	char path[128];
	struct logidx *li;
	struct err e;
	uint64_t n, stride;
	size_t ck;
	const unsigned long lines = 2200000; /* more than MAX_CHECKPOINTS * FIRST_STRIDE */
	(void)state;
	tmp_path(path, sizeof path, "many.log");
	write_lines(path, lines);
	assert_int_equal(logidx_open(path, &li, &e), ERR_OK);
	/* reading a line before the count builds the index lazily */
	check_line(li, 12345);
	assert_int_equal(logidx_count_lines(li, &n, &e), ERR_OK);
	assert_int_equal(n, lines);
	ck = logidx_checkpoints(li, &stride);
	assert_true(ck <= LOGIDX_MAX_CHECKPOINTS);
	assert_true(stride > LOGIDX_FIRST_STRIDE); /* it had to thin out */
	check_line(li, 1);
	check_line(li, stride);
	check_line(li, stride + 1);
	check_line(li, 999999);
	check_line(li, lines);
	{
		char buf[64];
		size_t len;
		bool clipped;
		uint64_t off;
		assert_int_equal(logidx_read_line(li, 3000, buf, sizeof buf, &len, &clipped, &off, &e), ERR_OK);
		assert_string_equal(buf, "0 line number 3000\r0"); /* \r kept inside the line */
		assert_int_equal(logidx_read_line(li, 3000, buf, 5, &len, &clipped, NULL, &e), ERR_OK);
		assert_true(clipped);
		assert_int_equal(len, 4);
		assert_int_equal(logidx_read_line(li, lines + 1, buf, sizeof buf, &len, &clipped, NULL, &e), ERR_DATA);
		assert_int_equal(logidx_read_line(li, 0, buf, sizeof buf, &len, &clipped, NULL, &e), ERR_DATA);
	}
	logidx_close(&li);
	unlink(path);
}

static int count_cb(const struct logidx_seg *s, void *ctx)
{
	(void)s;
	(*(uint64_t *)ctx)++;
	return 0;
}

static void test_truncated_while_open(void **state)
{
	char path[128];
	struct logidx *li;
	struct err e;
	uint64_t segs = 0, n;
	(void)state;
	tmp_path(path, sizeof path, "trunc.log");
	write_lines(path, 300000);
	assert_int_equal(logidx_open(path, &li, &e), ERR_OK);
	assert_int_equal(truncate(path, 1000), 0);
	assert_int_equal(logidx_scan(li, count_cb, &segs, &e), ERR_OK);
	assert_true(logidx_truncated(li));
	assert_int_equal(logidx_count_lines(li, &n, &e), ERR_OK);
	assert_true(n <= 500);
	logidx_close(&li);
	unlink(path);
}

static void test_crlf_read_line(void **state)
{
	const char log[] = "one\r\ntwo\r\n";
	struct logidx *li;
	struct err e;
	char buf[16];
	size_t len;
	uint64_t n;
	(void)state;
	assert_int_equal(logidx_open_buffer("t", log, sizeof log - 1, &li, &e), ERR_OK);
	assert_int_equal(logidx_count_lines(li, &n, &e), ERR_OK);
	assert_int_equal(n, 2);
	assert_int_equal(logidx_read_line(li, 2, buf, sizeof buf, &len, NULL, NULL, &e), ERR_OK);
	assert_string_equal(buf, "two");
	logidx_close(&li);
}

static void test_open_errors(void **state)
{
	struct logidx *li;
	struct err e;
	(void)state;
	err_clear(&e);
	assert_int_equal(logidx_open("/nonexistent/oomfix.log", &li, &e), ERR_NOINPUT);
	assert_null(li);
	assert_string_equal(e.file, "/nonexistent/oomfix.log");
	assert_int_equal(logidx_open("/", &li, &e), ERR_NOINPUT);
	assert_non_null(strstr(e.msg, "directory"));
}

static void test_fifo_stream(void **state)
{
	char path[128];
	struct logidx *li;
	struct err e;
	uint64_t segs = 0, n;
	pid_t pid;
	char buf[8];
	size_t len;
	(void)state;
	tmp_path(path, sizeof path, "fifo");
	assert_int_equal(mkfifo(path, 0600), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		FILE *f = fopen(path, "w");
		for (int i = 0; f && i < 5000; i++)
			fprintf(f, "frame %d\rnext\n", i);
		if (f)
			fclose(f);
		_exit(0);
	}
	assert_int_equal(logidx_open(path, &li, &e), ERR_OK);
	assert_true(logidx_is_stream(li));
	assert_int_equal(logidx_scan(li, count_cb, &segs, &e), ERR_OK);
	waitpid(pid, NULL, 0);
	assert_int_equal(segs, 10000);
	assert_int_equal(logidx_count_lines(li, &n, &e), ERR_OK);
	assert_int_equal(n, 5000);
	assert_int_equal(logidx_read_line(li, 1, buf, sizeof buf, &len, NULL, NULL, &e), ERR_USAGE);
	assert_int_equal(logidx_scan(li, count_cb, &segs, &e), ERR_USAGE); /* only once */
	logidx_close(&li);
	unlink(path);
	rmdir(tmpdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_segments), cmocka_unit_test(test_only_cr),
		cmocka_unit_test(test_cap_pieces), cmocka_unit_test(test_sparse_index),
		cmocka_unit_test(test_truncated_while_open), cmocka_unit_test(test_crlf_read_line),
		cmocka_unit_test(test_open_errors), cmocka_unit_test(test_fifo_stream),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
