/* json.h — a small streaming JSON writer (valid UTF-8 out, control characters escaped). */
#ifndef OOMFIX_JSON_H
#define OOMFIX_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct json {
	FILE *fp;
	int depth;
	bool need_comma[64];
	bool after_key;
	bool pretty; /* two-space indentation */
};

void json_init(struct json *j, FILE *fp, bool pretty);
void json_obj_begin(struct json *j);
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j);
void json_arr_end(struct json *j);
void json_key(struct json *j, const char *key);
/* Writes a string; invalid UTF-8 bytes become U+FFFD, controls are escaped. s may be NULL (null). */
void json_str(struct json *j, const char *s);
void json_strn(struct json *j, const char *s, size_t len);
void json_int(struct json *j, long long v);
void json_bool(struct json *j, bool v);
void json_null(struct json *j);
/* Ends the document with a newline. */
void json_finish(struct json *j);

/* Checks that `len` bytes are exactly one JSON value (RFC 8259, surrounding whitespace allowed,
 * nesting at most 512 deep). Returns true, or false with the byte offset of the first error in
 * *err_off (when not NULL). */
bool json_check(const char *s, size_t len, size_t *err_off);

/* The same JSON laid out one member per line with two-space indentation, in the same order,
 * every string and number copied byte for byte ("{}" and "[]" stay on one line), ending in a
 * newline. Used to show diffs of one-line JSON. Returns a malloc'd string (length in *out_len
 * when not NULL) the caller frees, or NULL when the text is not valid JSON or memory runs out. */
char *json_indent(const char *s, size_t len, size_t *out_len);

#endif
