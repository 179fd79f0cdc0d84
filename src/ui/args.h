/* args.h — the terminal UI's command line (args.c). */
#ifndef OOMFIX_UI_ARGS_H
#define OOMFIX_UI_ARGS_H

#include <stdbool.h>
#include <stdint.h>

struct ui_opts {
	const char *job, *log, *theme, *script;
	int64_t vram;        /* --vram: the card's capacity in bytes, 0 when not given */
	const char *vram_arg; /* --vram as given (NULL when not): a retry from the UI passes it on */
	bool no_color;
	int cols, rows;
};

/* Parses the arguments; a usage error ends the program (64) with the usage line. */
void ui_parse_args(int argc, char **argv, struct ui_opts *o);

#endif
