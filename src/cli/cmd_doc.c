#include "cli.h"
int cmd_get(int argc, char **argv) { (void)argc; (void)argv; return 70; }
int cmd_set(int argc, char **argv) { (void)argc; (void)argv; return 70; }
