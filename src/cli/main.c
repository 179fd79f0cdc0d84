/* main.c — oomfix's entry point: subcommands for scripts, the terminal UI otherwise. */
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "oomfix/err.h"
#include "oomfix/i18n.h"
#include "cli.h"
#include "../ui/ui_main.h"

void i18n_init(void)
{
	const char *dir = OOMFIX_LOCALEDIR;
	struct stat st;
	/* Uninstalled (tests, the quick start): use the build tree's catalogs when present. */
	if (stat(OOMFIX_BUILD_LOCALEDIR "/ja/LC_MESSAGES/oomfix.mo", &st) == 0)
		dir = OOMFIX_BUILD_LOCALEDIR;
	bindtextdomain(GETTEXT_PACKAGE, dir);
	bind_textdomain_codeset(GETTEXT_PACKAGE, "UTF-8");
	textdomain(GETTEXT_PACKAGE);
}

static void usage(FILE *fp)
{
	fputs(_("Usage:\n"
		"  oomfix [JOB.yaml] [LOG]                 open the terminal UI\n"
		"  oomfix diagnose [--job JOB] [--json] LOG\n"
		"                                          when did it run out of memory, what to change first\n"
		"  oomfix plan [--log LOG] [--json] JOB    checklist, rollback plan and first fix\n"
		"  oomfix fix [--log LOG] [--diff] [-o OUT | -i] JOB FIX...\n"
		"                                          apply fixes (FIX is an id or 'next')\n"
		"  oomfix get JOB PATH                     print a value, e.g. config.process[0].train.batch_size\n"
		"  oomfix set [-o OUT | -i] JOB PATH=VALUE...\n"
		"                                          change values (VALUE is YAML)\n"
		"  oomfix --help | --version\n"
		"\n"
		"Without -o or -i, 'fix' and 'set' print the new YAML and leave the file alone.\n"
		"See oomfix(1) for the fixes, the UI keys and the exit codes.\n"), fp);
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
};

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

int main(int argc, char **argv)
{
	setlocale(LC_ALL, "");
	i18n_init();

	if (argc >= 2) {
		const char *cmd = argv[1];
		if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
			printf("oomfix %s\n", OOMFIX_VERSION);
			return 0;
		}
		for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
			if (!strcmp(cmd, commands[i].name))
				return commands[i].run(argc - 1, argv + 1);
		/* A word that names no file but is close to a subcommand is a typo, not a log. */
		struct stat st;
		for (size_t i = 0; cmd[0] != '-' && i < sizeof commands / sizeof commands[0]; i++)
			if (distance(cmd, commands[i].name) <= (strlen(commands[i].name) >= 5 ? 2u : 1u) &&
			    stat(cmd, &st) != 0) {
				fprintf(stderr, _("oomfix: unknown command '%s'; did you mean '%s'? "
						  "(oomfix --help lists them)\n"), cmd, commands[i].name);
				return ERR_USAGE;
			}
	}
	return ui_main(argc, argv);
}
