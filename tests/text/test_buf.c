/* buf.h: the one growing string, the one array growth and the one whole-file reader. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "oomfix/buf.h"

static void test_strbuf_appends(void **state)
{
	(void)state;
	struct strbuf b = { 0 };
	strbuf_add(&b, "ab\0c", 4); /* bytes, NUL included */
	strbuf_adds(&b, "de");
	strbuf_addf(&b, "[%d:%s]", 42, "x");
	assert_int_equal(b.len, 12);
	assert_memory_equal(b.p, "ab\0cde[42:x]", 13); /* and NUL-terminated */
	/* Many small appends cross several doublings and keep every byte. */
	for (int i = 0; i < 1000; i++)
		strbuf_addf(&b, "%03d", i);
	assert_int_equal(b.len, 12 + 3000);
	assert_memory_equal(b.p + 12 + 3 * 999, "999", 4);
	assert_false(b.oom);
	size_t n = 0;
	char *s = strbuf_steal(&b, &n);
	assert_non_null(s);
	assert_int_equal(n, 3012);
	assert_null(b.p);
	assert_int_equal(b.len, 0);
	free(s);
}

static void test_strbuf_steal_empty_and_oom(void **state)
{
	(void)state;
	struct strbuf b = { 0 };
	size_t n = 7;
	char *s = strbuf_steal(&b, &n);
	assert_string_equal(s, ""); /* nothing added is "", not NULL */
	assert_int_equal(n, 0);
	free(s);

	strbuf_adds(&b, "kept until the failure");
	b.oom = true; /* as after a failed allocation: appends stop, steal refuses */
	strbuf_adds(&b, "lost");
	assert_int_equal(b.len, strlen("kept until the failure"));
	assert_null(strbuf_steal(&b, &n));
	assert_int_equal(n, 0);
	assert_null(b.p);
	assert_false(b.oom);
	strbuf_free(&b); /* safe on an empty buffer */
}

static void test_strbuf_refuses_overflow(void **state)
{
	(void)state;
	struct strbuf b = { 0 };
	strbuf_adds(&b, "x");
	strbuf_add(&b, "y", SIZE_MAX); /* a length that cannot fit: refused, never wrapped */
	assert_true(b.oom);
	assert_int_equal(b.len, 1);
	strbuf_free(&b);
}

static void test_array_grow(void **state)
{
	(void)state;
	long *v = NULL;
	size_t n = 0, cap = 0;
	for (long i = 0; i < 100; i++) {
		assert_true(ARRAY_GROW(v, n + 1, cap));
		assert_true(cap >= n + 1);
		v[n++] = i * i;
	}
	for (size_t i = 0; i < n; i++)
		assert_int_equal(v[i], (long)(i * i));
	assert_int_equal(cap, 128); /* doubling from 8 */
	size_t before = cap;
	assert_true(ARRAY_GROW(v, 50, cap)); /* enough room already: nothing moves */
	assert_int_equal(cap, before);
	long *keep = v;
	assert_false(ARRAY_GROW(v, SIZE_MAX / 2, cap)); /* too large: refused, array kept */
	assert_ptr_equal(v, keep);
	assert_int_equal(cap, before);
	assert_int_equal(v[99], 99 * 99);
	free(v);
}

/* A file with `n` bytes of a known pattern; returns an fd open for reading. */
static int pattern_file(size_t n)
{
	char name[] = "oomfix-bufXXXXXX";
	int fd = mkstemp(name);
	assert_true(fd >= 0);
	unlink(name);
	for (size_t i = 0; i < n; i++) {
		char c = (char)('a' + i % 26);
		assert_int_equal(write(fd, &c, 1), 1);
	}
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

static void test_read_all_file(void **state)
{
	(void)state;
	int fd = pattern_file(10000);
	char *s;
	size_t n;
	assert_int_equal(read_all(fd, 10000, &s, &n), 0); /* exactly the limit is fine */
	assert_int_equal(n, 10000);
	assert_int_equal(s[0], 'a');
	assert_int_equal(s[9999], (char)('a' + 9999 % 26));
	assert_int_equal(s[10000], '\0');
	free(s);

	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(read_all(fd, 9999, &s, &n), EFBIG); /* one byte over */
	assert_int_equal(n, 9999); /* the prefix, for a caller that wants it */
	assert_int_equal(s[9999], '\0');
	free(s);
	close(fd);

	fd = pattern_file(0);
	assert_int_equal(read_all(fd, 100, &s, &n), 0);
	assert_int_equal(n, 0);
	assert_string_equal(s, "");
	free(s);
	close(fd);
}

static void test_read_all_pipe(void **state)
{
	(void)state;
	/* A pipe has no size: the buffer grows as it reads. */
	int p[2];
	assert_int_equal(pipe(p), 0);
	static char big[20000];
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (char)('0' + i % 10);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		ssize_t w = write(p[1], big, sizeof big);
		_exit(w == (ssize_t)sizeof big ? 0 : 1);
	}
	close(p[1]);
	char *s;
	size_t n;
	assert_int_equal(read_all(p[0], 1u << 20, &s, &n), 0);
	close(p[0]);
	assert_int_equal(n, sizeof big);
	assert_memory_equal(s, big, sizeof big);
	free(s);

	int bad = open("/", O_RDONLY | O_DIRECTORY);
	assert_true(bad >= 0);
	s = (char *)1;
	assert_int_equal(read_all(bad, 100, &s, &n), EISDIR); /* read's own error, nothing kept */
	assert_null(s);
	close(bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strbuf_appends),
		cmocka_unit_test(test_strbuf_steal_empty_and_oom),
		cmocka_unit_test(test_strbuf_refuses_overflow),
		cmocka_unit_test(test_array_grow),
		cmocka_unit_test(test_read_all_file),
		cmocka_unit_test(test_read_all_pipe),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
