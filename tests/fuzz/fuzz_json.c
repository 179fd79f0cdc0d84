/* fuzz_json.c — json_check, json_indent and the JSON writer on arbitrary bytes.
 *
 * What must hold for any input:
 *  - json_indent gives a text exactly when json_check accepts the input; that text ends in a
 *    newline, passes json_check, and has the same tokens (the same bytes once the whitespace
 *    between tokens is taken out: strings and numbers are copied byte for byte); indenting it
 *    again changes nothing;
 *  - when json_check refuses, the error offset is within the input;
 *  - the writer turns any bytes into a string that json_check accepts, valid UTF-8 with no raw
 *    control character.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/json.h"

#include "fuzz.h"

/* The input without the whitespace outside strings, into out (as large as the input). */
static size_t tokens(const char *s, size_t n, char *out)
{
	size_t k = 0;
	bool in_str = false, esc = false;

	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (in_str) {
			out[k++] = c;
			if (esc)
				esc = false;
			else if (c == '\\')
				esc = true;
			else if (c == '"')
				in_str = false;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
			continue;
		if (c == '"')
			in_str = true;
		out[k++] = c;
	}
	return k;
}

static void check_indent(const char *in, size_t size)
{
	size_t off = (size_t)-1, len = 0, len2 = 0;
	bool ok = json_check(in, size, &off);
	char *ind = json_indent(in, size, &len);

	if (!ok) {
		FUZZ_CHECK(off <= size);
		FUZZ_CHECK(ind == NULL);
		return;
	}
	FUZZ_CHECK(ind != NULL);
	FUZZ_CHECK(len > 0 && ind[len - 1] == '\n' && ind[len] == '\0');
	FUZZ_CHECK(json_check(ind, len, NULL));
	{
		char *a = malloc(size + 1), *b = malloc(len + 1);

		if (a && b) {
			size_t na = tokens(in, size, a), nb = tokens(ind, len, b);

			FUZZ_CHECK(na == nb && memcmp(a, b, na) == 0);
		}
		free(a);
		free(b);
	}
	{
		char *again = json_indent(ind, len, &len2);

		FUZZ_CHECK(again != NULL);
		FUZZ_CHECK(len2 == len && memcmp(again, ind, len) == 0);
		free(again);
	}
	free(ind);
}

static void check_writer(const char *in, size_t size)
{
	char *out = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&out, &len);
	struct json j;

	if (!fp)
		return;
	json_init(&j, fp, size && (in[0] & 1));
	json_obj_begin(&j);
	json_key(&j, "text");
	json_strn(&j, in, size);
	json_key(&j, "list");
	json_arr_begin(&j);
	json_int(&j, (long long)size);
	json_bool(&j, true);
	json_null(&j);
	json_arr_end(&j);
	json_obj_end(&j);
	json_finish(&j);
	fclose(fp);
	FUZZ_CHECK(out != NULL);
	FUZZ_CHECK(json_check(out, len, NULL));
	FUZZ_CHECK(fuzz_utf8_valid((const unsigned char *)out, len));
	for (size_t i = 0; i < len; i++)
		FUZZ_CHECK((unsigned char)out[i] >= 0x20 || out[i] == '\n');
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_indent((const char *)data, size);
	check_writer((const char *)data, size);
	return 0;
}
