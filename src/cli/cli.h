/* cli.h — the subcommands. Each takes argv after the subcommand name's position (argv[0] is the
 * subcommand) and returns a sysexits code. */
#ifndef OOMFIX_CLI_H
#define OOMFIX_CLI_H

#include <stdbool.h>
#include <stdio.h>

/* `oomfix --version` (version.c): prints the version, the libraries' versions, PCRE2 JIT and
 * the data directory to fp; returns 0, or 74 when writing failed. */
int cli_version(FILE *fp);

int cmd_get(int argc, char **argv);
int cmd_set(int argc, char **argv);
int cmd_diagnose(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_fix(int argc, char **argv);

/* `diagnose --follow` (cmd_follow.c): job may be NULL. */
struct diag_job_info;
int cli_diagnose_follow(const char *log, const struct diag_job_info *job, bool as_json);

#endif
