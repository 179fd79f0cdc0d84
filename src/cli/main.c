/* main.c — oomfix's entry point: subcommands for scripts, the terminal UI otherwise. */
#include <locale.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "oomfix/err.h"
#include "oomfix/i18n.h"
#include "lang.h"
#include "oomfix/source.h"
#include "cli.h"
#include "ui_main.h"

static void usage(FILE *fp)
{
	fputs(_("Usage:\n"
		"  oomfix [--vram GB] [--theme NAME] [--no-color] [JOB.yaml] [LOG]\n"
		"                                        open the terminal UI (--vram: the card,\n"
		"                                        for the fit line's verdict)\n"
		"  oomfix diagnose [--job JOB] [--json] [--follow] LOG\n"
		"                                        when did it run out of memory,\n"
		"                                        what to change first\n"
		"  oomfix plan [--log LOG] [--json] JOB  checklist, rollback plan and first fix\n"
		"  oomfix fix [--log LOG] [--diff] [-o OUT | -i] JOB FIX...\n"
		"                                        apply fixes (FIX is an id or 'next')\n"
		"  oomfix get JOB PATH                   print a value, e.g.\n"
		"                                        config.process[0].train.batch_size\n"
		"  oomfix set [-o OUT | -i] JOB PATH=VALUE...\n"
		"                                        change values (VALUE is YAML)\n"
		"  oomfix retry [--max-tries N] [--probe STEPS] [--log LOG] JOB -- CMD [ARG...]\n"
		"                                        run CMD, fix what failed, run again\n"
		"  oomfix jobs [--aitk DIR] [--json | --names]\n"
		"                                        the AI Toolkit web UI's jobs,\n"
		"                                        failed first\n"
		"  oomfix queue aitk:NAME                queue a web UI job again\n"
		"  oomfix restore [--force] [--first] JOB\n"
		"                                        put the previous version of JOB back\n"
		"  oomfix runs [--json] JOB              the runs of JOB with their verdicts\n"
		"  oomfix estimate [--vram GB] JOB       will it fit the card (see below)\n"
		"  oomfix --aitk DIR                     the web UI's job list in the terminal UI\n"
		"  oomfix --help | --version\n"
		"\n"
		"Without -o or -i, 'fix' and 'set' print the new YAML and leave the file alone.\n"
		"JOB may be aitk:NAME, a job of the web UI's database (aitk_db.db) in the folder\n"
		"given with --aitk DIR or the nearest one at or above the working directory; its\n"
		"LOG may then be left out.\n"
		"See oomfix(1) for the fixes, the UI keys and the exit codes.\n"), fp);
	fputs(_("\nBefore the run:\n"
		"  oomfix estimate [--vram GB | --gpu N] [--json] [--apply [-o OUT | -i]] JOB\n"
		"                                        will it fit the card, and if not,\n"
		"                                        what to change\n"
		"  oomfix measurements [--json | --export]\n"
		"                                        what your own runs measured, for the\n"
		"                                        next estimate\n"),
	      fp);
}

/* The subcommands, one row each. */
static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{ "get", cmd_get },
	{ "set", cmd_set },
	{ "diagnose", cmd_diagnose },
	{ "plan", cmd_plan },
	{ "fix", cmd_fix },
	{ "retry", cmd_retry },
	{ "jobs", cmd_jobs },
	{ "queue", cmd_queue },
	{ "restore", cmd_restore },
	{ "runs", cmd_runs },
	{ "estimate", cmd_estimate },
	{ "measurements", cmd_measurements },
};

/* Takes `--aitk DIR` out of argv wherever it is (before a "--"), so every subcommand and the UI
 * read aitk:NAME from that folder. Returns the new argc, or -1 when DIR is missing. */
static int take_aitk_option(int argc, char **argv)
{
	int out = 1;
	bool opts = true;
	for (int i = 1; i < argc; i++) {
		if (opts && !strcmp(argv[i], "--"))
			opts = false;
		if (opts && !strcmp(argv[i], "--aitk")) {
			if (i + 1 >= argc || !argv[i + 1][0])
				return -1;
			source_set_aitk_dir(argv[++i]);
		} else if (opts && !strncmp(argv[i], "--aitk=", 7)) {
			if (!argv[i][7])
				return -1;
			source_set_aitk_dir(argv[i] + 7);
		} else {
			argv[out++] = argv[i];
		}
	}
	argv[out] = NULL;
	return out;
}

/* Edit distance of two short words, a swap of neighbours counting as one (a typo's distance to
 * a subcommand). */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), d[32][32];

	if (la >= 32 || lb >= 32)
		return 99;
	for (size_t i = 0; i <= la; i++)
		for (size_t j = 0; j <= lb; j++) {
			if (!i || !j) {
				d[i][j] = i + j;
				continue;
			}
			size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
}

/* True when the subcommand's standard output is sentences for people (not a job, not JSON). */
static bool text_on_stdout(const char *cmd, int argc, char **argv)
{
	static const char *const docs[] = { "get", "set", "fix" };
	for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++)
		if (!strcmp(cmd, docs[i]))
			return false;
	for (int i = 2; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "--names"))
			return false;
	return true;
}

int main(int argc, char **argv)
{
	i18n_setlocale();
	i18n_init();
	if ((argc = take_aitk_option(argc, argv)) < 0) {
		fprintf(stderr, "%s\n", _("oomfix: --aitk needs a folder (the one holding aitk_db.db)"));
		return ERR_USAGE;
	}

	if (argc >= 2) {
		const char *cmd = argv[1];
		if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
			return cli_version(stdout);
		}
		for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
			if (!strcmp(cmd, commands[i].name)) {
				i18n_ascii_streams(text_on_stdout(cmd, argc, argv));
				int rc = commands[i].run(argc - 1, argv + 1);
				fflush(stdout);
				return rc;
			}
		/* A word that names no file but is close to a subcommand is a typo, not a log. */
		struct stat st;
		for (size_t i = 0; cmd[0] != '-' && i < sizeof commands / sizeof commands[0]; i++)
			if (distance(cmd, commands[i].name) <= (strlen(commands[i].name) >= 5 ? 2u : 1u) &&
			    stat(cmd, &st) != 0) {
				fprintf(stderr, _("oomfix: unknown command '%s'; did you mean '%s'? "
						  "(oomfix --help lists them)\n"), cmd, commands[i].name);
				return ERR_USAGE;
			}
		/* E21: a bare word (no path, no extension, not aitk:NAME) that names no file is a
		 * command that does not exist, not a log that cannot be opened */
		if (cmd[0] != '-' && !strpbrk(cmd, "/.:") && stat(cmd, &st) != 0) {
			fprintf(stderr, _("oomfix: '%s' is neither a command nor a file (oomfix --help "
					  "lists the commands)\n"), cmd);
			return ERR_USAGE;
		}
	}
	return ui_main(argc, argv);
}
