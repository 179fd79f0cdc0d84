/* text.h: what reaches a terminal. text_visible shows an escape sequence as text; text_sanitize
 * drops it; both leave no byte that a terminal would act on. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "oomfix/text.h"

static void no_control_bytes(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		assert_false(*p == 0x1B || *p == 0x07 || (*p < 0x20 && *p != '\t') || *p == 0x7F);
		if (p[0] == 0xC2)
			assert_false(p[1] >= 0x80 && p[1] <= 0x9F);
	}
}

static void test_visible_shows_osc52(void **state)
{
	(void)state;
	const char in[] = "copy \033]52;c;aGk=\007 and \xc2\x9d" "0;title\007 done";
	char out[256];
	size_t n = text_visible(in, sizeof in - 1, out, sizeof out);
	assert_int_equal(n, strlen(out));
	assert_non_null(strstr(out, "^[]52;c;aGk=^G"));
	assert_non_null(strstr(out, "\\xC2\\x9D0;title^G done"));
	no_control_bytes(out);
}

static void test_sanitize_drops_sequences(void **state)
{
	(void)state;
	const char in[] = "\033[31mred\033[0m \033]52;c;aGk=\007end";
	char out[256];
	text_sanitize(in, sizeof in - 1, out, sizeof out);
	assert_string_equal(out, "red end");
}

static void test_small_buffer_never_splits(void **state)
{
	(void)state;
	const char in[] = "ab\033c\xe7\x8c\xab"; /* a, b, ESC shown as ^[, c, a 3-byte character */
	char out[8];
	size_t n = text_visible(in, sizeof in - 1, out, sizeof out);
	/* "ab^[c" is 5 bytes; the cat needs 3 more plus the NUL, so it is left out whole. */
	assert_int_equal(n, 5);
	assert_string_equal(out, "ab^[c");
}

static void test_utf8_decode(void **state)
{
	(void)state;
	uint32_t cp;
	assert_int_equal(text_utf8_decode((const unsigned char *)"\xe7\x8c\xab", 3, &cp), 3);
	assert_int_equal(cp, 0x732B);
	assert_int_equal(text_utf8_decode((const unsigned char *)"\xc0\xaf", 2, &cp), 0);     /* overlong */
	assert_int_equal(text_utf8_decode((const unsigned char *)"\xed\xa0\x80", 3, &cp), 0); /* surrogate */
	assert_int_equal(text_utf8_decode((const unsigned char *)"\xe7\x8c", 2, &cp), 0);     /* cut short */
	assert_int_equal(text_utf8_decode((const unsigned char *)"\xf4\x90\x80\x80", 4, &cp), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_visible_shows_osc52),
		cmocka_unit_test(test_sanitize_drops_sequences),
		cmocka_unit_test(test_small_buffer_never_splits),
		cmocka_unit_test(test_utf8_decode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
