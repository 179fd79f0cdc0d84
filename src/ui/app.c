#include "../cli/cli.h"
int ui_main(int argc, char **argv) { (void)argc; (void)argv; return 70; }
