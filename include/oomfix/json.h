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

#endif
