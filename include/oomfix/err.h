/* err.h — errors that say where: file, line, column, what, and a sysexits code. */
#ifndef OOMFIX_ERR_H
#define OOMFIX_ERR_H

#include <stdarg.h>
#include <stdio.h>

/* Exit codes follow <sysexits.h>; repeated here so the model needs no system header. */
enum {
	ERR_OK = 0,
	ERR_USAGE = 64,    /* EX_USAGE: bad command line */
	ERR_DATA = 65,     /* EX_DATAERR: invalid YAML, not a job, bad value */
	ERR_NOINPUT = 66,  /* EX_NOINPUT: cannot open input */
	ERR_UNAVAILABLE = 69, /* EX_UNAVAILABLE: a needed program or state is not there */
	ERR_SOFTWARE = 70, /* EX_SOFTWARE: internal check failed (e.g. an edit did not verify) */
	ERR_CANTCREAT = 73,/* EX_CANTCREAT: cannot create output */
	ERR_IOERR = 74,    /* EX_IOERR: read or write failed */
	ERR_TEMPFAIL = 75, /* EX_TEMPFAIL: try again (file changed on disk, needs confirmation) */
};

/* One error. `line` and `col` are 1-based; 0 means "not known" and is not printed. */
struct err {
	int code;
	char file[512];
	int line;
	int col;
	char msg[1024];
};

/* Clears e (code ERR_OK). */
void err_clear(struct err *e);

/* Sets e and returns `code`, so callers can write `return err_set(e, ERR_DATA, ...)`.
 * `file` may be NULL. e may be NULL (the error is then dropped). */
int err_set(struct err *e, int code, const char *file, int line, int col, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
int err_vset(struct err *e, int code, const char *file, int line, int col, const char *fmt,
	     va_list ap);

/* Prints "oomfix: file:line:col: msg\n" (omitting the parts that are unknown) to fp. */
void err_print(const struct err *e, FILE *fp);

#endif
