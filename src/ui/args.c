/* args.c — the terminal UI's command line: a job and a log in either order (told apart by their
 * names and first bytes), --theme, --no-color, --script, --size and --vram.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/err.h"
#include "oomfix/estimate.h"
#include "oomfix/i18n.h"
#include "oomfix/source.h"
#include "args.h"

static const char *vram_arg; /* --vram as given */

const char *ui_args_vram(void)
{
	return vram_arg;
}

static bool looks_like_yaml(const char *p)
{
	size_t n = strlen(p);
	return (n > 5 && !strcmp(p + n - 5, ".yaml")) || (n > 4 && !strcmp(p + n - 4, ".yml")) ||
	       (n > 5 && !strcmp(p + n - 5, ".json")) || source_is_aitk_arg(p);
}

static void usage_die(const char *msg, const char *arg)
{
	fprintf(stderr, "oomfix: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
	fprintf(stderr, "%s", _("usage: oomfix [JOB.yaml] [LOG] [--theme NAME] [--no-color] "
				"[--script FILE] [--size COLSxROWS] [--vram GB]\n"));
	exit(ERR_USAGE);
}

void ui_parse_args(int argc, char **argv, struct ui_opts *o)
{
	const char *pos[2] = { NULL, NULL };
	int npos = 0;
	bool only_pos = false;

	memset(o, 0, sizeof *o);
	vram_arg = NULL;
	o->cols = 80;
	o->rows = 24;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = NULL;
		if (only_pos || a[0] != '-' || !strcmp(a, "-")) {
			if (npos == 2)
				usage_die(_("too many files"), a);
			pos[npos++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			only_pos = true;
			continue;
		}
		if (!strcmp(a, "--no-color") || !strcmp(a, "--no-colour")) {
			o->no_color = true;
			continue;
		}
		const char *names[] = { "--theme", "--script", "--size", "--vram" };
		int which = -1;
		for (int k = 0; k < 4; k++) {
			size_t n = strlen(names[k]);
			if (!strncmp(a, names[k], n) && (a[n] == '\0' || a[n] == '=')) {
				which = k;
				if (a[n] == '=')
					val = a + n + 1;
				else if (i + 1 < argc)
					val = argv[++i];
				else
					usage_die(_("option needs a value"), a);
			}
		}
		if (which < 0)
			usage_die(_("unknown option"), a);
		if (which == 0)
			o->theme = val;
		else if (which == 1)
			o->script = val;
		else if (which == 3) {
			struct err e;
			err_clear(&e);
			if (estimate_parse_vram(val, &o->vram, NULL, NULL, &e) != ERR_OK)
				usage_die(e.msg, NULL);
			vram_arg = val;
		} else if (sscanf(val, "%dx%d", &o->cols, &o->rows) != 2 || o->cols < 1 || o->rows < 1 ||
			 o->cols > 1000 || o->rows > 1000)
			usage_die(_("--size wants COLSxROWS, e.g. 80x24"), val);
	}
	if (npos == 2) {
		o->job = pos[0];
		o->log = pos[1];
		/* The log first and the job second: say which order works rather than report the
		 * log's text as bad YAML. */
		if (!source_sniff_job(pos[0]) && !looks_like_yaml(pos[0]) && source_sniff_job(pos[1])) {
			fprintf(stderr, _("oomfix: '%s' looks like a training log and '%s' like the job: "
					  "the job comes first.\n  oomfix %s %s\n"),
				pos[0], pos[1], pos[1], pos[0]);
			exit(ERR_USAGE);
		}
	} else if (npos == 1) {
		/* One file: a job when it looks like YAML or reads like one, else a log. */
		if (looks_like_yaml(pos[0]) || source_sniff_job(pos[0]))
			o->job = pos[0];
		else
			o->log = pos[0];
	}
}
