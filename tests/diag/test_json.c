/* Unit tests for json (escaping, invalid UTF-8) and text (sanitising, widths). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/json.h"
#include "oomfix/text.h"

static char *render(void (*fn)(struct json *), bool pretty)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *fp = open_memstream(&buf, &n);
	struct json j;
	assert_non_null(fp);
	json_init(&j, fp, pretty);
	fn(&j);
	fclose(fp);
	return buf;
}

static void doc_escapes(struct json *j)
{
	json_obj_begin(j);
	json_key(j, "s");
	json_strn(j, "q\"b\\n\n\x01\x7f\xc2\x9d\xff\xe8\xa8\xad\xe5\xae\x9a\xed\xa0\x80", 20);
	json_key(j, "a");
	json_arr_begin(j);
	json_int(j, -3);
	json_bool(j, true);
	json_null(j);
	json_str(j, NULL);
	json_arr_end(j);
	json_key(j, "e");
	json_obj_begin(j);
	json_obj_end(j);
	json_obj_end(j);
}

static void test_escapes(void **state)
{
	char *s = render(doc_escapes, false);
	(void)state;
	assert_string_equal(s, "{\"s\":\"q\\\"b\\\\n\\n\\u0001\\u007f\\u009d\xef\xbf\xbd"
			       "\xe8\xa8\xad\xe5\xae\x9a\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\","
			       "\"a\":[-3,true,null,null],\"e\":{}}");
	free(s);
}

static void doc_pretty(struct json *j)
{
	json_obj_begin(j);
	json_key(j, "a");
	json_arr_begin(j);
	json_int(j, 1);
	json_arr_end(j);
	json_key(j, "b");
	json_arr_begin(j);
	json_arr_end(j);
	json_obj_end(j);
	json_finish(j);
}

static void test_pretty(void **state)
{
	char *s = render(doc_pretty, true);
	(void)state;
	assert_string_equal(s, "{\n  \"a\": [\n    1\n  ],\n  \"b\": []\n}\n");
	free(s);
}

static void test_sanitize(void **state)
{
	char out[128];
	size_t n;
	(void)state;
	/* CSI colour and an OSC 52 clipboard write vanish; C0 shows as ^X; tabs stay */
	{
		const char *in = "\x1b[31mred\x1b[0m\x1b]52;c;aGk=\x07!\x01\tx";
		n = text_sanitize(in, strlen(in), out, sizeof out);
	}
	assert_string_equal(out, "red!^A\tx");
	assert_int_equal(n, strlen(out));
	/* a C1 control in its UTF-8 form and an invalid byte are shown as bytes */
	text_sanitize("a\xc2\x9d" "b\xff", 5, out, sizeof out);
	assert_string_equal(out, "a\\xC2\\x9Db\\xFF");
	/* a carriage return cannot move the cursor */
	text_sanitize("x\ry", 3, out, sizeof out);
	assert_string_equal(out, "x^My");
	/* clipping never splits a character or an escape */
	text_sanitize("ab\xe8\xa8\xad", 5, out, 5);
	assert_string_equal(out, "ab");
	text_sanitize("ab\xff", 3, out, 5);
	assert_string_equal(out, "ab");
}

static void test_strip_and_width(void **state)
{
	char s[] = "\x1b[1;31mCUDA\x1b[0m out\x1b[A of memory";
	size_t n;
	int used;
	(void)state;
	n = text_strip_ansi(s, strlen(s));
	assert_int_equal(n, strlen("CUDA out of memory"));
	assert_memory_equal(s, "CUDA out of memory", n);
	assert_int_equal(text_width("\xe8\xa8\xad\xe5\xae\x9a", 6), 4); /* 設定 */
	assert_int_equal(text_width("abc", 3), 3);
	assert_int_equal(text_fit("\xe8\xa8\xad\xe5\xae\x9a", 6, 3, &used), 3);
	assert_int_equal(used, 2);
	assert_int_equal(text_fit("abc", 3, 10, &used), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escapes), cmocka_unit_test(test_pretty),
		cmocka_unit_test(test_sanitize), cmocka_unit_test(test_strip_and_width),
	};
	setlocale(LC_ALL, "");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
