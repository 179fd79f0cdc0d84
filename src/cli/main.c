/* main.c — oomfix's entry point: subcommands for scripts, the terminal UI otherwise. */
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "oomfix/err.h"
#include "oomfix/i18n.h"
#include "cli.h"
#include "../ui/ui_main.h"

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

int main(int argc, char **argv)
{
	i18n_setlocale();
	i18n_init();

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
			if (!strcmp(cmd, commands[i].name))
				return commands[i].run(argc - 1, argv + 1);
	}
	return ui_main(argc, argv);
}
