/* json.c — see json.h. Output is always valid UTF-8: log text may hold anything. */
#include "oomfix/json.h"
#include "oomfix/text.h"

#include <stdint.h>
#include <string.h>

void json_init(struct json *j, FILE *fp, bool pretty)
{
	memset(j, 0, sizeof *j);
	j->fp = fp;
	j->pretty = pretty;
}

static void indent(struct json *j)
{
	if (!j->pretty)
		return;
	fputc('\n', j->fp);
	for (int i = 0; i < j->depth; i++)
		fputs("  ", j->fp);
}

/* Called before every value or key: the comma and the line break that precede it. */
static void before_value(struct json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->depth > 0) {
		int d = j->depth < 64 ? j->depth : 63;
		if (j->need_comma[d])
			fputc(',', j->fp);
		j->need_comma[d] = true;
		indent(j);
	}
}

static void open_(struct json *j, char c)
{
	before_value(j);
	fputc(c, j->fp);
	j->depth++;
	if (j->depth < 64)
		j->need_comma[j->depth] = false;
}

static void close_(struct json *j, char c)
{
	bool had = j->depth < 64 ? j->need_comma[j->depth] : true;
	if (j->depth > 0)
		j->depth--;
	if (had)
		indent(j);
	fputc(c, j->fp);
}

void json_obj_begin(struct json *j) { open_(j, '{'); }
void json_obj_end(struct json *j) { close_(j, '}'); }
void json_arr_begin(struct json *j) { open_(j, '['); }
void json_arr_end(struct json *j) { close_(j, ']'); }

void json_key(struct json *j, const char *key)
{
	json_str(j, key);
	fputs(j->pretty ? ": " : ":", j->fp);
	j->after_key = true;
}

void json_strn(struct json *j, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;

	before_value(j);
	if (!s) {
		fputs("null", j->fp);
		return;
	}
	fputc('"', j->fp);
	while (i < len) {
		uint32_t cp;
		size_t n = text_utf8_decode(u + i, len - i, &cp);

		if (n == 0) {
			fputs("\xEF\xBF\xBD", j->fp); /* U+FFFD for each invalid byte */
			i++;
			continue;
		}
		switch (cp) {
		case '"': fputs("\\\"", j->fp); break;
		case '\\': fputs("\\\\", j->fp); break;
		case '\n': fputs("\\n", j->fp); break;
		case '\r': fputs("\\r", j->fp); break;
		case '\t': fputs("\\t", j->fp); break;
		case '\b': fputs("\\b", j->fp); break;
		case '\f': fputs("\\f", j->fp); break;
		default:
			/* C0, DEL and C1 escaped: a consumer printing the string cannot be driven by it */
			if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F))
				fprintf(j->fp, "\\u%04x", (unsigned)cp);
			else
				fwrite(u + i, 1, n, j->fp);
		}
		i += n;
	}
	fputc('"', j->fp);
}

void json_str(struct json *j, const char *s)
{
	json_strn(j, s, s ? strlen(s) : 0);
}

void json_int(struct json *j, long long v)
{
	before_value(j);
	fprintf(j->fp, "%lld", v);
}

void json_bool(struct json *j, bool v)
{
	before_value(j);
	fputs(v ? "true" : "false", j->fp);
}

void json_null(struct json *j)
{
	before_value(j);
	fputs("null", j->fp);
}

void json_finish(struct json *j)
{
	fputc('\n', j->fp);
	fflush(j->fp);
}
