/* ui_main.h — the terminal UI's entry point, the one thing of src/ui the rest of the program
 * sees (no curses here: src/cli/main.c includes it). */
#ifndef OOMFIX_UI_MAIN_H
#define OOMFIX_UI_MAIN_H

/* Runs the terminal UI; argv are the whole program's arguments. Returns a sysexits code. */
int ui_main(int argc, char **argv);

#endif
