/* cli.h — the subcommands. Each takes argv after the subcommand name's position (argv[0] is the
 * subcommand) and returns a sysexits code. */
#ifndef OOMFIX_CLI_H
#define OOMFIX_CLI_H

int cmd_get(int argc, char **argv);
int cmd_set(int argc, char **argv);
int cmd_diagnose(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_fix(int argc, char **argv);

#endif
