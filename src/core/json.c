/* json.c — see json.h. Output is always valid UTF-8: log text may hold anything. */
#include "oomfix/json.h"
#include "oomfix/buf.h"
#include "oomfix/text.h"

#include <stdint.h>
#include <stdlib.h>
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

/* ---- checking and re-indenting JSON text ---------------------------------------------------- */

struct jscan {
	const char *s;
	size_t len, pos;
	int depth;
};

static void jskip_ws(struct jscan *c)
{
	while (c->pos < c->len && (c->s[c->pos] == ' ' || c->s[c->pos] == '\t' ||
				   c->s[c->pos] == '\n' || c->s[c->pos] == '\r'))
		c->pos++;
}

static bool jlit(struct jscan *c, const char *w)
{
	size_t n = strlen(w);
	if (c->len - c->pos < n || memcmp(c->s + c->pos, w, n))
		return false;
	c->pos += n;
	return true;
}

static bool jdigits(struct jscan *c)
{
	size_t p = c->pos;
	while (c->pos < c->len && c->s[c->pos] >= '0' && c->s[c->pos] <= '9')
		c->pos++;
	return c->pos > p;
}

static bool jstring(struct jscan *c)
{
	if (c->pos >= c->len || c->s[c->pos] != '"')
		return false;
	c->pos++;
	while (c->pos < c->len) {
		unsigned char ch = (unsigned char)c->s[c->pos];
		if (ch == '"') {
			c->pos++;
			return true;
		}
		if (ch < 0x20)
			return false;
		if (ch == '\\') {
			if (++c->pos >= c->len)
				return false;
			char esc = c->s[c->pos];
			if (esc == 'u') {
				for (int i = 0; i < 4; i++) {
					if (++c->pos >= c->len || !strchr("0123456789abcdefABCDEF", c->s[c->pos]) ||
					    !c->s[c->pos])
						return false;
				}
			} else if (!strchr("\"\\/bfnrt", esc) || !esc) {
				return false;
			}
		}
		c->pos++;
	}
	return false;
}

static bool jvalue(struct jscan *c)
{
	jskip_ws(c);
	if (c->pos >= c->len)
		return false;
	char ch = c->s[c->pos];
	if (ch == '{' || ch == '[') {
		char close = ch == '{' ? '}' : ']';
		if (++c->depth > 512)
			return false;
		c->pos++;
		jskip_ws(c);
		if (c->pos < c->len && c->s[c->pos] == close) {
			c->pos++;
			c->depth--;
			return true;
		}
		for (;;) {
			if (ch == '{') {
				jskip_ws(c);
				if (!jstring(c))
					return false;
				jskip_ws(c);
				if (c->pos >= c->len || c->s[c->pos] != ':')
					return false;
				c->pos++;
			}
			if (!jvalue(c))
				return false;
			jskip_ws(c);
			if (c->pos >= c->len)
				return false;
			if (c->s[c->pos] == ',') {
				c->pos++;
				continue;
			}
			if (c->s[c->pos] != close)
				return false;
			c->pos++;
			c->depth--;
			return true;
		}
	}
	if (ch == '"')
		return jstring(c);
	if (ch == 't')
		return jlit(c, "true");
	if (ch == 'f')
		return jlit(c, "false");
	if (ch == 'n')
		return jlit(c, "null");
	if (ch == '-')
		c->pos++;
	if (c->pos < c->len && c->s[c->pos] == '0')
		c->pos++;
	else if (!jdigits(c))
		return false;
	if (c->pos < c->len && c->s[c->pos] == '.') {
		c->pos++;
		if (!jdigits(c))
			return false;
	}
	if (c->pos < c->len && (c->s[c->pos] == 'e' || c->s[c->pos] == 'E')) {
		c->pos++;
		if (c->pos < c->len && (c->s[c->pos] == '+' || c->s[c->pos] == '-'))
			c->pos++;
		if (!jdigits(c))
			return false;
	}
	return true;
}

bool json_check(const char *s, size_t len, size_t *err_off)
{
	struct jscan c = { s, len, 0, 0 };
	bool ok = jvalue(&c);
	if (ok) {
		jskip_ws(&c);
		ok = c.pos == c.len;
	}
	if (!ok && err_off)
		*err_off = c.pos;
	return ok;
}

static void jnl(struct strbuf *o, int depth)
{
	strbuf_add(o, "\n", 1);
	for (int i = 0; i < depth; i++)
		strbuf_add(o, "  ", 2);
}

char *json_indent(const char *s, size_t len, size_t *out_len)
{
	if (!json_check(s, len, NULL))
		return NULL;
	struct strbuf o = { 0 };
	int depth = 0;
	size_t i = 0;
	while (i < len) {
		char ch = s[i];
		if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
			i++;
		} else if (ch == '"') { /* copied as written, escapes and all */
			size_t j = i + 1;
			while (s[j] != '"')
				j += s[j] == '\\' ? 2 : 1;
			strbuf_add(&o, s + i, j + 1 - i);
			i = j + 1;
		} else if (ch == '{' || ch == '[') {
			size_t j = i + 1;
			while (j < len && strchr(" \t\r\n", s[j]) && s[j])
				j++;
			if (s[j] == (ch == '{' ? '}' : ']')) { /* empty: stays "{}" */
				strbuf_add(&o, ch == '{' ? "{}" : "[]", 2);
				i = j + 1;
				continue;
			}
			strbuf_add(&o, &ch, 1);
			jnl(&o, ++depth);
			i++;
		} else if (ch == '}' || ch == ']') {
			jnl(&o, --depth);
			strbuf_add(&o, &ch, 1);
			i++;
		} else if (ch == ',') {
			strbuf_add(&o, ",", 1);
			jnl(&o, depth);
			i++;
		} else if (ch == ':') {
			strbuf_add(&o, ": ", 2);
			i++;
		} else { /* a number or a literal: up to the next delimiter */
			size_t j = i;
			while (j < len && !strchr(",:{}[] \t\r\n", s[j]))
				j++;
			strbuf_add(&o, s + i, j - i);
			i = j;
		}
	}
	strbuf_add(&o, "\n", 1);
	size_t n;
	char *r = strbuf_steal(&o, &n);
	if (r && out_len)
		*out_len = n;
	return r;
}
