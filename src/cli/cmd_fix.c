#include "cli.h"
int cmd_plan(int argc, char **argv) { (void)argc; (void)argv; return 70; }
int cmd_fix(int argc, char **argv) { (void)argc; (void)argv; return 70; }
