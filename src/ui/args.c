/* args.c — the terminal UI's command line: a job and a log in either order (told apart by their
 * names and first bytes), --theme, --no-color, --script, --size and --vram.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/err.h"
#include "oomfix/estimate.h"
#include "oomfix/i18n.h"
#include "oomfix/source.h"
#include "args.h"

static bool looks_like_yaml(const char *p)
{
	size_t n = strlen(p);
	return (n > 5 && !strcmp(p + n - 5, ".yaml")) || (n > 4 && !strcmp(p + n - 4, ".yml")) ||
	       (n > 5 && !strcmp(p + n - 5, ".json")) || source_is_aitk_arg(p);
}

static void usage_die(const char *msg, const char *arg)
{
	fprintf(stderr, "oomfix: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
	fprintf(stderr, "%s", _("usage: oomfix [JOB.yaml] [LOG] [--theme NAME] [--no-color] [--script FILE]\n"
				"              [--size COLSxROWS] [--vram GB]\n"));
	exit(ERR_USAGE);
}

/* --size COLSxROWS */
static void parse_size(const char *val, struct ui_opts *o)
{
	if (sscanf(val, "%dx%d", &o->cols, &o->rows) != 2 || o->cols < 1 || o->rows < 1 ||
	    o->cols > 1000 || o->rows > 1000)
		usage_die(_("--size wants COLSxROWS, e.g. 80x24"), val);
}

void ui_parse_args(int argc, char **argv, struct ui_opts *o)
{
	static const struct option longs[] = {
		{ "theme", required_argument, NULL, 't' },
		{ "script", required_argument, NULL, 's' },
		{ "size", required_argument, NULL, 'z' },
		{ "vram", required_argument, NULL, 'v' },
		{ "no-color", no_argument, NULL, 'n' },
		{ "no-colour", no_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	struct err e;
	int c;

	memset(o, 0, sizeof *o);
	o->cols = 80;
	o->rows = 24;
	opterr = 0; /* the messages are ours, with the usage line */
	optind = 0; /* a fresh scan, also when called again */
	while ((c = getopt_long(argc, argv, ":", longs, NULL)) != -1) {
		switch (c) {
		case 't': o->theme = optarg; break;
		case 's': o->script = optarg; break;
		case 'z': parse_size(optarg, o); break;
		case 'n': o->no_color = true; break;
		case 'v':
			err_clear(&e);
			if (estimate_parse_vram(optarg, &o->vram, NULL, NULL, &e) != ERR_OK)
				usage_die(e.msg, NULL);
			o->vram_arg = optarg;
			break;
		case ':':
			usage_die(_("option needs a value"), argv[optind - 1]);
			break;
		default:
			usage_die(_("unknown option"), argv[optind - 1]);
		}
	}
	const char *pos[2] = { NULL, NULL };
	int npos = 0;
	for (; optind < argc; optind++) {
		if (npos == 2)
			usage_die(_("too many files"), argv[optind]);
		pos[npos++] = argv[optind];
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
