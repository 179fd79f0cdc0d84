/* input.h — keys from the terminal or from a --script file (input.c). */
#ifndef OOMFIX_UI_INPUT_H
#define OOMFIX_UI_INPUT_H

#include <stdio.h>

#include "app.h"

struct ui_script {
	FILE *fp;
	const char *path;
	int lineno;
	char pending[1024];  /* the rest of a text: command being typed */
	size_t pend_off, pend_len;
	bool started;        /* a command was read: the implicit wait is behind us */
};

/* The next key from the terminal (-1 on timeout). */
int ui_read_terminal_key(void);
/* The next key from the script, running the commands that are not keys (resize, dump, sleep,
 * wait) on the way; 0 at the end. */
int ui_read_script_key(struct ui_app *a, struct ui_script *sc);

#endif
