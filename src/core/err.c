/* err.c — see err.h. */
#include "oomfix/err.h"

#include <string.h>

void err_clear(struct err *e)
{
	if (e)
		memset(e, 0, sizeof *e);
}

int err_vset(struct err *e, int code, const char *file, int line, int col, const char *fmt,
	     va_list ap)
{
	if (!e)
		return code;
	e->code = code;
	snprintf(e->file, sizeof e->file, "%s", file ? file : "");
	e->line = line;
	e->col = col;
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	return code;
}

int err_set(struct err *e, int code, const char *file, int line, int col, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	err_vset(e, code, file, line, col, fmt, ap);
	va_end(ap);
	return code;
}

void err_print(const struct err *e, FILE *fp)
{
	fputs("oomfix: ", fp);
	if (e->file[0]) {
		fputs(e->file, fp);
		if (e->line > 0) {
			fprintf(fp, ":%d", e->line);
			if (e->col > 0)
				fprintf(fp, ":%d", e->col);
		}
		fputs(": ", fp);
	}
	fprintf(fp, "%s\n", e->msg);
}
