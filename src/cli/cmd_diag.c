#include "cli.h"
int cmd_diagnose(int argc, char **argv) { (void)argc; (void)argv; return 70; }
